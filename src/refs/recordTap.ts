import type { RefSource } from '../db/refs.js'
import type { Store } from '../db/store.js'
import { NotFoundError } from '../errors.js'
import { newPublicId } from '../ids.js'

export type RecordTapParameters = {
  uid: string
  source: RefSource
  /** false for taps nobody proved cryptographically (operator entries, NTAG 21x mirrors). */
  authenticated: boolean
  linksModule?: boolean
  counter?: number | null
  detail?: string | null
  now: number
}

export type RecordTapReturnType = { refId: string; teamId: number }

/**
 * Turns an accepted tap into a ref and writes it to the tap log, in one
 * transaction. An unknown chip is logged as rejected and reported as 404.
 *
 * Verification (SUN MAC, counters) happens before this is called; this is the
 * single place every tap source ends up creating refs.
 *
 * @example
 * const { refId } = recordTap(store, { uid: '04DE5F1EACC040', source: 'operator', authenticated: false, now: Date.now() })
 */
export function recordTap(store: Store, p: RecordTapParameters): RecordTapReturnType {
  const result = store.tx(() => {
    const chip = store.chips.get(p.uid)
    const log = {
      at: p.now,
      source: p.source,
      chipUid: p.uid,
      authenticated: p.authenticated,
      counter: p.counter ?? null,
      detail: p.detail ?? null,
    }
    if (!chip) {
      store.tapLog.insert({ ...log, teamId: null, accepted: false, reason: 'unknown_chip', refId: null })
      return null
    }
    const refId = newPublicId()
    store.refs.insert({
      id: refId,
      chipUid: chip.uid,
      teamId: chip.teamId,
      source: p.source,
      authenticated: p.authenticated,
      linksModule: p.linksModule ?? false,
      counter: p.counter ?? null,
      now: p.now,
    })
    store.tapLog.insert({ ...log, teamId: chip.teamId, accepted: true, reason: 'accepted', refId })
    return { refId, teamId: chip.teamId }
  })
  // Thrown after the commit so the rejected tap stays in the log.
  if (!result) throw new NotFoundError('chip_not_found', `No chip with UID ${p.uid} is registered`)
  return result
}
