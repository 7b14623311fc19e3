import type { AttendeeRow } from '../db/attendees.js'
import type { DoorRefusalReason } from '../db/doorLog.js'
import type { StationRow } from '../db/stations.js'
import type { Tx } from '../db/types.js'
import type { CheckInResult } from './checkIns.js'

/** What a door did with a tap or a staff check-in (TapEventData.state's door states). */
export type DoorState = 'accepted' | 'already' | 'reentry' | 'no_reentry' | 'not_allowed' | 'not_on_list' | 'not_paid' | 'exit' | 'not_inside' | 'bound' | 'bind_taken' | 'bind_waiting'

/** A station that is a door of an event (check-in, bind or exit mode, with its event). */
export type DoorStation = StationRow & { eventId: number }

/**
 * The outcome at a door. `checkIn` is the check-in made or found (null when refused before one);
 * `fresh` says this call made it (its mint may wait for a wallet through the claim hand-off).
 */
export type DoorResult = Omit<CheckInResult, 'state' | 'checkIn'> & {
  state: DoorState
  checkIn: CheckInResult['checkIn'] | null
  fresh: boolean
  attendee: AttendeeRow | null
  /** Staff only: why the door said no (door_refusals' reason, or a bind refusal's), in words. */
  reason?: string
  detail?: string
  /** bind_taken: whose wristband it is (staff only). */
  boundTo?: string
}

/**
 * A door's "no" that is counted apart (door_refusals): never a check-in, never a mint. Inside the
 * tap's (or the staff action's) transaction.
 */
export async function refuseAtDoor(
  tx: Tx,
  p: { station: DoorStation; attendee: AttendeeRow | null; uid: string | null; reason: DoorRefusalReason; detail: string; checkIn?: DoorResult['checkIn']; now: number },
): Promise<DoorResult> {
  await tx.doorLog.addRefusal({ eventId: p.station.eventId, stationId: p.station.id, attendeeId: p.attendee?.id ?? null, chipUid: p.uid, reason: p.reason, now: p.now })
  return { state: p.reason, checkIn: p.checkIn ?? null, fresh: false, attendee: p.attendee, queued: null, reason: p.reason, detail: p.detail }
}
