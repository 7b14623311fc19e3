import type { AttendeeRow } from '../db/attendees.js'
import type { StationRow } from '../db/stations.js'
import type { Repositories } from '../db/types.js'
import { admitGuest } from '../door/admitEntry.js'
import { armBindDoor, type BindTarget } from '../door/bindWristband.js'
import type { DoorState } from '../door/doorResult.js'
import { type DoorStats, doorStats } from '../door/doorStats.js'
import { BadRequestError, ConflictError, NotFoundError } from '../errors.js'
import type { CheckInSummary } from '../wire/feedProtocol.js'
import { checkInSummary } from '../door/checkIns.js'
import { staffName } from '../door/attendeeView.js'
import { ticketCodeCandidates } from '../door/scannedCode.js'
import { SEARCH_MIN_CHARS, searchTermLongEnough } from '../schemas/kiosk.js'
import { freshStation, type KioskDeps, manualSummary, staffRow } from './staffActions.js'
import { appendCheckInRows, isCheckInStation } from '../stations/recordAcceptedTap.js'

/** Staff search: at most this many answers (the least is the schema's, SEARCH_MIN_CHARS). */
export const SEARCH_MAX_RESULTS = 20

/** A guest as the staff view lists them: everything, their chips, their check-in and whether they are inside. */
export type StaffAttendee = {
  id: number
  name: string
  email: string | null
  ticketType: string
  ticketCode: string
  note: string | null
  needsAttention: boolean
  /** false: the order is not paid, the door refuses them not_paid (unless the event admits unpaid guests). */
  paid: boolean
  chips: string[]
  checkIn: CheckInSummary | null
  inside: boolean
}

export async function staffAttendee(store: Repositories, row: AttendeeRow): Promise<StaffAttendee> {
  const [chips, checkIn] = await Promise.all([store.attendeeChips.ofAttendee(row.id), store.checkIns.findActiveByAttendee(row.eventId, row.id)])
  return {
    id: row.id,
    name: staffName(row),
    email: row.email,
    ticketType: row.ticketType,
    ticketCode: row.ticketCode,
    note: row.note,
    needsAttention: row.needsAttention === 1,
    paid: row.paid === 1,
    chips: chips.map((c) => c.chipUid),
    checkIn: checkIn ? await checkInSummary(store, checkIn) : null,
    inside: checkIn !== undefined && checkIn.leftAt === null,
  }
}

function eventOf(station: StationRow): number {
  if (station.eventId === null) throw new ConflictError('station_no_event', 'The station has no event: set its mode and event first')
  return station.eventId
}

/**
 * GET /kiosk/staff/attendees: the station's event's guests whose name, email or ticket code contains
 * `q` (folded: case and accents), by name, 20 at most. A scanned QR payload that carries a code (a
 * Luma check-in URL's `pk`: scannedCode.ts) puts the guest with that exact code first.
 *
 * @throws BadRequestError query_too_short; ConflictError station_no_event
 */
export async function searchAttendees(deps: KioskDeps, p: { stationId: number; q: string }): Promise<StaffAttendee[]> {
  const q = p.q.trim()
  // The route's schema refused it already; the same rule here for any other caller.
  if (!searchTermLongEnough(q)) throw new BadRequestError('query_too_short', `Type ${SEARCH_MIN_CHARS} characters at least of a name, an email or a ticket code (accents and blanks do not count)`)
  const station = await freshStation(deps.store, p.stationId)
  const eventId = eventOf(station)
  const scanned: AttendeeRow[] = []
  for (const code of ticketCodeCandidates(q).slice(1)) {
    const row = await deps.store.attendees.findByCode(eventId, code)
    if (row) scanned.push(row)
  }
  const rows = [...scanned, ...(await deps.store.attendees.search(eventId, q, SEARCH_MAX_RESULTS))]
  const unique = rows.filter((row, i) => rows.findIndex((other) => other.id === row.id) === i).slice(0, SEARCH_MAX_RESULTS)
  return Promise.all(unique.map((row) => staffAttendee(deps.store, row)))
}

async function guestOf(store: Repositories, station: StationRow & { eventId: number }, attendeeId: number): Promise<AttendeeRow> {
  const guest = await store.attendees.get(attendeeId)
  if (!guest || guest.eventId !== station.eventId) throw new NotFoundError('attendee_not_found', `No guest of this door's event has id ${attendeeId}`)
  return guest
}

/**
 * POST /kiosk/staff/attendees/check-in: a guest found by search checked in by hand, marked manual,
 * by the same door rules as a tap (ticket type, re-entry; one check-in per guest), with no chip.
 *
 * @throws ConflictError station_not_checkin; NotFoundError attendee_not_found
 */
export function attendeeCheckIn(deps: KioskDeps, p: { stationId: number; attendeeId: number }): Promise<{ state: DoorState; checkIn: CheckInSummary | null }> {
  const now = deps.now()
  return deps.store.tx(async (tx) => {
    const station = await freshStation(tx, p.stationId)
    if (!isCheckInStation(station)) throw new ConflictError('station_not_checkin', 'The station is not an entry door: set it to checkin or bind with its event first')
    const guest = await guestOf(tx, station, p.attendeeId)
    const result = await admitGuest(tx, deps, { station, attendee: guest, uid: null, manual: true, now })
    const { summary: checkIn } = await appendCheckInRows(tx, station.id, result, { uid: null, counter: null }, now)
    await staffRow(tx, station.id, { action: 'manual_check_in', summary: manualSummary(result, `${guest.name} (${guest.ticketCode})`, checkIn), ...(checkIn ? { checkInId: checkIn.id } : {}) }, now)
    return { state: result.state, checkIn }
  })
}

/**
 * POST /kiosk/staff/bind: arms this bind door with a guest (by ticket code or id) for its next tap.
 *
 * @throws ConflictError station_not_bind / already_bound / not_allowed; NotFoundError attendee_not_found
 */
export function armBind(deps: KioskDeps, p: { stationId: number; target: BindTarget; rebind: boolean }): Promise<{ attendee: StaffAttendee; rebind: boolean; expiresAt: string }> {
  const now = deps.now()
  return deps.store.tx(async (tx) => {
    const station = await freshStation(tx, p.stationId)
    if (station.mode !== 'bind' || station.eventId === null) throw new ConflictError('station_not_bind', 'The station is not a bind door: set its mode to bind with its event first')
    const { attendee, expiresAt } = await armBindDoor(tx, { station: { ...station, eventId: station.eventId }, target: p.target, rebind: p.rebind, now })
    const summary = `${p.rebind ? 'rebind' : 'bind'}: the next tap binds a wristband to ${attendee.name} (${attendee.ticketCode})`
    await staffRow(tx, station.id, { action: p.rebind ? 'rebind' : 'bind', summary }, now)
    return { attendee: await staffAttendee(tx, attendee), rebind: p.rebind, expiresAt: new Date(expiresAt).toISOString() }
  })
}

/** POST /kiosk/staff/bind/cancel: the bind door's next tap binds nobody. */
export async function cancelBind(deps: KioskDeps, p: { stationId: number }): Promise<void> {
  const now = deps.now()
  await deps.store.tx(async (tx) => {
    const station = await freshStation(tx, p.stationId)
    if (station.bindAttendeeId === null) return
    await tx.stations.arm(station.id, null)
    await staffRow(tx, station.id, { action: station.bindRebind === 1 ? 'rebind' : 'bind', summary: 'cancelled: the next tap binds nobody' }, now)
  })
}

/** GET /kiosk/staff/stats: the station's event's door numbers. @throws ConflictError station_no_event */
export async function staffDoorStats(deps: KioskDeps, p: { stationId: number }): Promise<DoorStats> {
  const station = await freshStation(deps.store, p.stationId)
  return doorStats(deps.store, eventOf(station), deps.now())
}
