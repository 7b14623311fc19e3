import type { ClaimRegistrationRow, createClaimRegistrationsRepository } from '../claimRegistrations.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

const columns = 'id, token_id, recipient, created_at, allowed_at, expires_at, used_at'

export function createPgClaimRegistrationsRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createClaimRegistrationsRepository>> {
  return {
    async insert(r) {
      const [row] = await sql<{ id: number }[]>`INSERT INTO claim_registrations (token_id, recipient, created_at, allowed_at, expires_at)
        VALUES (${r.tokenId}, ${r.recipient}, ${r.createdAt}, ${r.allowedAt}, ${r.expiresAt})
        RETURNING id`
      return row!.id
    },
    async get(id) {
      const [row] = await sql<ClaimRegistrationRow[]>`SELECT ${sql.unsafe(columns)} FROM claim_registrations WHERE id = ${id}`
      return row
    },
    // "Open" = not used and not expired: the one that blocks a new registration.
    async findOpen(tokenId, now) {
      const [row] = await sql<ClaimRegistrationRow[]>`SELECT ${sql.unsafe(columns)} FROM claim_registrations
        WHERE token_id = ${tokenId} AND used_at IS NULL AND expires_at > ${now} ORDER BY id DESC LIMIT 1`
      return row
    },
    async findLatest(tokenId, recipient) {
      const [row] = await sql<ClaimRegistrationRow[]>`SELECT ${sql.unsafe(columns)} FROM claim_registrations
        WHERE token_id = ${tokenId} AND recipient = ${recipient} ORDER BY id DESC LIMIT 1`
      return row
    },
    async deleteUnused(tokenId, recipient) {
      const result = await sql`DELETE FROM claim_registrations WHERE token_id = ${tokenId} AND recipient = ${recipient} AND used_at IS NULL`
      return result.count
    },
    // The WHERE clause makes a registration usable once across gateways: a waiter re-reads it used.
    async markUsed(id, now) {
      const rows = await sql`UPDATE claim_registrations SET used_at = ${now} WHERE id = ${id} AND used_at IS NULL RETURNING id`
      return rows.length === 1
    },
    async release(id) {
      const rows = await sql`UPDATE claim_registrations SET used_at = NULL WHERE id = ${id} AND used_at IS NOT NULL RETURNING id`
      return rows.length === 1
    },
  }
}
