import { Readable } from 'node:stream'
import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { attendeesDownload } from '../attendees/exportAttendees.js'
import { retryClaimTx } from '../claims/retryClaimTx.js'
import type { StationRow } from '../db/stations.js'
import { armBind, attendeeCheckIn, cancelBind, searchAttendees, staffDoorStats } from '../kiosk/doorStaff.js'
import { ConflictError } from '../errors.js'
import { authenticateKiosk } from '../kiosk/kioskTokens.js'
import { kioskStation } from '../kiosk/kioskViews.js'
import { dismissAlert, manualCheckIn, retryCheckInTx, staffState, startTestChip, undoLastCheckIn } from '../kiosk/staffActions.js'
import { checkStaffSession, endStaffSession, openStaffSession, PinError } from '../kiosk/staffAuth.js'
import { setStationMode } from '../kiosk/stationModes.js'
import { AttendeeExport, ExportAttendeesQuery } from '../schemas/attendees.js'
import { BODY_ERRORS, errorResponses, security, Success } from '../schemas/common.js'
import {
  AttendeeCheckInBody,
  AttendeeCheckInResponse,
  AttendeeSearchQuery,
  AttendeeSearchResponse,
  BindBody,
  BindResponse,
  DoorStatsResponse,
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
        const { session, expiresAt } = await openStaffSession(store, { station: stationOf(request), pin: request.body.pin, now: now() })
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
    schema: {
      tags,
      summary: "Switch the station's mode (a door, claim, closed) for its own event: another event is the operator's (403 staff_event_locked)",
      security: security.staff,
      body: StaffModeBody,
      response: { 200: StaffModeResponse, ...errorResponses(...BODY_ERRORS, 401, 403, 404, 409) },
    },
    handler: async (request) => {
      const station = await setStationMode(store, { stationId: stationOf(request).id, mode: request.body.mode, eventId: request.body.eventId, now: now(), byStaff: true })
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

  // ---- the door (issue 19) ----

  app.get('/kiosk/staff/attendees', {
    preHandler: requireStaff,
    schema: {
      tags,
      summary: "Search the station's event's guests by name, email or ticket code (2 characters at least; 20 answers at most)",
      security: security.staff,
      querystring: AttendeeSearchQuery,
      response: { 200: AttendeeSearchResponse, ...errorResponses(400, 401, 409) },
    },
    handler: async (request) => ({ success: true as const, attendees: await searchAttendees(deps, { stationId: stationOf(request).id, q: request.query.q }) }),
  })

  app.post('/kiosk/staff/attendees/check-in', {
    preHandler: requireStaff,
    schema: {
      tags,
      summary: 'Check a guest found by search in by hand, by the door\'s rules (ticket type, re-entry)',
      security: security.staff,
      body: AttendeeCheckInBody,
      response: { 200: AttendeeCheckInResponse, ...errorResponses(...BODY_ERRORS, 401, 404, 409) },
    },
    handler: async (request) => ({ success: true as const, ...await attendeeCheckIn(deps, { stationId: stationOf(request).id, attendeeId: request.body.attendeeId }) }),
  })

  app.post('/kiosk/staff/bind', {
    preHandler: requireStaff,
    schema: {
      tags,
      summary: "Arm this bind door with a guest (ticket code or id): its next tap, within 2 minutes, binds that wristband and checks them in",
      security: security.staff,
      body: BindBody,
      response: { 200: BindResponse, ...errorResponses(...BODY_ERRORS, 401, 404, 409) },
    },
    handler: async (request) => {
      const { rebind, ...target } = request.body
      return { success: true as const, armed: await armBind(deps, { stationId: stationOf(request).id, target, rebind: rebind ?? false }) }
    },
  })

  app.post('/kiosk/staff/bind/cancel', {
    preHandler: requireStaff,
    schema: { tags, summary: "Disarm this bind door: its next tap binds nobody", security: security.staff, response: { 200: Success, ...errorResponses(...BODY_ERRORS, 401) } },
    handler: async (request) => {
      await cancelBind(deps, { stationId: stationOf(request).id })
      return { success: true as const }
    },
  })

  app.get('/kiosk/staff/stats', {
    preHandler: requireStaff,
    schema: {
      tags,
      summary: "The station's event's door numbers, every door and gateway: checked in / expected, inside, refused, per ticket type, arrivals per 5 minutes",
      security: security.staff,
      response: { 200: DoorStatsResponse, ...errorResponses(401, 409) },
    },
    handler: async (request) => ({ success: true as const, stats: await staffDoorStats(deps, { stationId: stationOf(request).id }) }),
  })

  app.get('/kiosk/staff/attendees/export', {
    preHandler: requireStaff,
    schema: {
      tags,
      summary: "The station's event's guest list with what happened at the door, as a download (the same as the CLI's export)",
      security: security.staff,
      querystring: ExportAttendeesQuery,
      response: {
        200: {
          description: 'text/csv (format=csv, the default) or application/json (format=json), as a download',
          content: { 'text/csv': { schema: z.string() }, 'application/json': { schema: AttendeeExport } },
        },
        ...errorResponses(400, 401, 409),
      },
    },
    handler: async (request, reply) => {
      const station = stationOf(request)
      if (station.eventId === null) throw new ConflictError('station_no_event', 'The station has no event: set its mode and event first')
      const download = await attendeesDownload(store, { eventId: station.eventId, teamId: station.teamId, now: now() }, request.query.format ?? 'csv')
      // A stream is sent as it is read (the CSV is no JSON; the JSON is written already), as GET /events/:eventId/attendees/export does.
      return reply
        .type(download.contentType)
        .header('content-disposition', `attachment; filename="${download.filename}"`)
        .send(Readable.from(download.body) as never)
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
