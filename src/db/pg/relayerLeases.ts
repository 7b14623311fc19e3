import type { createRelayerLeasesRepository } from '../relayerLeases.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

/** The database server's clock in epoch-ms (truncated, as SQLite's CAST), never a gateway's. */
const dbNowMs = 'floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint'

export function createPgRelayerLeasesRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createRelayerLeasesRepository>> {
  return {
    // One statement: a concurrent acquirer waits on the row and re-checks the WHERE clause against the committed lease.
    async acquire(key, leaseMs) {
      const [row] = await sql<{ epoch: number }[]>`
        INSERT INTO relayer_leases (chain_id, sender, holder, epoch, expires_at)
        VALUES (${key.chainId}, ${key.sender}, ${key.holder}, 1, ${sql.unsafe(dbNowMs)} + ${leaseMs}::bigint)
        ON CONFLICT (chain_id, sender) DO UPDATE SET
          epoch = CASE WHEN relayer_leases.holder = excluded.holder THEN relayer_leases.epoch ELSE relayer_leases.epoch + 1 END,
          holder = excluded.holder,
          expires_at = excluded.expires_at
        WHERE relayer_leases.holder = excluded.holder OR relayer_leases.expires_at < ${sql.unsafe(dbNowMs)}
        RETURNING epoch`
      return row?.epoch ?? null
    },
    // FOR SHARE: a takeover (acquire's UPDATE) waits until the fenced write's transaction ends, as SQLite's one
    // writer makes it wait, so the new holder sees that write; at any isolation level, not only SERIALIZABLE.
    async holds(key, epoch) {
      const rows = await sql`SELECT 1 AS one FROM relayer_leases
        WHERE chain_id = ${key.chainId} AND sender = ${key.sender} AND holder = ${key.holder} AND epoch = ${epoch} FOR SHARE`
      return rows.length === 1
    },
    async release(key) {
      const rows = await sql`UPDATE relayer_leases SET expires_at = 0
        WHERE chain_id = ${key.chainId} AND sender = ${key.sender} AND holder = ${key.holder} RETURNING epoch`
      return rows.length === 1
    },
    async get(chainId, sender) {
      const [row] = await sql<{ holder: string; epoch: number; expiresAt: number }[]>`SELECT holder, epoch, expires_at FROM relayer_leases
        WHERE chain_id = ${chainId} AND sender = ${sender}`
      return row
    },
  }
}
