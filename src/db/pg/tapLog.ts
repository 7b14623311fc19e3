import type { createTapLogRepository, StationTapSummary, TapLogRow } from '../tapLog.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

// The row type keeps SQLite's 0/1 flags (see types.ts).
const columns = 'id, at, source, chip_uid, team_id, accepted::int AS accepted, authenticated::int AS authenticated, reason, counter, ref_id, detail, station_id'

export function createPgTapLogRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createTapLogRepository>> {
  return {
    // One statement for every filter, as SQLite's: a null team or refusedOnly false switches that condition off.
    async list(p) {
      return [
        ...(await sql<TapLogRow[]>`SELECT ${sql.unsafe(columns)} FROM tap_log
          WHERE (${p.teamId}::bigint IS NULL OR team_id = ${p.teamId}::bigint) AND (NOT ${p.refusedOnly}::boolean OR NOT accepted)
          ORDER BY id DESC LIMIT ${p.limit}`),
      ]
    },
    async insert(t) {
      const [row] = await sql<{ id: number }[]>`INSERT INTO tap_log (at, source, chip_uid, team_id, accepted, authenticated, reason, counter, ref_id, detail, station_id)
        VALUES (${t.at}, ${t.source}, ${t.chipUid}, ${t.teamId}, ${t.accepted}, ${t.authenticated}, ${t.reason}, ${t.counter}, ${t.refId}, ${t.detail}, ${t.stationId ?? null})
        RETURNING id`
      return row!.id
    },
    // The team's rows as SQLite's TEAM_ROWS: its chips' taps, and every tap at its stations (named only when the station is its).
    async listOfTeam(f) {
      return [
        ...(await sql<TapLogRow[]>`SELECT t.id, t.at, t.source, t.chip_uid, t.team_id, t.accepted::int AS accepted, t.authenticated::int AS authenticated,
            t.reason, t.counter, t.ref_id, t.detail, CASE WHEN s.team_id = ${f.teamId} THEN t.station_id END AS station_id
          FROM tap_log t LEFT JOIN stations s ON s.id = t.station_id
          WHERE (t.team_id = ${f.teamId} OR s.team_id = ${f.teamId})
            AND (${f.stationId}::bigint IS NULL OR (t.station_id = ${f.stationId}::bigint AND s.team_id = ${f.teamId}))
            AND (${f.uid}::text IS NULL OR t.chip_uid = ${f.uid}::text) AND (${f.accepted}::boolean IS NULL OR t.accepted = ${f.accepted}::boolean)
          ORDER BY t.id DESC LIMIT ${f.limit}`),
      ]
    },
    async countOfTeam(teamId, since) {
      const [row] = await sql<{ total: number; accepted: number }[]>`SELECT count(*)::int AS total, (count(*) FILTER (WHERE t.accepted))::int AS accepted
        FROM tap_log t LEFT JOIN stations s ON s.id = t.station_id
        WHERE (t.team_id = ${teamId} OR s.team_id = ${teamId}) AND t.at >= ${since}`
      return { total: row!.total, accepted: row!.accepted }
    },
    async stationSummaries(teamId, since) {
      return [
        ...(await sql<StationTapSummary[]>`SELECT t.station_id, max(t.at) AS last_tap_at, (count(*) FILTER (WHERE t.at >= ${since}))::int AS taps_since
          FROM tap_log t JOIN stations s ON s.id = t.station_id WHERE s.team_id = ${teamId} GROUP BY t.station_id`),
      ]
    },
    async recent(limit = 50) {
      return [...(await sql<TapLogRow[]>`SELECT ${sql.unsafe(columns)} FROM tap_log ORDER BY id DESC LIMIT ${limit}`)]
    },
    async byChip(uid, limit = 50) {
      return [...(await sql<TapLogRow[]>`SELECT ${sql.unsafe(columns)} FROM tap_log WHERE chip_uid = ${uid} ORDER BY id DESC LIMIT ${limit}`)]
    },
  }
}
