import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { StationRow } from '../db/stations.js'
import { BODY_ERRORS, errorResponses, security } from '../schemas/common.js'
import { StationTapBody, StationTapResponse, tapRefusals } from '../schemas/taps.js'
import { authenticateStation } from '../stations/stations.js'
import { submitStationTap } from '../stations/submitStationTap.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The station of a valid `x-station-token` (station routes only). */
    station: StationRow | null
  }
}

const stationOf = (request: FastifyRequest): StationRow => {
  // Set by the onRequest hook, which answers 401 otherwise.
  return request.station!
}

/**
 * Station taps: a reader kiosk submits the RF UID it saw and the NDEF URL it
 * read. The URL is verified like a phone tap, and the RF UID must be the UID
 * inside the message (unless the chip uses random UIDs), for the station's team.
 */
const stationTaps: FastifyPluginAsyncZod = async (app) => {
  const { store } = app.services
  app.decorateRequest('station', null)

  app.post('/station/taps', {
    onRequest: async (request) => {
      const header = request.headers['x-station-token']
      request.station = await authenticateStation(store, Array.isArray(header) ? header[0] : header)
    },
    schema: {
      tags: ['taps'],
      summary: "A station tap: verify the URL a reader read, against the chip's RF UID",
      security: security.station,
      body: StationTapBody,
      response: { 200: StationTapResponse, ...errorResponses(...BODY_ERRORS, 401), ...tapRefusals },
    },
    handler: async (request, reply) => {
      const station = stationOf(request)
      const outcome = await submitStationTap({ ...app.services, log: request.log }, station, request.body)
      if (outcome.accepted) {
        const { refId, uid, counter, mode, authenticated, fileData, checkIn } = outcome
        return { success: true as const, refId, uid, counter, mode, authenticated, fileData, ...(checkIn ? { checkIn } : {}) }
      }
      return reply
        .code(outcome.statusCode as 400 | 403 | 404 | 409)
        .send({ success: false as const, error: outcome.reason, message: outcome.message, detail: outcome.detail })
    },
  })
}

export default stationTaps
