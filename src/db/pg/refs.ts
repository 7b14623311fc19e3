import type { createRefsRepository, RefRow } from '../refs.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

// The row type keeps SQLite's 0/1 flags for now (see types.ts): the booleans are cast to them here.
const columns = 'id, chip_uid, team_id, source, authenticated::int AS authenticated, links_module::int AS links_module, counter, created_at, consumed_at'

export function createPgRefsRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createRefsRepository>> {
  return {
    async insert(r) {
      await sql`INSERT INTO refs (id, chip_uid, team_id, source, authenticated, links_module, counter, created_at)
        VALUES (${r.id}, ${r.chipUid}, ${r.teamId}, ${r.source}, ${r.authenticated}, ${r.linksModule}, ${r.counter}, ${r.now})`
    },
    async get(id) {
      const [row] = await sql<RefRow[]>`SELECT ${sql.unsafe(columns)} FROM refs WHERE id = ${id}`
      return row
    },
    // The WHERE clause is what makes "exactly one first query" hold across gateways: a waiter re-reads
    // the committed row at READ COMMITTED and finds it consumed.
    async consume(id, now) {
      const rows = await sql`UPDATE refs SET consumed_at = ${now} WHERE id = ${id} AND consumed_at IS NULL RETURNING id`
      return rows.length === 1
    },
  }
}
