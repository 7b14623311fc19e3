import type { Db } from './sqlite/openDatabase.js'

export const otpTypes = ['PHYGITAL_CLAIM', 'PROOF_EVENT', 'GUESTBOOK_EVENT'] as const
export type OtpType = (typeof otpTypes)[number]

export type OtpRow = {
  code: string
  teamId: number
  refId: string
  chipUid: string
  type: OtpType
  tokenId: number | null
  proofEventId: number | null
  guestbookEventId: number | null
  createdAt: number
  expiresAt: number
  usedAt: number | null
  usedFor: string | null
  /** The token's moves when the OTP was issued (migration 011); null: no token then. */
  tokenMoves: number | null
}

const columns = `code, team_id AS teamId, ref_id AS refId, chip_uid AS chipUid, type, token_id AS tokenId,
  proof_event_id AS proofEventId, guestbook_event_id AS guestbookEventId, created_at AS createdAt,
  expires_at AS expiresAt, used_at AS usedAt, used_for AS usedFor, token_moves AS tokenMoves`

export type OtpInsert = Omit<OtpRow, 'usedAt' | 'usedFor'>

/** An OTP with what it targets, in one row: GET /otps/:id is a hot, unauthenticated read. */
export type OtpDetailRow = Pick<OtpRow, 'code' | 'type' | 'createdAt' | 'expiresAt' | 'usedAt' | 'tokenMoves'> & {
  /** The moves of the token the OTP targets (its chip's token now, for a chip's own OTP). */
  tokenMovesNow: number | null
  tokenChainId: number | null
  tokenContract: string | null
  tokenTokenId: string | null
  proofId: number | null
  proofEventId: number | null
  proofStatus: string | null
  eventId: number | null
  eventName: string | null
  eventTokenId: string | null
  eventCreatedAt: number | null
  eventChainId: number | null
  eventContract: string | null
}

/** An OTP with what it is bound to: its token (or its chip's, for an OTP issued before the link), proof or guestbook event (both engines). */
export const otpDetailFrom = `FROM otps o
     LEFT JOIN tokens t ON t.id = o.token_id
     LEFT JOIN token_chips tc ON o.token_id IS NULL AND o.type = 'PHYGITAL_CLAIM' AND tc.chip_uid = o.chip_uid
     LEFT JOIN tokens ct ON ct.id = tc.token_id
     LEFT JOIN proof_events p ON p.id = o.proof_event_id
     LEFT JOIN guestbook_events e ON e.id = o.guestbook_event_id
     LEFT JOIN guestbook_contracts c ON c.id = e.contract_id`

export function createOtpsRepository(db: Db) {
  const insert = db.prepare(
    `INSERT INTO otps (code, team_id, ref_id, chip_uid, type, token_id, proof_event_id, guestbook_event_id, created_at, expires_at, token_moves)
     VALUES (@code, @teamId, @refId, @chipUid, @type, @tokenId, @proofEventId, @guestbookEventId, @createdAt, @expiresAt, @tokenMoves)`,
  )
  const byCode = db.prepare<[string], OtpRow>(`SELECT ${columns} FROM otps WHERE code = ?`)
  const detail = db.prepare<[string], OtpDetailRow>(
    `SELECT o.code, o.type, o.created_at AS createdAt, o.expires_at AS expiresAt, o.used_at AS usedAt,
       o.token_moves AS tokenMoves, coalesce(t.moves, ct.moves) AS tokenMovesNow, t.chain_id AS tokenChainId, t.contract_address AS tokenContract, t.token_id AS tokenTokenId,
       p.id AS proofId, p.proof_event_id AS proofEventId, p.status AS proofStatus,
       e.id AS eventId, e.name AS eventName, e.token_id AS eventTokenId, e.created_at AS eventCreatedAt,
       c.chain_id AS eventChainId, c.address AS eventContract
     ${otpDetailFrom}
     WHERE o.code = ?`,
  )
  const use = db.prepare<[number, string, string]>(
    'UPDATE otps SET used_at = ?, used_for = ? WHERE code = ? AND used_at IS NULL',
  )
  const unuse = db.prepare<[string]>('UPDATE otps SET used_at = NULL, used_for = NULL WHERE code = ? AND used_at IS NOT NULL')
  const remove = db.prepare<[string, number]>('DELETE FROM otps WHERE code = ? AND team_id = ?')
  const rebind = db.prepare<[number, string]>('UPDATE otps SET token_moves = ? WHERE code = ?')
  return {
    insert: (o: OtpInsert) => insert.run(o),
    get: (code: string) => byCode.get(code),
    getDetail: (code: string) => detail.get(code),
    /** @returns true when this call used the code, false when it had been used already */
    markUsed: (code: string, usedFor: string, now: number) => use.run(now, usedFor, code).changes === 1,
    /** Gives a spent code back (its write reverted on chain and will not be retried); its expiry is unchanged. */
    release: (code: string) => unuse.run(code).changes === 1,
    delete: (code: string, teamId: number) => remove.run(code, teamId).changes === 1,
    /** The OTP's own transfer is the token's newest move: given back (a transfer given up), it works until the next one. */
    bindToMoves: (code: string, moves: number) => rebind.run(moves, code),
  }
}
