import type { Store } from '../db/store.js'
import { plainWords, type TapRejectReason } from '../taps/tapErrors.js'

/** One row of the tap log, as a test reads it: the ref id whole (a test gateway's refs are nobody's secret). */
export type TapRecord = {
  at: Date
  /** phone, station, operator… */
  source: string
  uid: string | null
  accepted: boolean
  authenticated: boolean
  /** ok, or why the tap was refused (counter_replay, mac_mismatch, unknown_chip…). */
  reason: string
  /** A refusal's reason in the tap page's words; null when accepted. */
  words: string | null
  counter: number | null
  refId: string | null
  detail: string | null
}

/** The tap log, newest first: all taps, or the refused ones, or one chip's. */
export async function listTaps(store: Store, o: { refused?: boolean; uid?: string; limit?: number } = {}): Promise<TapRecord[]> {
  const limit = o.limit ?? 100
  const rows =
    o.uid === undefined
      ? await store.tapLog.list({ teamId: null, refusedOnly: o.refused ?? false, limit })
      : (await store.tapLog.byChip(o.uid.toUpperCase(), limit)).filter((row) => !o.refused || row.accepted === 0)
  return rows.map((row) => ({
    at: new Date(row.at),
    source: row.source,
    uid: row.chipUid,
    accepted: row.accepted === 1,
    authenticated: row.authenticated === 1,
    reason: row.reason,
    words: row.accepted === 1 ? null : (plainWords[row.reason as TapRejectReason] ?? row.reason),
    counter: row.counter,
    refId: row.refId,
    detail: row.detail,
  }))
}
