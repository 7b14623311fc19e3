import type { createTapLogRepository, TapLogRow } from '../tapLog.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

// The row type keeps SQLite's 0/1 flags (see types.ts).
const columns = 'id, at, source, chip_uid, team_id, accepted::int AS accepted, authenticated::int AS authenticated, reason, counter, ref_id, detail'

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
      const [row] = await sql<{ id: number }[]>`INSERT INTO tap_log (at, source, chip_uid, team_id, accepted, authenticated, reason, counter, ref_id, detail)
        VALUES (${t.at}, ${t.source}, ${t.chipUid}, ${t.teamId}, ${t.accepted}, ${t.authenticated}, ${t.reason}, ${t.counter}, ${t.refId}, ${t.detail})
        RETURNING id`
      return row!.id
    },
    async recent(limit = 50) {
      return [...(await sql<TapLogRow[]>`SELECT ${sql.unsafe(columns)} FROM tap_log ORDER BY id DESC LIMIT ${limit}`)]
    },
    async byChip(uid, limit = 50) {
      return [...(await sql<TapLogRow[]>`SELECT ${sql.unsafe(columns)} FROM tap_log WHERE chip_uid = ${uid} ORDER BY id DESC LIMIT ${limit}`)]
    },
  }
}
