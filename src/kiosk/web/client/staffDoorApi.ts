/*
 * The staff view's door API (issue 19 brief, "Staff API"): the answers' shapes as the browser reads
 * them. Typed here from the brief while the routes are written; src/schemas/kiosk.ts is their source
 * on the server.
 */
import type { CheckInSummary, KioskState } from '../../../feed/protocol.js'

/** A guest as staff see them (GET /kiosk/staff/attendees). */
export type StaffAttendee = {
  id: number
  name: string
  email: string | null
  ticketType: string
  ticketCode: string
  note: string | null
  needsAttention: boolean
  /** The wristbands / badges bound to the guest now. */
  chips: string[]
  checkIn: CheckInSummary | null
  /** Checked in and not gone out. */
  inside: boolean
}

export type SearchResponse = { success: true; attendees: StaffAttendee[] }

/** POST /kiosk/staff/attendees/check-in: the same door rules as a tap. */
export type AttendeeCheckInResponse = { success: true; state: KioskState; checkIn: CheckInSummary | null }

/** POST /kiosk/staff/bind: the station waits for the next tap to bind this guest (until expiresAt). */
export type Armed = { attendee: StaffAttendee; rebind: boolean; expiresAt: string }
export type BindResponse = { success: true; armed: Armed }

/** GET /kiosk/staff/stats: the event's numbers, every door and gateway. */
export type StaffStats = {
  eventId: number
  /** null: the event has no guest list. */
  expected: number | null
  checkedIn: number
  percent: number | null
  inside: number
  refused: { notAllowed: number; noReentry: number; notOnList: number }
  perType: { ticketType: string; expected: number; checkedIn: number }[]
  arrivals: { at: string; count: number }[]
  since: string | null
}
export type StatsResponse = { success: true; stats: StaffStats }

/** The staff view's authenticated call (kiosk token and staff session added by the caller). */
export type StaffCall = (method: 'GET' | 'POST', path: string, body?: Record<string, unknown>) => Promise<Record<string, unknown>>

/** The same for a download: the file and the name the gateway gave it (Content-Disposition). */
export type StaffFetchFile = (path: string) => Promise<{ blob: Blob; filename: string | null }>

export type ApiError = { success: false; error: string; message: string; triesLeft?: number; lockedUntil?: string | number }

/** A refusal from the gateway: its HTTP status and body (`error` is the stable code). */
export class StaffApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiError,
  ) {
    super(body.message)
  }
}
