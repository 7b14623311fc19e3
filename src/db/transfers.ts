import type { Db } from './sqlite/openDatabase.js'

export type TransferRow = {
  id: number
  tokenId: number
  teamId: number
  recipient: string
  method: 'mintNFT' | 'claimNFT'
  via: 'api_key' | 'otp' | 'self_service'
  otpCode: string | null
  claimRegistrationId: number | null
  chainTxId: number
  resigned: number
  createdAt: number
  /** tokens.outside_moves when the transfer was accepted (migration 016): what its re-sign may not go beyond. */
  knownOutsideMoves: number | null
}

const columns = `id, token_id AS tokenId, team_id AS teamId, recipient, method, via, otp_code AS otpCode,
  claim_registration_id AS claimRegistrationId, chain_tx_id AS chainTxId, resigned, created_at AS createdAt,
  known_outside_moves AS knownOutsideMoves`

/** Accepted transfer requests and guestbook mints: what each chain transaction was for. */
export function createTransfersRepository(db: Db) {
  const insert = db.prepare(
    `INSERT INTO transfers (token_id, team_id, recipient, method, via, otp_code, claim_registration_id, chain_tx_id, created_at, known_outside_moves)
     VALUES (@tokenId, @teamId, @recipient, @method, @via, @otpCode, @claimRegistrationId, @chainTxId, @createdAt, @knownOutsideMoves)`,
  )
  const byTx = db.prepare<[number], TransferRow>(`SELECT ${columns} FROM transfers WHERE chain_tx_id = ?`)
  const byId = db.prepare<[number], TransferRow>(`SELECT ${columns} FROM transfers WHERE id = ?`)
  const resign = db.prepare<[number, string, number]>(
    'UPDATE transfers SET chain_tx_id = ?, method = ?, resigned = resigned + 1 WHERE id = ?',
  )
  const pendingOfToken = db.prepare<[number], { n: number }>(
    `SELECT count(*) AS n FROM transfers tr JOIN chain_txs c ON c.id = tr.chain_tx_id
     WHERE tr.token_id = ? AND c.status <> 'mined'`,
  )
  const landedOfToken = db.prepare<[number], { n: number }>(
    `SELECT count(*) AS n FROM transfers tr JOIN chain_txs c ON c.id = tr.chain_tx_id
     WHERE tr.token_id = ? AND c.status = 'mined' AND c.reverted = 0`,
  )
  const later = db.prepare<[number, number], { id: number }>('SELECT id FROM transfers WHERE token_id = ? AND id > ? LIMIT 1')
  const insertMint = db.prepare(
    `INSERT INTO guestbook_mints (event_id, recipient, chip_uid, otp_code, chain_tx_id, created_at)
     VALUES (@eventId, @recipient, @chipUid, @otpCode, @chainTxId, @createdAt)`,
  )
  const deleteMint = db.prepare<[number], { otpCode: string | null }>('DELETE FROM guestbook_mints WHERE chain_tx_id = ? RETURNING otp_code AS otpCode')
  const mintByChip = db.prepare<[number, string], { id: number; chainTxId: number }>(
    'SELECT id, chain_tx_id AS chainTxId FROM guestbook_mints WHERE event_id = ? AND chip_uid = ?',
  )
  const mintByRecipient = db.prepare<[number, string], { id: number }>(
    'SELECT id FROM guestbook_mints WHERE event_id = ? AND recipient = ?',
  )
  return {
    insert: (t: Omit<TransferRow, 'id' | 'resigned'>) => Number(insert.run(t).lastInsertRowid),
    findByTx: (chainTxId: number) => byTx.get(chainTxId),
    get: (id: number) => byId.get(id),
    /** Points a transfer at the transaction that replaced its reverted one. */
    resign: (id: number, chainTxId: number, method: TransferRow['method']) => resign.run(chainTxId, method, id),
    /** Relayed transfers of the token (our tokens row id) not mined yet: each will advance its token nonce once. */
    countPendingOfToken: (tokenRowId: number) => pendingOfToken.get(tokenRowId)!.n,
    /** Relayed transfers of the token (our tokens row id) that landed: each advanced its token nonce once. */
    countLandedOfToken: (tokenRowId: number) => landedOfToken.get(tokenRowId)!.n,
    /** Was the token (our tokens row id) transferred again after transfer `id` was accepted? */
    hasLaterOfToken: (tokenRowId: number, id: number) => later.get(tokenRowId, id) !== undefined,
    insertGuestbookMint: (m: { eventId: number; recipient: string; chipUid: string | null; otpCode: string | null; chainTxId: number; createdAt: number }) =>
      Number(insertMint.run(m).lastInsertRowid),
    /** A mint that reverted minted nothing: the chip and recipient may mint again. Returns the OTP it spent, if any. */
    forgetGuestbookMint: (chainTxId: number) => deleteMint.get(chainTxId),
    guestbookMintedByChip: (eventId: number, uid: string) => mintByChip.get(eventId, uid) !== undefined,
    /** The chip's mint of the event (a check-in links it rather than minting twice). */
    guestbookMintOfChip: (eventId: number, uid: string) => mintByChip.get(eventId, uid),
    guestbookMintedTo: (eventId: number, recipient: string) => mintByRecipient.get(eventId, recipient) !== undefined,
  }
}
