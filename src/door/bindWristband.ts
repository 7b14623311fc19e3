import type { AttendeeRow } from '../db/attendees.js'
import type { Tx } from '../db/types.js'
import { ConflictError, NotFoundError } from '../errors.js'
import type { CheckInDeps } from './checkIns.js'
import { admitGuest } from './admitEntry.js'
import { admitsTicketType, chipGuest, scannedGuest } from './doorGuest.js'
import type { DoorResult, DoorStation } from './doorResult.js'

/** A bind door stays armed this long: the guest in front of staff taps within seconds, or staff arm again. */
export const BIND_ARMED_MS = 2 * 60_000

/** The guest staff picked for the next tap: by the ticket code the scanner typed, or from a search. */
export type BindTarget = { ticketCode: string } | { attendeeId: number }

/**
 * Arms a bind door with a guest, inside the caller's transaction: the door's next tap (on any gateway:
 * the arming is the station row's) binds that wristband to them, until `BIND_ARMED_MS` from now. A
 * guest who has a chip already needs `rebind` (a lost badge): that tap then unbinds their chips first.
 *
 * @throws NotFoundError attendee_not_found; ConflictError already_bound / not_allowed
 */
export async function armBindDoor(tx: Tx, p: { station: DoorStation; target: BindTarget; rebind: boolean; now: number }): Promise<{ attendee: AttendeeRow; expiresAt: number }> {
  const eventId = p.station.eventId
  // A scanner types the QR code's whole text (Luma's is a URL): scannedGuest finds the code in it.
  const found = 'ticketCode' in p.target ? await scannedGuest(tx, eventId, p.target.ticketCode) : await tx.attendees.get(p.target.attendeeId)
  if (!found || found.eventId !== eventId) {
    const what = 'ticketCode' in p.target ? `ticket code ${p.target.ticketCode}` : `attendee ${p.target.attendeeId}`
    throw new NotFoundError('attendee_not_found', `No guest of this door's event has ${what}`)
  }
  const chips = await tx.attendeeChips.ofAttendee(found.id)
  if (chips.length > 0 && !p.rebind)
    throw new ConflictError('already_bound', `${found.name} has a wristband already (${chips.map((c) => c.chipUid).join(', ')}): rebind to replace it`)
  if (!admitsTicketType(p.station, found.ticketType)) throw new ConflictError('not_allowed', `Ticket type ${found.ticketType} is not admitted at this door`)
  const expiresAt = p.now + BIND_ARMED_MS
  await tx.stations.arm(p.station.id, { attendeeId: found.id, rebind: p.rebind, until: expiresAt })
  return { attendee: found, expiresAt }
}

/** Thrown inside bindTap's savepoint so a rebind's unbinding is undone with the bind that lost. */
class BindLost extends Error {}

/**
 * A tap at a bind door, inside the tap's transaction. Nothing armed (or expired, or taken by another
 * tap a moment ago): `bind_waiting`. A wristband bound to another guest: `bind_taken`, naming that
 * guest for staff, and the door stays armed for the right wristband. Otherwise the tap takes the arming
 * (a conditional UPDATE: one tap binds), a rebind unbinds the guest's chips (the old one stops working
 * at once), the chip is bound and the guest checked in by the door's rules (`bound`). The same ticket
 * bound at two doors at once: the unique index on the guest's door binding lets one insert, and the
 * other tap is `bind_taken`.
 */
export async function bindTap(tx: Tx, deps: Omit<CheckInDeps, 'store'>, p: { station: DoorStation; uid: string; now: number }): Promise<DoorResult> {
  const { station, uid, now } = p
  const eventId = station.eventId
  const waiting: DoorResult = { state: 'bind_waiting', checkIn: null, fresh: false, attendee: null, queued: null, reason: 'bind_waiting', detail: 'no guest chosen: scan a ticket or search first' }
  const armedId = station.bindAttendeeId
  if (armedId === null || station.bindUntil === null || station.bindUntil <= now) return waiting
  const owner = await chipGuest(tx, eventId, uid)
  if (owner && owner.id !== armedId) return taken(owner, `wristband ${uid} belongs to ${owner.name} (${owner.ticketCode})`)
  if (!(await tx.stations.takeArmed(station.id, armedId, now))) return waiting
  const attendee = (await tx.attendees.get(armedId))!
  if (!owner) {
    const bound = await tx
      .tx(async (sp) => {
        if (station.bindRebind === 1) await sp.attendeeChips.unbindAttendee(attendee.id, now)
        if ((await sp.attendeeChips.bind({ eventId, attendeeId: attendee.id, chipUid: uid, stationId: station.id, now })) === null) throw new BindLost()
        return true
      })
      .catch((error: unknown) => {
        if (error instanceof BindLost) return false
        throw error
      })
    if (!bound) {
      const holder = await chipGuest(tx, eventId, uid)
      return holder
        ? taken(holder, `wristband ${uid} was bound to ${holder.name} a moment ago`)
        : taken(attendee, `${attendee.name} got a wristband at another door a moment ago`)
    }
  }
  const entry = await admitGuest(tx, deps, { station, attendee, uid, manual: false, now })
  if (entry.state === 'accepted' || entry.state === 'already' || entry.state === 'reentry') return { ...entry, state: 'bound' }
  return entry
}

/** bind_taken: the tap binds nothing; whose it is goes to staff only (boundTo), the public screen gets no name. */
function taken(owner: AttendeeRow, detail: string): DoorResult {
  return { state: 'bind_taken', checkIn: null, fresh: false, attendee: null, queued: null, reason: 'bind_taken', detail, boundTo: owner.name }
}
