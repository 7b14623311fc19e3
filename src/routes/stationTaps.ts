import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { StationRow } from '../db/stations.js'
import { StationTapBody, StationTapResponse, StationTokenHeader, tapErrorResponses } from '../schemas/taps.js'
import { authenticateStation } from '../stations/stations.js'
import { TapRejectedError } from '../taps/tapErrors.js'
import { verifyTapBatched } from '../taps/verifyTap.js'

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
  const { store, keyring, now } = app.services
  app.decorateRequest('station', null)

  app.post('/station/taps', {
    onRequest: async (request) => {
      const header = request.headers['x-station-token']
      request.station = authenticateStation(store, Array.isArray(header) ? header[0] : header)
    },
    schema: {
      tags: ['taps'],
      summary: "A station tap: verify the URL a reader read, against the chip's RF UID",
      headers: StationTokenHeader,
      body: StationTapBody,
      response: { 200: StationTapResponse, ...tapErrorResponses },
    },
    handler: async (request, reply) => {
      const station = stationOf(request)
      const { rfUid, url, readerName, readAt } = request.body
      const log = { stationId: station.id, readerName, readAt }
      try {
        const tap = await verifyTapBatched(store, keyring, { url, source: 'station', rfUid, teamId: station.teamId, now: now() })
        request.log.info({ ...log, uid: tap.uid, counter: tap.counter, mode: tap.mode }, 'station tap accepted')
        const { refId, uid, counter, mode, authenticated, fileData } = tap
        return { success: true as const, refId, uid, counter, mode, authenticated, fileData }
      } catch (error) {
        if (!(error instanceof TapRejectedError)) throw error
        request.log.info({ ...log, uid: error.uid, reason: error.reason }, 'station tap refused')
        return reply
          .code(error.statusCode as 400 | 403 | 404 | 409)
          .send({ success: false as const, error: error.reason, message: error.message, detail: error.detail })
      }
    },
  })
}

export default stationTaps
