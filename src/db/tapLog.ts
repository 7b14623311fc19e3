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
}

const columns = `id, at, source, chip_uid AS chipUid, team_id AS teamId, accepted, authenticated, reason, counter,
  ref_id AS refId, detail`

export function createTapLogRepository(db: Db) {
  const insert = db.prepare(
    `INSERT INTO tap_log (at, source, chip_uid, team_id, accepted, authenticated, reason, counter, ref_id, detail)
     VALUES (@at, @source, @chipUid, @teamId, @accepted, @authenticated, @reason, @counter, @refId, @detail)`,
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
      Number(insert.run({ ...t, accepted: t.accepted ? 1 : 0, authenticated: t.authenticated ? 1 : 0 }).lastInsertRowid),
    recent: (limit = 50) => recent.all(limit),
    byChip: (uid: string, limit = 50) => byChip.all(uid, limit),
  }
}
