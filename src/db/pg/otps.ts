import { otpDetailFrom, type createOtpsRepository, type OtpDetailRow, type OtpRow } from '../otps.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

const columns = `code, team_id, ref_id, chip_uid, type, token_id, proof_event_id, guestbook_event_id, created_at,
  expires_at, used_at, used_for, token_moves`

export function createPgOtpsRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createOtpsRepository>> {
  return {
    async insert(o) {
      await sql`INSERT INTO otps (code, team_id, ref_id, chip_uid, type, token_id, proof_event_id, guestbook_event_id, created_at, expires_at, token_moves)
        VALUES (${o.code}, ${o.teamId}, ${o.refId}, ${o.chipUid}, ${o.type}, ${o.tokenId}, ${o.proofEventId}, ${o.guestbookEventId},
          ${o.createdAt}, ${o.expiresAt}, ${o.tokenMoves})`
    },
    async get(code) {
      const [row] = await sql<OtpRow[]>`SELECT ${sql.unsafe(columns)} FROM otps WHERE code = ${code}`
      return row
    },
    // The aliases are snake_case: the client camelCases them into OtpDetailRow's names.
    async getDetail(code) {
      const [row] = await sql<OtpDetailRow[]>`SELECT o.code, o.type, o.created_at, o.expires_at, o.used_at, o.token_moves,
          coalesce(t.moves, ct.moves) AS token_moves_now, t.chain_id AS token_chain_id, t.contract_address AS token_contract,
          t.token_id AS token_token_id, p.id AS proof_id, p.proof_event_id, p.status AS proof_status,
          e.id AS event_id, e.name AS event_name, e.token_id AS event_token_id, e.created_at AS event_created_at,
          c.chain_id AS event_chain_id, c.address AS event_contract
        ${sql.unsafe(otpDetailFrom)}
        WHERE o.code = ${code}`
      return row
    },
    // The WHERE clause is the single use: a racer waiting on the row lock re-reads it at READ
    // COMMITTED and finds it used, on any gateway.
    async markUsed(code, usedFor, now) {
      const rows = await sql`UPDATE otps SET used_at = ${now}, used_for = ${usedFor} WHERE code = ${code} AND used_at IS NULL RETURNING code`
      return rows.length === 1
    },
    async release(code) {
      const rows = await sql`UPDATE otps SET used_at = NULL, used_for = NULL WHERE code = ${code} AND used_at IS NOT NULL RETURNING code`
      return rows.length === 1
    },
    async delete(code, teamId) {
      const rows = await sql`DELETE FROM otps WHERE code = ${code} AND team_id = ${teamId} RETURNING code`
      return rows.length === 1
    },
    async bindToMoves(code, moves) {
      await sql`UPDATE otps SET token_moves = ${moves} WHERE code = ${code}`
    },
  }
}
