import type { createTokensRepository, TokenRow } from '../tokens.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

// two_tap_claim and minted keep SQLite's 0/1 in the row type (see types.ts).
const columns = `t.id, t.team_id, t.chain_id, t.contract_address, t.token_id, t.metadata, t.two_tap_claim::int AS two_tap_claim,
  t.claim_delay_seconds, t.claim_window_seconds, t.created_at, t.updated_at, t.minted::int AS minted, t.moves, t.outside_moves`

export function createPgTokensRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createTokensRepository>> {
  return {
    async insert(t) {
      const [row] = await sql<{ id: number }[]>`INSERT INTO tokens (team_id, chain_id, contract_address, token_id, metadata, two_tap_claim,
          claim_delay_seconds, claim_window_seconds, created_at, updated_at)
        VALUES (${t.teamId}, ${t.chainId}, ${t.contractAddress}, ${t.tokenId}, ${t.metadata}, ${t.twoTapClaim},
          ${t.claimDelaySeconds}, ${t.claimWindowSeconds}, ${t.now}, ${t.now})
        RETURNING id`
      return row!.id
    },
    async update(id, t) {
      await sql`UPDATE tokens SET metadata = ${t.metadata}, two_tap_claim = ${t.twoTapClaim},
          claim_delay_seconds = ${t.claimDelaySeconds}, claim_window_seconds = ${t.claimWindowSeconds}, updated_at = ${t.now}
        WHERE id = ${id}`
    },
    async findByKey(k) {
      const [row] = await sql<TokenRow[]>`SELECT ${sql.unsafe(columns)} FROM tokens t
        WHERE t.chain_id = ${k.chainId} AND t.contract_address = ${k.contractAddress} AND t.token_id = ${k.tokenId}`
      return row
    },
    async get(id) {
      const [row] = await sql<TokenRow[]>`SELECT ${sql.unsafe(columns)} FROM tokens t WHERE t.id = ${id}`
      return row
    },
    async listByTeam(teamId) {
      return sql<TokenRow[]>`SELECT ${sql.unsafe(columns)} FROM tokens t WHERE t.team_id = ${teamId} ORDER BY t.id`
    },
    async findByChip(uid) {
      const [row] = await sql<TokenRow[]>`SELECT ${sql.unsafe(columns)} FROM tokens t JOIN token_chips tc ON tc.token_id = t.id
        WHERE tc.chip_uid = ${uid}`
      return row
    },
    async chipUids(id) {
      const rows = await sql<{ chipUid: string }[]>`SELECT chip_uid FROM token_chips WHERE token_id = ${id} ORDER BY linked_at, chip_uid`
      return rows.map((r) => r.chipUid)
    },
    // A chip moves to its new token; linking it again to the same one keeps its first linked_at.
    async linkChip(tokenRowId, uid, now) {
      await sql`INSERT INTO token_chips (token_id, chip_uid, linked_at) VALUES (${tokenRowId}, ${uid}, ${now})
        ON CONFLICT (chip_uid) DO UPDATE SET token_id = excluded.token_id, linked_at = excluded.linked_at
        WHERE token_chips.token_id <> excluded.token_id`
    },
    async setMetadata(id, metadata, now) {
      await sql`UPDATE tokens SET metadata = ${metadata}, updated_at = ${now} WHERE id = ${id}`
    },
    async lock(id) {
      const [row] = await sql<TokenRow[]>`SELECT ${sql.unsafe(columns)} FROM tokens t WHERE t.id = ${id} FOR UPDATE`
      return row
    },
    async setMinted(id, minted) {
      const rows = await sql`UPDATE tokens SET minted = ${minted} WHERE id = ${id} RETURNING id`
      return rows.length === 1
    },
    // One statement: concurrent moves each see the row after the previous one's commit (a row lock).
    async addMove(id) {
      const [row] = await sql<{ moves: number }[]>`UPDATE tokens SET moves = moves + 1 WHERE id = ${id} RETURNING moves`
      return row!.moves
    },
    // Only a rise of the outside count is a move: a lower one is a chain that lost blocks, not a token moving back.
    async noteOutsideMoves(id, outsideMoves) {
      const [row] = await sql<{ moves: number }[]>`UPDATE tokens SET
          moves = moves + CASE WHEN outside_moves IS NOT NULL AND ${outsideMoves}::bigint > outside_moves THEN ${outsideMoves}::bigint - outside_moves ELSE 0 END,
          outside_moves = GREATEST(outside_moves, ${outsideMoves}::bigint)
        WHERE id = ${id} RETURNING moves`
      return row!.moves
    },
  }
}
