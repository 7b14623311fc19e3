import type { Db } from './sqlite/openDatabase.js'

export type TapLogRow = {
  id: number
  at: number
  source: string
  chipUid: string | null
  teamId: number | null
  accepted: number
  authenticated: number
  reason: string
  counter: number | null
  refId: string | null
  detail: string | null
  /** Migration 020: the station the tap came through (station taps only). */
  stationId: number | null
}

export type TapLogInsert = {
  at: number
  source: string
  chipUid: string | null
  teamId: number | null
  accepted: boolean
  authenticated: boolean
  reason: string
  counter: number | null
  refId: string | null
  detail: string | null
  stationId?: number | null
}

/** The console's filters of the tap log (null: that filter off). */
export type TeamTapFilter = { teamId: number; stationId: number | null; uid: string | null; accepted: boolean | null; limit: number }
/** A station's taps as the console shows them: its last tap and how many since `since`. */
export type StationTapSummary = { stationId: number; lastTapAt: number; tapsSince: number }

const columns = `id, at, source, chip_uid AS chipUid, team_id AS teamId, accepted, authenticated, reason, counter,
  ref_id AS refId, detail, station_id AS stationId`

/*
 * A team's rows, to the console: its chips' taps wherever they were tapped, and every tap at its
 * stations (an unknown chip, another team's chip). The station is named only when it is the team's:
 * a team's chip tapped at another team's station does not learn that station's id.
 */
const TEAM_ROWS = 'FROM tap_log t LEFT JOIN stations s ON s.id = t.station_id WHERE (t.team_id = @teamId OR s.team_id = @teamId)'

export function createTapLogRepository(db: Db) {
  const insert = db.prepare(
    `INSERT INTO tap_log (at, source, chip_uid, team_id, accepted, authenticated, reason, counter, ref_id, detail, station_id)
     VALUES (@at, @source, @chipUid, @teamId, @accepted, @authenticated, @reason, @counter, @refId, @detail, @stationId)`,
  )
  const ofTeam = db.prepare<{ teamId: number; stationId: number | null; uid: string | null; accepted: number | null; limit: number }, TapLogRow>(
    `SELECT t.id, t.at, t.source, t.chip_uid AS chipUid, t.team_id AS teamId, t.accepted, t.authenticated, t.reason, t.counter,
       t.ref_id AS refId, t.detail, CASE WHEN s.team_id = @teamId THEN t.station_id END AS stationId
     ${TEAM_ROWS}
       AND (@stationId IS NULL OR (t.station_id = @stationId AND s.team_id = @teamId))
       AND (@uid IS NULL OR t.chip_uid = @uid) AND (@accepted IS NULL OR t.accepted = @accepted)
     ORDER BY t.id DESC LIMIT @limit`,
  )
  const teamCounts = db.prepare<{ teamId: number; since: number }, { today: number; accepted: number | null }>(
    `SELECT count(*) AS today, sum(t.accepted) AS accepted ${TEAM_ROWS} AND t.at >= @since`,
  )
  const byStations = db.prepare<{ teamId: number; since: number }, StationTapSummary>(
    `SELECT t.station_id AS stationId, max(t.at) AS lastTapAt, count(*) FILTER (WHERE t.at >= @since) AS tapsSince
     FROM tap_log t JOIN stations s ON s.id = t.station_id WHERE s.team_id = @teamId GROUP BY t.station_id`,
  )
  const recent = db.prepare<[number], TapLogRow>(`SELECT ${columns} FROM tap_log ORDER BY id DESC LIMIT ?`)
  const byChip = db.prepare<[string, number], TapLogRow>(
    `SELECT ${columns} FROM tap_log WHERE chip_uid = ? ORDER BY id DESC LIMIT ?`,
  )
  // One statement for every filter: a NULL team or refused = 0 switches that condition off.
  const list = db.prepare<{ teamId: number | null; refused: number; limit: number }, TapLogRow>(
    `SELECT ${columns} FROM tap_log
     WHERE (@teamId IS NULL OR team_id = @teamId) AND (@refused = 0 OR accepted = 0)
     ORDER BY id DESC LIMIT @limit`,
  )
  return {
    /** Newest first; `teamId` null: every row, also refusals that named no registered chip. */
    list: (p: { teamId: number | null; refusedOnly: boolean; limit: number }) => list.all({ teamId: p.teamId, refused: p.refusedOnly ? 1 : 0, limit: p.limit }),
    insert: (t: TapLogInsert) =>
      Number(insert.run({ ...t, stationId: t.stationId ?? null, accepted: t.accepted ? 1 : 0, authenticated: t.authenticated ? 1 : 0 }).lastInsertRowid),
    /** A team's rows (TEAM_ROWS), newest first, filtered; `stationId` null on a row of another team's station. */
    listOfTeam: (f: TeamTapFilter) => ofTeam.all({ ...f, accepted: f.accepted === null ? null : f.accepted ? 1 : 0 }),
    /** How many of a team's rows (TEAM_ROWS) since `since`, and how many of them accepted. */
    countOfTeam: (teamId: number, since: number) => {
      const row = teamCounts.get({ teamId, since })!
      return { total: row.today, accepted: row.accepted ?? 0 }
    },
    /** Per station of the team that has any tap: its last tap's time and its taps since `since`. */
    stationSummaries: (teamId: number, since: number) => byStations.all({ teamId, since }),
    recent: (limit = 50) => recent.all(limit),
    byChip: (uid: string, limit = 50) => byChip.all(uid, limit),
  }
}
