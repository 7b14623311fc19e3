import type { createTransfersRepository, TransferRow } from '../transfers.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

const columns = 'id, token_id, team_id, recipient, method, via, otp_code, claim_registration_id, chain_tx_id, resigned, created_at, known_outside_moves'

export function createPgTransfersRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createTransfersRepository>> {
  return {
    async insert(t) {
      const [row] = await sql<{ id: number }[]>`INSERT INTO transfers (token_id, team_id, recipient, method, via, otp_code, claim_registration_id, chain_tx_id, created_at, known_outside_moves)
        VALUES (${t.tokenId}, ${t.teamId}, ${t.recipient}, ${t.method}, ${t.via}, ${t.otpCode}, ${t.claimRegistrationId}, ${t.chainTxId}, ${t.createdAt}, ${t.knownOutsideMoves})
        RETURNING id`
      return row!.id
    },
    async findByTx(chainTxId) {
      const [row] = await sql<TransferRow[]>`SELECT ${sql.unsafe(columns)} FROM transfers WHERE chain_tx_id = ${chainTxId}`
      return row
    },
    async get(id) {
      const [row] = await sql<TransferRow[]>`SELECT ${sql.unsafe(columns)} FROM transfers WHERE id = ${id}`
      return row
    },
    async resign(id, chainTxId, method) {
      await sql`UPDATE transfers SET chain_tx_id = ${chainTxId}, method = ${method}, resigned = resigned + 1 WHERE id = ${id}`
    },
    async countPendingOfToken(tokenRowId) {
      const [row] = await sql<{ n: number }[]>`SELECT count(*) AS n FROM transfers tr JOIN chain_txs c ON c.id = tr.chain_tx_id
        WHERE tr.token_id = ${tokenRowId} AND c.status <> 'mined'`
      return row!.n
    },
    // reverted is NULL until mined; `= false` leaves NULL out, as SQLite's `= 0` does.
    async countLandedOfToken(tokenRowId) {
      const [row] = await sql<{ n: number }[]>`SELECT count(*) AS n FROM transfers tr JOIN chain_txs c ON c.id = tr.chain_tx_id
        WHERE tr.token_id = ${tokenRowId} AND c.status = 'mined' AND c.reverted = false`
      return row!.n
    },
    async hasLaterOfToken(tokenRowId, id) {
      const rows = await sql`SELECT id FROM transfers WHERE token_id = ${tokenRowId} AND id > ${id} LIMIT 1`
      return rows.length === 1
    },
    // The unique indexes (event, chip) and (event, recipient) make a second mint fail with 23505 on any gateway.
    async insertGuestbookMint(m) {
      const [row] = await sql<{ id: number }[]>`INSERT INTO guestbook_mints (event_id, recipient, chip_uid, otp_code, chain_tx_id, created_at)
        VALUES (${m.eventId}, ${m.recipient}, ${m.chipUid}, ${m.otpCode}, ${m.chainTxId}, ${m.createdAt})
        RETURNING id`
      return row!.id
    },
    async forgetGuestbookMint(chainTxId) {
      const [row] = await sql<{ otpCode: string | null }[]>`DELETE FROM guestbook_mints WHERE chain_tx_id = ${chainTxId} RETURNING otp_code`
      return row
    },
    async guestbookMintedByChip(eventId, uid) {
      const rows = await sql`SELECT id FROM guestbook_mints WHERE event_id = ${eventId} AND chip_uid = ${uid}`
      return rows.length > 0
    },
    async guestbookMintOfChip(eventId, uid) {
      const [row] = await sql<{ id: number; chainTxId: number }[]>`SELECT id, chain_tx_id FROM guestbook_mints WHERE event_id = ${eventId} AND chip_uid = ${uid}`
      return row
    },
    async guestbookMintedTo(eventId, recipient) {
      const rows = await sql`SELECT id FROM guestbook_mints WHERE event_id = ${eventId} AND recipient = ${recipient}`
      return rows.length > 0
    },
  }
}
