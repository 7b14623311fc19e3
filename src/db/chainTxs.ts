import type { Db } from './sqlite/openDatabase.js'

export const chainTxKinds = ['deploy_phygital', 'deploy_guestbook', 'transfer', 'guestbook_mint', 'pause', 'metadata_refresh'] as const
export type ChainTxKind = (typeof chainTxKinds)[number]

export type ChainTxRow = {
  id: number
  chainId: number
  sender: string
  nonce: number
  kind: ChainTxKind
  toAddress: string | null
  data: string
  gas: number
  maxFeePerGas: string
  maxPriorityFeePerGas: string
  rawTx: string
  txHash: string
  initialTxHash: string
  status: 'queued' | 'sent' | 'mined'
  reverted: number | null
  blockNumber: number | null
  blockTimestamp: number | null
  contractAddress: string | null
  createdAt: number
  sentAt: number | null
  minedAt: number | null
  lastError: string | null
} & TxWatcher

/**
 * The station that shows a transaction's progress, for which of its check-ins or claims (both null
 * when the transaction is a station's but neither, never today). All null: nobody watches it.
 */
export type TxWatcher = { stationId: number | null; checkInId: number | null; claimId: number | null }

export type ChainTxInsert = Pick<
  ChainTxRow,
  'chainId' | 'sender' | 'nonce' | 'kind' | 'toAddress' | 'data' | 'gas' | 'maxFeePerGas' | 'maxPriorityFeePerGas' | 'rawTx' | 'txHash' | 'createdAt'
>

export type MinedReceipt = {
  txHash: string
  blockNumber: number
  blockTimestamp: number
  reverted: boolean
  contractAddress: string | null
  now: number
}

export type ChainHead = { chainId: number; blockNumber: number; maxFeePerGas: string; maxPriorityFeePerGas: string; updatedAt: number }

const columns = `id, chain_id AS chainId, sender, nonce, kind, to_address AS toAddress, data, gas,
  max_fee_per_gas AS maxFeePerGas, max_priority_fee_per_gas AS maxPriorityFeePerGas, raw_tx AS rawTx,
  tx_hash AS txHash, initial_tx_hash AS initialTxHash, status, reverted, block_number AS blockNumber,
  block_timestamp AS blockTimestamp, contract_address AS contractAddress, created_at AS createdAt,
  sent_at AS sentAt, mined_at AS minedAt, last_error AS lastError, station_id AS stationId, check_in_id AS checkInId,
  claim_id AS claimId`

/**
 * The relayer's outbox and the per-chain counters that go with it: relayer
 * nonces, the last head and fee data seen, and the token nonces our relayed
 * transfers sign with.
 */
export function createChainTxsRepository(db: Db) {
  const insert = db.prepare(
    `INSERT INTO chain_txs (chain_id, sender, nonce, kind, to_address, data, gas, max_fee_per_gas,
       max_priority_fee_per_gas, raw_tx, tx_hash, initial_tx_hash, status, created_at)
     VALUES (@chainId, @sender, @nonce, @kind, @toAddress, @data, @gas, @maxFeePerGas,
       @maxPriorityFeePerGas, @rawTx, @txHash, @txHash, 'queued', @createdAt)`,
  )
  const insertAttempt = db.prepare<[string, number, string, string, number]>(
    'INSERT OR IGNORE INTO chain_tx_attempts (tx_hash, chain_tx_id, raw_tx, max_fee_per_gas, created_at) VALUES (?, ?, ?, ?, ?)',
  )
  const byId = db.prepare<[number], ChainTxRow>(`SELECT ${columns} FROM chain_txs WHERE id = ?`)
  const open = db.prepare<[number], ChainTxRow>(
    `SELECT ${columns} FROM chain_txs WHERE chain_id = ? AND status <> 'mined' ORDER BY sender, nonce`,
  )
  const byStatus = db.prepare<[number, string, number], ChainTxRow>(
    `SELECT ${columns} FROM chain_txs WHERE chain_id = ? AND status = ? ORDER BY sender, nonce LIMIT ?`,
  )
  const all = db.prepare<[number], ChainTxRow>(`SELECT ${columns} FROM chain_txs WHERE chain_id = ? ORDER BY sender, nonce`)
  const fromNonce = db.prepare<[number, string, number], ChainTxRow>(
    `SELECT ${columns} FROM chain_txs WHERE chain_id = ? AND sender = ? AND nonce >= ? ORDER BY nonce`,
  )
  const attemptHashes = db.prepare<[number], { txHash: string }>(
    'SELECT tx_hash AS txHash FROM chain_tx_attempts WHERE chain_tx_id = ? ORDER BY created_at',
  )
  const markSent = db.prepare<[number, string, number]>(
    "UPDATE chain_txs SET status = 'sent', sent_at = coalesce(sent_at, ?), sent_by = ?, last_error = NULL WHERE id = ? AND status = 'queued'",
  )
  const markMined = db.prepare(
    `UPDATE chain_txs SET status = 'mined', tx_hash = @txHash, block_number = @blockNumber, block_timestamp = @blockTimestamp,
       reverted = @reverted, contract_address = @contractAddress, mined_at = @now, last_error = NULL
     WHERE id = @id AND status <> 'mined'`,
  )
  const replace = db.prepare(
    `UPDATE chain_txs SET raw_tx = @rawTx, tx_hash = @txHash, max_fee_per_gas = @maxFeePerGas,
       max_priority_fee_per_gas = @maxPriorityFeePerGas, sent_at = @now
     WHERE id = @id AND status <> 'mined'`,
  )
  const sentBy = db.prepare<[number], { holder: string; n: number }>(
    'SELECT sent_by AS holder, count(*) AS n FROM chain_txs WHERE chain_id = ? AND sent_by IS NOT NULL GROUP BY sent_by',
  )
  const attemptRaw = db.prepare<[string], { rawTx: string }>('SELECT raw_tx AS rawTx FROM chain_tx_attempts WHERE tx_hash = ?')
  const requeue = db.prepare<[number]>("UPDATE chain_txs SET status = 'queued' WHERE id = ? AND status = 'sent'")
  const setError = db.prepare<[string, number]>('UPDATE chain_txs SET last_error = ? WHERE id = ?')
  const watch = db.prepare('UPDATE chain_txs SET station_id = @stationId, check_in_id = @checkInId, claim_id = @claimId WHERE id = @id')
  const countOpen = db.prepare<[number], { n: number }>("SELECT count(*) AS n FROM chain_txs WHERE chain_id = ? AND status <> 'mined'")

  const nextNonce = db.prepare<[number, string], { nonce: number }>(
    'UPDATE relayer_nonces SET next_nonce = next_nonce + 1 WHERE chain_id = ? AND sender = ? RETURNING next_nonce - 1 AS nonce',
  )
  const raiseNonce = db.prepare<[number, string, number]>(
    `INSERT INTO relayer_nonces (chain_id, sender, next_nonce) VALUES (?, ?, ?)
     ON CONFLICT (chain_id, sender) DO UPDATE SET next_nonce = max(next_nonce, excluded.next_nonce)`,
  )
  const peekNonce = db.prepare<[number, string], { next: number }>(
    'SELECT next_nonce AS next FROM relayer_nonces WHERE chain_id = ? AND sender = ?',
  )

  const getHead = db.prepare<[number], ChainHead>(
    `SELECT chain_id AS chainId, block_number AS blockNumber, max_fee_per_gas AS maxFeePerGas,
       max_priority_fee_per_gas AS maxPriorityFeePerGas, updated_at AS updatedAt FROM chain_heads WHERE chain_id = ?`,
  )
  const setHead = db.prepare(
    `INSERT INTO chain_heads (chain_id, block_number, max_fee_per_gas, max_priority_fee_per_gas, updated_at)
     VALUES (@chainId, @blockNumber, @maxFeePerGas, @maxPriorityFeePerGas, @updatedAt)
     ON CONFLICT (chain_id) DO UPDATE SET block_number = excluded.block_number, max_fee_per_gas = excluded.max_fee_per_gas,
       max_priority_fee_per_gas = excluded.max_priority_fee_per_gas, updated_at = excluded.updated_at`,
  )

  const nextTokenNonce = db.prepare<[number, string, string, number, number], { nonce: number }>(
    `INSERT INTO token_nonces (chain_id, contract, token_id, next_nonce) VALUES (?, ?, ?, ? + 1)
     ON CONFLICT (chain_id, contract, token_id) DO UPDATE SET next_nonce = max(next_nonce, ?) + 1
     RETURNING next_nonce - 1 AS nonce`,
  )
  const setTokenNonce = db.prepare<[number, string, string, number]>(
    `INSERT INTO token_nonces (chain_id, contract, token_id, next_nonce) VALUES (?, ?, ?, ?)
     ON CONFLICT (chain_id, contract, token_id) DO UPDATE SET next_nonce = excluded.next_nonce`,
  )

  return {
    insert: (tx: ChainTxInsert): number => {
      const id = Number(insert.run(tx).lastInsertRowid)
      insertAttempt.run(tx.txHash, id, tx.rawTx, tx.maxFeePerGas, tx.createdAt)
      return id
    },
    get: (id: number) => byId.get(id),
    /** Not yet mined, in nonce order per sender: what the relayer still has to send or follow. */
    open: (chainId: number) => open.all(chainId),
    all: (chainId: number) => all.all(chainId),
    /** The first `limit` queued (or sent) transactions, in nonce order per sender. */
    withStatus: (chainId: number, status: 'queued' | 'sent', limit: number) => byStatus.all(chainId, status, limit),
    /** The sender's transactions from `nonce` on, in nonce order. */
    fromNonce: (chainId: number, sender: string, nonce: number) => fromNonce.all(chainId, sender, nonce),
    attemptHashes: (id: number) => attemptHashes.all(id).map((r) => r.txHash),
    /** `sentBy`: the relayer instance's lease holder id. */
    markSent: (id: number, now: number, sentBy: string) => markSent.run(now, sentBy, id).changes === 1,
    /** How many transactions of the chain each relayer instance marked sent (holder id → count). */
    sentBy: (chainId: number) => new Map(sentBy.all(chainId).map((r) => [r.holder, r.n])),
    markMined: (id: number, r: MinedReceipt) => markMined.run({ ...r, id, reverted: r.reverted ? 1 : 0 }).changes === 1,
    /** Records a fee replacement: the new signed version becomes current; the old hashes stay as attempts. */
    replace: (id: number, r: { rawTx: string; txHash: string; maxFeePerGas: string; maxPriorityFeePerGas: string; now: number }) => {
      replace.run({ ...r, id })
      insertAttempt.run(r.txHash, id, r.rawTx, r.maxFeePerGas, r.now)
    },
    /** The signed bytes of one broadcast version (e.g. the one that was mined). */
    attemptRaw: (hash: string) => attemptRaw.get(hash)?.rawTx,
    /** Sent, but the chain lost it (a restored embedded chain): send it again. */
    requeue: (id: number) => requeue.run(id).changes === 1,
    setError: (id: number, message: string) => setError.run(message.slice(0, 500), id),
    /** Who shows the transaction's progress from now on (a check-in's mint, a claim's transfer, a re-sent one's successor). */
    watch: (id: number, watcher: TxWatcher) => watch.run({ ...watcher, id }),
    countOpen: (chainId: number) => countOpen.get(chainId)!.n,

    /** Allocates the sender's next nonce; `floor` is the lowest acceptable (e.g. the chain's count). */
    allocateNonce: (chainId: number, sender: string, floor = 0) => {
      raiseNonce.run(chainId, sender, floor)
      return nextNonce.get(chainId, sender)!.nonce
    },
    /** Makes sure the next nonce is at least `floor` (the chain knows of more txs than we do). */
    raiseNonce: (chainId: number, sender: string, floor: number) => raiseNonce.run(chainId, sender, floor),
    peekNonce: (chainId: number, sender: string) => peekNonce.get(chainId, sender)?.next ?? 0,

    getHead: (chainId: number) => getHead.get(chainId),
    setHead: (head: ChainHead) => setHead.run(head),

    /** The token nonce a relayed transfer of `tokenId` signs with (one per move); `floor` is the on-chain value when known. */
    allocateTokenNonce: (chainId: number, contract: string, tokenId: string, floor = 0) =>
      nextTokenNonce.get(chainId, contract, tokenId, floor, floor)!.nonce,
    /** Resets the counter to what the chain says (after a revert showed our view was stale). */
    setTokenNonce: (chainId: number, contract: string, tokenId: string, next: number) =>
      setTokenNonce.run(chainId, contract, tokenId, next),
  }
}
