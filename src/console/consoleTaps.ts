import type { Repositories } from '../db/store.js'
import { plainWords, type TapRejectReason } from '../taps/tapErrors.js'
import { teamStation } from './consoleStations.js'

export type ConsoleTap = {
  id: number
  at: string
  source: string
  uid: string | null
  stationId: number | null
  accepted: boolean
  reason: string
  /** A refusal's reason as the tap page says it; null for an accepted tap or a reason without words (keys_unavailable). */
  words: string | null
  counter: number | null
  detail: string | null
}

export type ConsoleTapFilter = { uid?: string; stationId?: number; verdict?: 'accepted' | 'refused'; limit: number }

const wordsOf = (reason: string): string | null => (Object.hasOwn(plainWords, reason) ? plainWords[reason as TapRejectReason] : null)

/**
 * The team's tap log, newest first (`taps list`, with filters): its chips' taps, and every tap at
 * its stations. Never a ref id (a ref is a bearer credential until it is used).
 *
 * @throws NotFoundError station_not_found (a station filter of another team)
 */
export async function consoleTaps(store: Repositories, p: { teamId: number; filter: ConsoleTapFilter }): Promise<ConsoleTap[]> {
  const { uid, stationId, verdict, limit } = p.filter
  if (stationId !== undefined) await teamStation(store, { teamId: p.teamId, stationId })
  const rows = await store.tapLog.listOfTeam({
    teamId: p.teamId,
    stationId: stationId ?? null,
    uid: uid ?? null,
    accepted: verdict === undefined ? null : verdict === 'accepted',
    limit,
  })
  return rows.map((r) => ({
    id: r.id,
    at: new Date(r.at).toISOString(),
    source: r.source,
    uid: r.chipUid,
    stationId: r.stationId,
    accepted: r.accepted === 1,
    reason: r.reason,
    words: r.accepted === 1 ? null : wordsOf(r.reason),
    counter: r.counter,
    detail: r.detail,
  }))
}
