import type { Address } from 'viem'
import { claimSummary } from '../claims/claimViews.js'
import { openGuestbookClaim, openTokenClaim } from '../claims/openClaim.js'
import type { StationRow } from '../db/stations.js'
import type { Tx } from '../db/types.js'
import { entryTap } from '../door/admitEntry.js'
import { attendeeView } from '../door/attendeeView.js'
import { bindTap } from '../door/bindWristband.js'
import type { DoorResult, DoorState, DoorStation } from '../door/doorResult.js'
import { exitTap } from '../door/exitTap.js'
import { type CheckInDeps, type CheckInResult, checkInChip, checkInSummary } from '../door/checkIns.js'
import { type AttendeeView, type CheckInSummary, publicAttendee, type TapEventData } from '../wire/feedProtocol.js'
import { watchTx } from '../feed/txProgress.js'

/** A copied or cloned URL, not a second visit: an alert for staff. */
const REPLAY_REASONS = new Set(['counter_replay', 'uid_mismatch', 'mac_mismatch'])

export function refusedTapState(reason: string): TapEventData['state'] {
  if (REPLAY_REASONS.has(reason)) return 'replay'
  if (reason === 'unknown_chip') return 'unknown'
  return 'refused'
}

/**
 * What the station's answer adds to an accepted tap (POST /station/taps `checkIn`). The station is
 * a screen in a queue too: its guest is the public view (first name, ticket type), never the email.
 */
export type TapCheckIn = { state: DoorState; test: boolean; checkIn: CheckInSummary | null; attendee?: AttendeeView }

/** What a door did, as appendCheckInRows writes it: a chip check-in's result, or a door's (src/door). */
type DoorRowResult = CheckInResult | DoorResult

/**
 * The feed rows of a check-in or a door's answer (a tap's or a manual one): the `tap` row with its
 * summary and guest (staff see all of the guest and why a door said no; publicView keeps the first
 * name and ticket type), and the mint's `queued` step when one was queued (the outbox row then names
 * this station as its watcher). Inside the caller's transaction (`tx`).
 */
export async function appendCheckInRows(
  tx: Tx,
  stationId: number,
  result: DoorRowResult,
  tap: Omit<TapEventData, 'state' | 'checkIn'>,
  now: number,
): Promise<{ summary: CheckInSummary | null; attendee: AttendeeView | undefined }> {
  const summary = result.checkIn && (await checkInSummary(tx, result.checkIn))
  const door = 'fresh' in result ? result : undefined
  const attendee = door?.attendee ? attendeeView(door.attendee, (await tx.guestbook.getEvent(door.attendee.eventId))!) : undefined
  const detail = result.mintSkipped ?? door?.detail
  await tx.stationEvents.append(
    stationId,
    'tap',
    {
      ...tap,
      state: result.state,
      ...(summary ? { checkIn: summary } : {}),
      ...(attendee ? { attendee } : {}),
      ...(door?.reason ? { reason: door.reason } : {}),
      ...(detail ? { detail } : {}),
      ...(door?.boundTo ? { boundTo: door.boundTo } : {}),
    },
    now,
  )
  if (result.queued && result.checkIn) await watchTx(tx, result.queued.txId, { stationId, checkInId: result.checkIn.id, claimId: null }, { hash: result.queued.hash, now })
  return { summary, attendee }
}

/** A check-in summary as the public screen (and the station) may see it: the guest's public view only. */
export function publicSummary(summary: CheckInSummary | null): CheckInSummary | null {
  return summary && (summary.attendee ? { ...summary, attendee: publicAttendee(summary.attendee) } : summary)
}

/** The tap's own fields of its feed row (staff only, but for the state). */
export type TapRowBase = Omit<TapEventData, 'state' | 'checkIn' | 'claim'>

export type RecordedTap = {
  result: TapCheckIn | null
  /**
   * A claim station's tap whose address the gateway knows: the caller starts the transfer after
   * this commit (it checks the recipient on chain first) and then appends the tap's row.
   */
  known?: { claimId: number; recipient: Address; tapRow: TapRowBase }
  /** The claim card's image (a /media/<key> path): the caller has it fetched now, for the pages and for offline. */
  image?: string | null
}

/**
 * An accepted tap at a station with a row: in check-in mode, the check-in (or the first one's
 * time and station); in claim mode, a claim of the chip's token (src/claims); in the test-chip
 * window, a `test` tap that counts nothing; otherwise (no mode) a plain accepted tap. Inside the
 * tap's own transaction (`tx`, verifyTapBatched's consequence), so the tap never commits without
 * them; the store tells the kiosks and the relayer once it commits.
 */
export async function recordAcceptedTap(
  tx: Tx,
  deps: Omit<CheckInDeps, 'store'>,
  stationId: number,
  tap: { uid: string; counter: number | null; readerName?: string; refId: string },
): Promise<RecordedTap> {
  const now = deps.now()
  const station = (await tx.stations.get(stationId))!
  const base: TapRowBase = { uid: tap.uid, counter: tap.counter, ...(tap.readerName ? { readerName: tap.readerName } : {}) }
  if (station.testUntil !== null && station.testUntil > now) {
    await tx.stationEvents.append(station.id, 'tap', { ...base, state: 'accepted', test: true }, now)
    return { result: { state: 'accepted', test: true, checkIn: null } }
  }
  if (station.mode === 'claim') return recordClaimTap(tx, deps, station, base, tap.refId, now)
  if (!isDoorStation(station)) {
    await tx.stationEvents.append(station.id, 'tap', { ...base, state: 'accepted' }, now)
    return { result: null }
  }
  const door = { station, uid: tap.uid, now }
  // An exit or bind door, or an entry door of an event with a guest list, follows the door's rules
  // (src/door); an entry door of an event without a list checks the chip in as it always did.
  const result =
    station.mode === 'exit' ? await exitTap(tx, door) : station.mode === 'bind' ? await bindTap(tx, deps, door) : await entryTap(tx, deps, door)
  const checkIn = result ?? { ...(await checkInChip(tx, deps, { station, uid: tap.uid, manual: false, now })), fresh: false }
  const fresh = result === null ? checkIn.state === 'accepted' : result.fresh
  // No wallet on record: the event's token waits for an address through the claim hand-off.
  const claim =
    fresh && checkIn.checkIn && checkIn.queued === null && checkIn.checkIn.mintId === null && checkIn.mintSkipped === undefined && deps.config && deps.chains
      ? await openGuestbookClaim({ tx, otpTtlMs: deps.config.otpTtlSeconds * 1000 }, { station, uid: tap.uid, refId: tap.refId, checkInId: checkIn.checkIn.id, now })
      : null
  const claimed = claim ? await claimSummary(tx, claim, now) : undefined
  const { summary, attendee } = await appendCheckInRows(tx, station.id, checkIn, { ...base, ...(claimed ? { claim: claimed } : {}) }, now)
  const guest = attendee ? { attendee: publicAttendee(attendee) } : {}
  return { result: { state: checkIn.state, test: false, checkIn: publicSummary(summary), ...guest }, image: claimed?.product.image }
}

/** A claim station's tap, inside recordAcceptedTap's transaction. */
async function recordClaimTap(tx: Tx, deps: Omit<CheckInDeps, 'store'>, station: StationRow, base: TapRowBase, refId: string, now: number): Promise<RecordedTap> {
  if (!deps.config || !deps.chains) {
    await tx.stationEvents.append(station.id, 'tap', { ...base, state: 'refused', reason: 'chain_unavailable', detail: 'this gateway cannot sign transactions' }, now)
    return { result: null }
  }
  const opened = await openTokenClaim({ tx, otpTtlMs: deps.config.otpTtlSeconds * 1000 }, { station, uid: base.uid!, refId, now })
  if ('nothing' in opened) {
    await tx.stationEvents.append(station.id, 'tap', { ...base, state: 'nothing', reason: opened.nothing, detail: opened.detail }, now)
    return { result: null }
  }
  const early = opened.allowedAt === undefined ? {} : { step: 'early' as const, allowedAt: opened.allowedAt }
  const summary = await claimSummary(tx, opened.claim, now, early)
  if (opened.known) return { result: null, known: { claimId: opened.claim.id, recipient: opened.known, tapRow: base }, image: summary.product.image }
  await tx.stationEvents.append(station.id, 'tap', { ...base, state: 'product', claim: summary }, now)
  return { result: null, image: summary.product.image }
}

/** An entry door of its event: check-in, or bind (a bind door checks the guest in as it binds). */
export const isCheckInStation = (station: StationRow): station is DoorStation => (station.mode === 'checkin' || station.mode === 'bind') && station.eventId !== null

/** A door of its event: an entry door, or an exit door. */
export const isDoorStation = (station: StationRow): station is DoorStation => isCheckInStation(station) || (station.mode === 'exit' && station.eventId !== null)
