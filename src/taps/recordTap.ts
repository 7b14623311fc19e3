import type { ChipRow } from '../db/chips.js'
import type { RefSource } from '../db/refs.js'
import type { Store, Transactional } from '../db/store.js'
import type { Tx } from '../db/types.js'
import { newPublicId } from '../ids.js'
import { counterJump, ntag21xCounterDemand, type CounterJumpLimit } from './counterRules.js'
import { TapRejectedError, type TapRejectReason } from './tapErrors.js'

/** SDMReadCtr is 3 bytes; at its maximum the chip cannot produce a fresh tap any more. */
export const COUNTER_LIMIT = 0xffffff

export type RecordTapParameters = {
  uid: string
  source: RefSource
  /** false for taps nobody proved cryptographically (operator entries, NTAG 21x mirrors). */
  authenticated: boolean
  linksModule?: boolean
  counter?: number | null
  /**
   * Require `counter` to be strictly above the chip's last accepted one: `true` for verified taps;
   * `'ntag21x'` for an NTAG 21x mirror, whenever it carries a counter or the chip must mirror one.
   */
  freshCounter?: boolean | 'ntag21x'
  /** Refuse a counter further above the last accepted one (counter_jump), leaving the stored counter as it is. */
  counterJump?: CounterJumpLimit | null
  /** Extra checks on the chip inside the transaction (e.g. the station's team); return a rejection or null. */
  check?: (chip: ChipRow) => { reason: TapRejectReason; detail: string } | null
  detail?: string | null
  /** The station the tap came through, for the tap log (station taps at a station with a row). */
  stationId?: number | null
  now: number
}

export type RecordTapReturnType = { refId: string; teamId: number; chip: ChipRow }

/**
 * What an accepted tap causes (a station's check-in, claim, feed rows, a queued mint), written
 * inside the tap's own transaction: it commits with the tap or, if it throws, takes the tap's
 * counter, ref and log row with it, and its after-commit effects. Runs only for an accepted tap.
 */
export type TapConsequence<T> = (tap: RecordTapReturnType & { counter: number | null }, tx: Tx) => Promise<T>

/**
 * Turns an accepted tap into a ref and writes the tap log, in one BEGIN
 * IMMEDIATE transaction: the counter check and its update cannot interleave
 * with another process's, so a replayed URL is refused however fast it comes.
 * Every tap source (operator, phone, station) ends here.
 *
 * @throws TapRejectedError (unknown_chip, malformed, no_counter, counter_replay, counter_limit, counter_jump, or the `check`'s reason), after logging it
 * @example
 * const { refId } = recordTap(store, { uid: '04DE5F1EACC040', source: 'operator', authenticated: false, now: Date.now() })
 */
export async function recordTap(store: Transactional, p: RecordTapParameters): Promise<RecordTapReturnType> {
  return unwrap(await store.tx((tx) => tapTransaction(tx, p)))
}

/**
 * {@link recordTap} for the request path: the transaction shares its commit with
 * the other taps of this event-loop turn (store.batch). Same checks, same log.
 * `consequence` runs in the tap's savepoint: a throw rolls back this tap only.
 */
export async function recordTapBatched<T = undefined>(
  store: Store,
  p: RecordTapParameters,
  consequence?: TapConsequence<T>,
): Promise<RecordTapReturnType & { caused?: T }> {
  return unwrap(await store.batch((tx) => tapTransaction(tx, p, consequence)))
}

type TapOutcome<T> = { ok: RecordTapReturnType & { caused?: T } } | { rejected: TapRejectedError }

// Thrown after the commit so the rejected tap stays in the log.
function unwrap<T>(result: TapOutcome<T>): RecordTapReturnType & { caused?: T } {
  if ('rejected' in result) throw result.rejected
  return result.ok
}

/** The read-modify-write of a tap; runs inside a transaction (tx or batch). */
async function tapTransaction<T>(tx: Tx, p: RecordTapParameters, consequence?: TapConsequence<T>): Promise<TapOutcome<T>> {
  const counter = p.counter ?? null
  const chip = await tx.chips.get(p.uid)
  const log = { at: p.now, source: p.source, chipUid: p.uid, authenticated: p.authenticated, counter, stationId: p.stationId ?? null }
  const reject = async (reason: TapRejectReason, detail: string) => {
    await tx.tapLog.insert({ ...log, teamId: chip?.teamId ?? null, accepted: false, reason, refId: null, detail })
    return { rejected: new TapRejectedError(reason, detail, p.uid) }
  }
  if (!chip) return reject('unknown_chip', `no chip with UID ${p.uid} is registered`)
  const checked = p.check?.(chip)
  if (checked) return reject(checked.reason, checked.detail)
  let fresh = p.freshCounter === true
  if (p.freshCounter === 'ntag21x') {
    // Declared UID-only: a counter is not the chip's, and accepting one would make every later UID-only tap look like a downgrade.
    if (chip.counterMirror === 0 && counter !== null)
      return reject(
        'malformed',
        `chip ${chip.uid} is registered as mirroring its UID only (counterMirror false), but this mirror carries counter ${counter}: a forged URL, or import the chip with counterMirror true`,
      )
    const demand = ntag21xCounterDemand(chip)
    if (counter === null && demand !== null) return reject('no_counter', `chip ${chip.uid} must mirror its counter, as ${demand}, but this mirror carries none: a copied or edited URL`)
    fresh = counter !== null
  }
  if (fresh) {
    if (counter === null) return reject('no_counter', 'the message mirrors no SDMReadCtr, so replays cannot be detected')
    if (counter >= COUNTER_LIMIT) return reject('counter_limit', `counter ${counter} is at the 24-bit limit`)
    if (chip.lastCounter !== null && counter <= chip.lastCounter)
      return reject('counter_replay', `counter ${counter} is not above the last accepted counter ${chip.lastCounter}`)
    const jump = counterJump(counter, chip.lastCounter, p.counterJump ?? null)
    if (jump !== null) return reject('counter_jump', jump)
    if (!await tx.chips.advanceCounter(chip.uid, counter)) {
      // Another tap of this chip committed a higher counter since `chip` was read (PostgreSQL's READ
      // COMMITTED batch): name that one, not the stale value read before it.
      const winner = (await tx.chips.get(chip.uid))?.lastCounter ?? chip.lastCounter
      return reject('counter_replay', `counter ${counter} is not above the last accepted counter ${winner}`)
    }
  }
  const refId = newPublicId()
  await tx.refs.insert({
    id: refId,
    chipUid: chip.uid,
    teamId: chip.teamId,
    source: p.source,
    authenticated: p.authenticated,
    linksModule: p.linksModule ?? false,
    counter,
    now: p.now,
  })
  await tx.tapLog.insert({ ...log, teamId: chip.teamId, accepted: true, reason: 'accepted', refId, detail: p.detail ?? null })
  const ok = { refId, teamId: chip.teamId, chip }
  return { ok: consequence ? { ...ok, caused: await consequence({ ...ok, counter }, tx) } : ok }
}
