import type { StationRow } from '../db/stations.js'
import type { Store } from '../db/store.js'
import { type CheckInDeps, type CheckInResult, checkInChip, checkInSummary } from './checkIns.js'
import type { CheckInSummary, TapEventData } from './protocol.js'

/** A copied or cloned URL, not a second visit: an alert for staff. */
const REPLAY_REASONS = new Set(['counter_replay', 'uid_mismatch', 'mac_mismatch'])

export function refusedTapState(reason: string): TapEventData['state'] {
  if (REPLAY_REASONS.has(reason)) return 'replay'
  if (reason === 'unknown_chip') return 'unknown'
  return 'refused'
}

/** What the station's answer adds to an accepted tap (POST /station/taps `checkIn`). */
export type TapCheckIn = { state: 'accepted' | 'already'; test: boolean; checkIn: CheckInSummary | null }

/**
 * The feed rows of a check-in (a tap's or a manual one): the `tap` row with its summary, and the
 * mint's `queued` step when one was queued. Inside the caller's store.tx.
 */
export function appendCheckInRows(store: Store, stationId: number, result: CheckInResult, tap: Omit<TapEventData, 'state' | 'checkIn'>, now: number): CheckInSummary {
  const summary = checkInSummary(store, result.checkIn)
  store.stationEvents.append(stationId, 'tap', { ...tap, state: result.state, checkIn: summary, ...(result.mintSkipped ? { detail: result.mintSkipped } : {}) }, now)
  if (result.queued)
    store.stationEvents.append(stationId, 'tx', { txId: result.queued.txId, checkInId: result.checkIn.id, status: 'queued', hash: result.queued.hash }, now)
  return summary
}

/**
 * An accepted tap at a station with a row: in check-in mode, the check-in (or the first one's
 * time and station); in the test-chip window, a `test` tap that counts nothing; otherwise (no
 * mode) a plain accepted tap. One BEGIN IMMEDIATE transaction, after the tap's own commit.
 */
export function recordAcceptedTap(
  deps: CheckInDeps,
  stationId: number,
  tap: { uid: string; counter: number | null; readerName?: string },
): { result: TapCheckIn | null; queuedOn: number | null } {
  const { store } = deps
  const now = deps.now()
  return store.tx(() => {
    const station = store.stations.get(stationId)!
    const base = { uid: tap.uid, counter: tap.counter, ...(tap.readerName ? { readerName: tap.readerName } : {}) }
    if (station.testUntil !== null && station.testUntil > now) {
      store.stationEvents.append(station.id, 'tap', { ...base, state: 'accepted', test: true }, now)
      return { result: { state: 'accepted', test: true, checkIn: null }, queuedOn: null }
    }
    if (!isCheckInStation(station)) {
      store.stationEvents.append(station.id, 'tap', { ...base, state: 'accepted' }, now)
      return { result: null, queuedOn: null }
    }
    const checkIn = checkInChip(deps, { station, uid: tap.uid, manual: false, now })
    const summary = appendCheckInRows(store, station.id, checkIn, base, now)
    return { result: { state: checkIn.state, test: false, checkIn: summary }, queuedOn: checkIn.queued?.chainId ?? null }
  })
}

export const isCheckInStation = (station: StationRow): station is StationRow & { eventId: number } => station.mode === 'checkin' && station.eventId !== null
