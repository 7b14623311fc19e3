import type { createKioskTokensRepository, KioskTokenRow } from '../kioskTokens.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

const columns = 'k.id, k.station_id, k.prefix, k.created_at, k.last_seen_at, k.revoked_at'

export function createPgKioskTokensRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createKioskTokensRepository>> {
  return {
    async insert(k) {
      const [row] = await sql<{ id: number }[]>`INSERT INTO kiosk_tokens (station_id, prefix, token_hash, created_at)
        VALUES (${k.stationId}, ${k.prefix}, ${k.hash}, ${k.now}) RETURNING id`
      return row!.id
    },
    // A revoked station's kiosks stop with it.
    async findActiveByHash(hash) {
      const [row] = await sql<KioskTokenRow[]>`SELECT ${sql.unsafe(columns)}
        FROM kiosk_tokens k JOIN stations s ON s.id = k.station_id
        WHERE k.token_hash = ${hash} AND k.revoked_at IS NULL AND s.revoked_at IS NULL`
      return row
    },
    async findByHash(hash) {
      const [row] = await sql<KioskTokenRow[]>`SELECT ${sql.unsafe(columns)} FROM kiosk_tokens k WHERE k.token_hash = ${hash}`
      return row
    },
    async listByStation(stationId) {
      return [...(await sql<KioskTokenRow[]>`SELECT ${sql.unsafe(columns)} FROM kiosk_tokens k WHERE k.station_id = ${stationId} ORDER BY k.id`)]
    },
    async markSeen(id, now) {
      await sql`UPDATE kiosk_tokens SET last_seen_at = ${now} WHERE id = ${id}`
    },
    async revoke(id, now) {
      const rows = await sql`UPDATE kiosk_tokens SET revoked_at = ${now} WHERE id = ${id} AND revoked_at IS NULL RETURNING id`
      return rows.length === 1
    },
  }
}
