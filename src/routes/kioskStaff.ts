import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { retryClaimTx } from '../claims/retryClaimTx.js'
import type { StationRow } from '../db/stations.js'
import { authenticateKiosk } from '../kiosk/kioskTokens.js'
import { kioskStation } from '../kiosk/kioskViews.js'
import { dismissAlert, manualCheckIn, retryCheckInTx, staffState, startTestChip, undoLastCheckIn } from '../kiosk/staffActions.js'
import { checkStaffSession, endStaffSession, openStaffSession, PinError } from '../kiosk/staffAuth.js'
import { setStationMode } from '../kiosk/stationModes.js'
import { BODY_ERRORS, errorResponses, security, Success } from '../schemas/common.js'
import {
  ManualCheckInBody,
  ManualCheckInResponse,
  PinErrorBody,
  RetryBody,
  RetryResponse,
  StaffModeBody,
  StaffModeResponse,
  StaffSessionBody,
  StaffSessionResponse,
  StaffStateResponse,
  TestChipBody,
  TestChipResponse,
  UndoResponse,
} from '../schemas/kiosk.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The station of a valid `x-kiosk-token` (kiosk staff routes only). */
    kioskStation: StationRow | null
  }
}

const tags = ['kiosk']
const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}
// Set by the onRequest hook, which answers 401 otherwise.
const stationOf = (request: FastifyRequest): StationRow => request.kioskStation!

/**
 * The staff view's API (/kiosk/staff): every request carries the kiosk page's token
 * (`x-kiosk-token`, checked before anything else); every one but the PIN's also a staff session
 * (`x-staff-session`, checked after validation like an OTP, and counted as use: a session ends
 * after a minute without one). Each action is logged to the station's feed with the time.
 */
const kioskStaff: FastifyPluginAsyncZod = async (app) => {
  const { store, now } = app.services
  const deps = app.services
  app.decorateRequest('kioskStation', null)
  app.addHook('onRequest', async (request) => {
    request.kioskStation = await authenticateKiosk(store, header(request, 'x-kiosk-token'))
  })
  const requireStaff = async (request: FastifyRequest) => {
    await checkStaffSession(store, { stationId: stationOf(request).id, token: header(request, 'x-staff-session'), now: now(), touch: true })
  }

  app.post('/kiosk/staff/session', {
    schema: {
      tags,
      summary: "Open a staff session with the station's PIN (5 wrong lock it: 5 minutes, twice as long at each lock in a row, at most 24 hours)",
      security: security.kiosk,
      body: StaffSessionBody,
      response: { 200: StaffSessionResponse, ...errorResponses(...BODY_ERRORS, 409), 401: PinErrorBody, 423: PinErrorBody },
    },
    handler: async (request, reply) => {
      try {
        const { session, expiresAt } = await openStaffSession(store, { station: stationOf(request), pin: request.body.pin, now: now(), feed: app.services.feed })
        return { success: true as const, session, expiresAt: new Date(expiresAt).toISOString() }
      } catch (error) {
        if (!(error instanceof PinError)) throw error
        return reply.code(error.statusCode as 401 | 423).send({ success: false as const, error: error.code, message: error.message, ...error.extra })
      }
    },
  })

  app.get('/kiosk/staff/state', {
    preHandler: requireStaff,
    schema: { tags, summary: 'Counts per event and station, health, the recent feed (whole events)', security: security.staff, response: { 200: StaffStateResponse, ...errorResponses(401) } },
    handler: async (request) => ({ success: true as const, ...await staffState(deps, { stationId: stationOf(request).id }) }),
  })

  app.post('/kiosk/staff/mode', {
    preHandler: requireStaff,
    schema: { tags, summary: 'Switch the station to check-in (for an event) or close it', security: security.staff, body: StaffModeBody, response: { 200: StaffModeResponse, ...errorResponses(...BODY_ERRORS, 401, 404, 409) } },
    handler: async (request) => {
      const station = await setStationMode(store, { stationId: stationOf(request).id, mode: request.body.mode, eventId: request.body.eventId, now: now(), byStaff: true, feed: app.services.feed })
      return { success: true as const, station: await kioskStation(store, station) }
    },
  })

  app.post('/kiosk/staff/check-in', {
    preHandler: requireStaff,
    schema: { tags, summary: 'Check a chip in by UID (a dead badge), marked manual', security: security.staff, body: ManualCheckInBody, response: { 200: ManualCheckInResponse, ...errorResponses(...BODY_ERRORS, 401, 404, 409) } },
    handler: async (request) => ({ success: true as const, ...await manualCheckIn(deps, { stationId: stationOf(request).id, uid: request.body.uid }) }),
  })

  app.post('/kiosk/staff/undo', {
    preHandler: requireStaff,
    schema: { tags, summary: "Undo the station's last check-in (within 2 minutes); a minted token stays", security: security.staff, response: { 200: UndoResponse, ...errorResponses(...BODY_ERRORS, 401, 404, 409) } },
    handler: async (request) => ({ success: true as const, ...await undoLastCheckIn(deps, { stationId: stationOf(request).id }) }),
  })

  app.post('/kiosk/staff/retry', {
    preHandler: requireStaff,
    schema: { tags, summary: "Queue a failed check-in mint or claim transfer of this station again", security: security.staff, body: RetryBody, response: { 200: RetryResponse, ...errorResponses(...BODY_ERRORS, 401, 404, 409) } },
    handler: async (request) => {
      const p = { stationId: stationOf(request).id, txId: request.body.txId }
      // A check-in's mint (its own, or collected through the hand-off), else a claim's transfer.
      const result = await store.checkIns.findByTx(p.txId) ? await retryCheckInTx(deps, p) : await retryClaimTx(deps, p)
      return { success: true as const, ...result }
    },
  })

  app.post('/kiosk/staff/test-chip', {
    preHandler: requireStaff,
    schema: { tags, summary: 'For a while, accepted taps are test taps: shown, never counted', security: security.staff, body: TestChipBody, response: { 200: TestChipResponse, ...errorResponses(...BODY_ERRORS, 401) } },
    handler: async (request) => {
      const { testUntil } = await startTestChip(deps, { stationId: stationOf(request).id, seconds: request.body.seconds })
      return { success: true as const, testUntil: new Date(testUntil).toISOString() }
    },
  })

  app.post('/kiosk/staff/dismiss', {
    preHandler: requireStaff,
    schema: { tags, summary: 'Dismiss the alert (a replayed or cloned tap) on the check-in screen', security: security.staff, response: { 200: Success, ...errorResponses(...BODY_ERRORS, 401) } },
    handler: async (request) => {
      await dismissAlert(deps, { stationId: stationOf(request).id })
      return { success: true as const }
    },
  })

  app.post('/kiosk/staff/end', {
    preHandler: requireStaff,
    schema: { tags, summary: 'End the staff session', security: security.staff, response: { 200: Success, ...errorResponses(...BODY_ERRORS, 401) } },
    handler: async (request) => {
      await endStaffSession(store, { token: header(request, 'x-staff-session')!, now: now() })
      return { success: true as const }
    },
  })
}

export default kioskStaff
