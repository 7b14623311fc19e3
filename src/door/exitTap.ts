import type { Tx } from '../db/types.js'
import { chipGuest } from './doorGuest.js'
import type { DoorResult, DoorStation } from './doorResult.js'

/**
 * A tap at an exit door, inside the tap's transaction: a checked-in guest (or, at an event without a
 * list, a checked-in chip) who is inside goes out (`exit`: left_at set and an 'out' pass); one who is
 * not checked in, or out already, is `not_inside`. Conditional on left_at, so of two exit doors (or two
 * gateways) tapping one guest at once, one records the exit.
 */
export async function exitTap(tx: Tx, p: { station: DoorStation; uid: string; now: number }): Promise<DoorResult> {
  const eventId = p.station.eventId
  const attendee = (await chipGuest(tx, eventId, p.uid)) ?? null
  const checkIn = attendee ? await tx.checkIns.findActiveByAttendee(eventId, attendee.id) : await tx.checkIns.findActive(eventId, p.uid)
  const base = { fresh: false, attendee, queued: null }
  if (!checkIn || !(await tx.checkIns.markLeft(checkIn.id, p.now))) {
    const detail = checkIn ? `left already at ${new Date(checkIn.leftAt ?? p.now).toISOString()}` : 'not checked in to this event'
    return { ...base, state: 'not_inside', checkIn: checkIn ?? null, reason: 'not_inside', detail }
  }
  await tx.doorLog.addPass({ checkInId: checkIn.id, stationId: p.station.id, direction: 'out', now: p.now })
  return { ...base, state: 'exit', checkIn: (await tx.checkIns.get(checkIn.id))! }
}
