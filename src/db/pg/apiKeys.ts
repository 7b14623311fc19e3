import type { ApiKeyRow, createApiKeysRepository } from '../apiKeys.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

const columns = 'id, team_id, prefix, label, created_at, revoked_at'

export function createPgApiKeysRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createApiKeysRepository>> {
  return {
    async insert(k) {
      const [row] = await sql<{ id: number }[]>`INSERT INTO api_keys (team_id, prefix, key_hash, label, created_at)
        VALUES (${k.teamId}, ${k.prefix}, ${k.hash}, ${k.label}, ${k.now}) RETURNING id`
      return row!.id
    },
    async findActiveByHash(hash) {
      const [row] = await sql<ApiKeyRow[]>`SELECT ${sql.unsafe(columns)} FROM api_keys WHERE key_hash = ${hash} AND revoked_at IS NULL`
      return row
    },
    async listByTeam(teamId) {
      return [...(await sql<ApiKeyRow[]>`SELECT ${sql.unsafe(columns)} FROM api_keys WHERE team_id = ${teamId} ORDER BY id`)]
    },
    // SQLite's statement has no ORDER BY and returns insertion (rowid) order; PostgreSQL has to be told.
    async listByPrefix(prefix) {
      return [...(await sql<ApiKeyRow[]>`SELECT ${sql.unsafe(columns)} FROM api_keys WHERE prefix = ${prefix} ORDER BY id`)]
    },
    async revokeByPrefix(prefix, now) {
      return (await sql`UPDATE api_keys SET revoked_at = ${now} WHERE prefix = ${prefix} AND revoked_at IS NULL RETURNING id`).length
    },
    async revokeByHash(hash, now) {
      return (await sql`UPDATE api_keys SET revoked_at = ${now} WHERE key_hash = ${hash} AND revoked_at IS NULL RETURNING id`).length
    },
  }
}
