import type { Db } from './sqlite/openDatabase.js'

export type TokenRow = {
  id: number
  teamId: number
  chainId: number
  contractAddress: string
  tokenId: string
  metadata: string | null
  twoTapClaim: number
  claimDelaySeconds: number
  claimWindowSeconds: number
  createdAt: number
  updatedAt: number
  /** 1 once a mint was queued by us or seen on chain: the next transfer is a claimNFT. */
  minted: number
  /** The moves of the token the gateway knows of (migration 011): an OTP issued before the last one is stale. */
  moves: number
  /** The moves made outside the gateway at the last quiet read of the token's nonce (migration 011); null before any. */
  outsideMoves: number | null
}

/** The on-chain identity of a token: what API callers send. */
export type TokenKey = { chainId: number; contractAddress: string; tokenId: string }

const columns = `t.id, t.team_id AS teamId, t.chain_id AS chainId, t.contract_address AS contractAddress,
  t.token_id AS tokenId, t.metadata, t.two_tap_claim AS twoTapClaim,
  t.claim_delay_seconds AS claimDelaySeconds, t.claim_window_seconds AS claimWindowSeconds,
  t.created_at AS createdAt, t.updated_at AS updatedAt, t.minted, t.moves, t.outside_moves AS outsideMoves`

export type TokenWrite = TokenKey & {
  teamId: number
  metadata: string | null
  twoTapClaim: boolean
  claimDelaySeconds: number
  claimWindowSeconds: number
  now: number
}

export function createTokensRepository(db: Db) {
  const insert = db.prepare(
    `INSERT INTO tokens (team_id, chain_id, contract_address, token_id, metadata, two_tap_claim,
       claim_delay_seconds, claim_window_seconds, created_at, updated_at)
     VALUES (@teamId, @chainId, @contractAddress, @tokenId, @metadata, @twoTapClaim,
       @claimDelaySeconds, @claimWindowSeconds, @now, @now)`,
  )
  const update = db.prepare(
    `UPDATE tokens SET metadata = @metadata, two_tap_claim = @twoTapClaim,
       claim_delay_seconds = @claimDelaySeconds, claim_window_seconds = @claimWindowSeconds, updated_at = @now
     WHERE id = @id`,
  )
  const byKey = db.prepare<[number, string, string], TokenRow>(
    `SELECT ${columns} FROM tokens t WHERE t.chain_id = ? AND t.contract_address = ? AND t.token_id = ?`,
  )
  const byId = db.prepare<[number], TokenRow>(`SELECT ${columns} FROM tokens t WHERE t.id = ?`)
  const byTeam = db.prepare<[number], TokenRow>(`SELECT ${columns} FROM tokens t WHERE t.team_id = ? ORDER BY t.id`)
  const byChip = db.prepare<[string], TokenRow>(
    `SELECT ${columns} FROM tokens t JOIN token_chips tc ON tc.token_id = t.id WHERE tc.chip_uid = ?`,
  )
  const chipsOf = db.prepare<[number], { uid: string }>(
    'SELECT chip_uid AS uid FROM token_chips WHERE token_id = ? ORDER BY linked_at, chip_uid',
  )
  const link = db.prepare<[number, string, number]>(
    'INSERT INTO token_chips (token_id, chip_uid, linked_at) VALUES (?, ?, ?) ON CONFLICT (chip_uid) DO UPDATE SET token_id = excluded.token_id, linked_at = excluded.linked_at WHERE token_id <> excluded.token_id',
  )
  const setMetadata = db.prepare<[string, number, number]>('UPDATE tokens SET metadata = ?, updated_at = ? WHERE id = ?')
  const setMinted = db.prepare<[number, number]>('UPDATE tokens SET minted = ? WHERE id = ?')
  const moved = db.prepare<[number], { moves: number }>('UPDATE tokens SET moves = moves + 1 WHERE id = ? RETURNING moves')
  // Only a rise of the outside count is a move: a lower one is a chain that lost blocks, not a token moving back.
  const outside = db.prepare<{ id: number; outside: number }, { moves: number }>(
    `UPDATE tokens SET
       moves = moves + CASE WHEN outside_moves IS NOT NULL AND @outside > outside_moves THEN @outside - outside_moves ELSE 0 END,
       outside_moves = CASE WHEN outside_moves IS NULL OR @outside > outside_moves THEN @outside ELSE outside_moves END
     WHERE id = @id RETURNING moves`,
  )
  const toParams = (t: TokenWrite) => ({ ...t, twoTapClaim: t.twoTapClaim ? 1 : 0 })
  return {
    insert: (t: TokenWrite) => Number(insert.run(toParams(t)).lastInsertRowid),
    update: (id: number, t: TokenWrite) => update.run({ ...toParams(t), id }),
    findByKey: (k: TokenKey) => byKey.get(k.chainId, k.contractAddress, k.tokenId),
    get: (id: number) => byId.get(id),
    /** The team's tokens, oldest first (the hosted API's items). */
    listByTeam: (teamId: number) => byTeam.all(teamId),
    findByChip: (uid: string) => byChip.get(uid),
    chipUids: (id: number) => chipsOf.all(id).map((r) => r.uid),
    linkChip: (tokenRowId: number, uid: string, now: number) => link.run(tokenRowId, uid, now),
    setMetadata: (id: number, metadata: string, now: number) => setMetadata.run(metadata, now, id),
    /** @returns true when the row changed (false: no such token) */
    /** The token, read for an update: PostgreSQL locks its row to COMMIT; a SQLite transaction already holds the write lock. */
    lock: (id: number) => byId.get(id),
    setMinted: (id: number, minted: boolean) => setMinted.run(minted ? 1 : 0, id).changes === 1,
    /** A move the gateway accepted (a relayed transfer). @returns the token's moves now */
    addMove: (id: number) => moved.get(id)!.moves,
    /**
     * The moves made outside the gateway as a quiet chain read counts them (its nonce minus our
     * landed transfers): a rise adds to `moves`; the first read only sets the baseline.
     * @returns the token's moves now
     */
    noteOutsideMoves: (id: number, outsideMoves: number) => outside.get({ id, outside: outsideMoves })!.moves,
  }
}
