import type { AttendeeRow } from '../db/attendees.js'
import type { CheckInDetail } from '../db/checkIns.js'
import type { Tx } from '../db/types.js'
import { type CheckInDeps, checkInChip } from './checkIns.js'
import { admitsTicketType, chipGuest, doorTicketTypes, hasGuestList } from './doorGuest.js'
import { type DoorResult, type DoorStation, refuseAtDoor } from './doorResult.js'

type EntryDeps = Omit<CheckInDeps, 'store'>

/**
 * An entry tap at a check-in door, inside the tap's transaction. A chip bound to a guest goes through
 * the guest's rules (admitGuest); a chip bound to nobody at an event with a guest list is refused
 * `not_on_list`. At an event without a list: null, and the caller checks the chip in as before lists.
 */
export async function entryTap(tx: Tx, deps: EntryDeps, p: { station: DoorStation; uid: string; now: number }): Promise<DoorResult | null> {
  const attendee = await chipGuest(tx, p.station.eventId, p.uid)
  if (attendee) return admitGuest(tx, deps, { ...p, attendee, manual: false })
  if (!(await hasGuestList(tx, p.station.eventId))) return null
  return refuseAtDoor(tx, { ...p, attendee: null, reason: 'not_on_list', detail: `chip ${p.uid} is on nobody's ticket for this event` })
}

/**
 * The door's rules for one guest (a tap of their chip, a bind, or staff checking them in by name),
 * inside the caller's transaction: a ticket type the door does not admit is `not_allowed` (counted,
 * no check-in, no mint); a guest whose order is not paid is `not_paid` (counted, no check-in, no mint)
 * unless the event admits unpaid guests; a guest inside already is `already` (the first check-in's time and door); a
 * guest who went out comes back in (`reentry`, one of racing doors records it) unless the event allows
 * no re-entry (`no_reentry`, counted); otherwise a new check-in (one per guest per event: the unique
 * index decides a race between two of their chips at two doors), minting to their wallet as a chip's would.
 */
export async function admitGuest(
  tx: Tx,
  deps: EntryDeps,
  p: { station: DoorStation; attendee: AttendeeRow; uid: string | null; manual: boolean; now: number },
): Promise<DoorResult> {
  const { station, attendee } = p
  if (!admitsTicketType(station, attendee.ticketType)) {
    const detail = `ticket type ${attendee.ticketType} is not admitted at this door (${doorTicketTypes(station)!.join(', ')})`
    return refuseAtDoor(tx, { ...p, reason: 'not_allowed', detail })
  }
  // Unpaid (pretix pending, Hi.Events AWAITING_PAYMENT): refused as those tools' own doors do, unless
  // the event admits unpaid guests; before the check-in lookup, so an order unpaid again stops re-entries too.
  if (attendee.paid === 0 && (await tx.guestbook.getEvent(station.eventId))?.admitUnpaid !== 1)
    return refuseAtDoor(tx, { ...p, reason: 'not_paid', detail: `${attendee.name}'s order (ticket ${attendee.ticketCode}) is not paid` })
  const existing = await tx.checkIns.findActiveByAttendee(station.eventId, attendee.id)
  if (existing) return enterAgain(tx, p, existing)
  const result = await checkInChip(tx, deps, { station, uid: p.uid, attendee, manual: p.manual, now: p.now })
  // Lost the race to another door that checked them in a moment ago: that one's check-in, as a tap after it would see.
  if (result.state === 'already') return enterAgain(tx, p, result.checkIn)
  return { ...result, fresh: true, attendee }
}

/** A guest with a check-in at the event: inside already, or back in after going out (if the event allows). */
async function enterAgain(tx: Tx, p: { station: DoorStation; attendee: AttendeeRow; uid: string | null; now: number }, checkIn: CheckInDetail): Promise<DoorResult> {
  const base = { fresh: false, attendee: p.attendee, queued: null }
  if (checkIn.leftAt === null) return { ...base, state: 'already', checkIn }
  const event = (await tx.guestbook.getEvent(p.station.eventId))!
  if (event.reentry === 0) {
    const detail = `left at ${new Date(checkIn.leftAt).toISOString()}; this event allows no re-entry`
    return refuseAtDoor(tx, { ...p, reason: 'no_reentry', detail, checkIn })
  }
  // Conditional on left_at: of two doors letting the guest back in at once, one records the pass.
  if (!(await tx.checkIns.markBack(checkIn.id))) return { ...base, state: 'already', checkIn: (await tx.checkIns.get(checkIn.id))! }
  await tx.doorLog.addPass({ checkInId: checkIn.id, stationId: p.station.id, direction: 'in', now: p.now })
  return { ...base, state: 'reentry', checkIn: (await tx.checkIns.get(checkIn.id))! }
}
