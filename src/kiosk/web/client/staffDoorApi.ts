/*
 * The staff view's door API (issue 19): the answers' shapes, inferred from the zod schemas the
 * gateway validates them with (src/schemas/kiosk.ts), so the page and the routes cannot drift apart.
 * Type-only imports: nothing of zod reaches the browser bundle.
 */
import type { z } from 'zod'
import type {
  AttendeeCheckInResponse as AttendeeCheckInSchema,
  AttendeeSearchResponse,
  BindResponse as BindSchema,
  DoorStatsResponse,
  StaffAttendee as StaffAttendeeSchema,
} from '../../../schemas/kiosk.js'

/** A guest as staff see them (GET /kiosk/staff/attendees). */
export type StaffAttendee = z.infer<typeof StaffAttendeeSchema>
export type SearchResponse = z.infer<typeof AttendeeSearchResponse>
/** POST /kiosk/staff/attendees/check-in: the same door rules as a tap. */
export type AttendeeCheckInResponse = z.infer<typeof AttendeeCheckInSchema>
/** POST /kiosk/staff/bind: the station waits for the next tap to bind this guest (until expiresAt). */
export type BindResponse = z.infer<typeof BindSchema>
export type Armed = BindResponse['armed']
/** GET /kiosk/staff/stats: the event's numbers, every door and gateway. */
export type StatsResponse = z.infer<typeof DoorStatsResponse>
export type StaffStats = StatsResponse['stats']

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
