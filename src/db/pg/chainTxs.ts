import type { ChainHead, ChainTxRow, createChainTxsRepository } from '../chainTxs.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

// reverted keeps SQLite's 0/1 in the row type (see types.ts).
const columns = `id, chain_id, sender, nonce, kind, to_address, data, gas, max_fee_per_gas, max_priority_fee_per_gas, raw_tx,
  tx_hash, initial_tx_hash, status, reverted::int AS reverted, block_number, block_timestamp, contract_address, created_at,
  sent_at, mined_at, last_error, station_id, check_in_id, claim_id`

// SQLite orders text by its bytes (BINARY); the database's default collation may not (e.g. en_US puts 'a' before 'B').
const bySenderNonce = 'ORDER BY sender COLLATE "C", nonce'

export function createPgChainTxsRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createChainTxsRepository>> {
  return {
    // One statement, so the row and its first attempt are written together without a transaction of our own.
    // Notifies every gateway's relayer (LISTEN tapgate_outbox) on commit: the lease holder sends at once, wherever it was queued.
    async insert(tx) {
      const [row] = await sql<{ id: number }[]>`
        WITH inserted AS (
          INSERT INTO chain_txs (chain_id, sender, nonce, kind, to_address, data, gas, max_fee_per_gas,
            max_priority_fee_per_gas, raw_tx, tx_hash, initial_tx_hash, status, created_at)
          VALUES (${tx.chainId}, ${tx.sender}, ${tx.nonce}, ${tx.kind}, ${tx.toAddress}, ${tx.data}, ${tx.gas}, ${tx.maxFeePerGas},
            ${tx.maxPriorityFeePerGas}, ${tx.rawTx}, ${tx.txHash}, ${tx.txHash}, 'queued', ${tx.createdAt})
          RETURNING id
        ), attempt AS (
          INSERT INTO chain_tx_attempts (tx_hash, chain_tx_id, raw_tx, max_fee_per_gas, created_at)
          SELECT ${tx.txHash}, id, ${tx.rawTx}, ${tx.maxFeePerGas}, ${tx.createdAt} FROM inserted
          ON CONFLICT DO NOTHING
        )
        SELECT id FROM inserted, (SELECT pg_notify('tapgate_outbox', ${String(tx.chainId)})) notified`
      return row!.id
    },
    async get(id) {
      const [row] = await sql<ChainTxRow[]>`SELECT ${sql.unsafe(columns)} FROM chain_txs WHERE id = ${id}`
      return row
    },
    async open(chainId) {
      return [...(await sql<ChainTxRow[]>`SELECT ${sql.unsafe(columns)} FROM chain_txs WHERE chain_id = ${chainId} AND status <> 'mined' ${sql.unsafe(bySenderNonce)}`)]
    },
    async all(chainId) {
      return [...(await sql<ChainTxRow[]>`SELECT ${sql.unsafe(columns)} FROM chain_txs WHERE chain_id = ${chainId} ${sql.unsafe(bySenderNonce)}`)]
    },
    async withStatus(chainId, status, limit) {
      return [
        ...(await sql<ChainTxRow[]>`SELECT ${sql.unsafe(columns)} FROM chain_txs WHERE chain_id = ${chainId} AND status = ${status}
          ${sql.unsafe(bySenderNonce)} LIMIT ${limit}`),
      ]
    },
    async fromNonce(chainId, sender, nonce) {
      return [...(await sql<ChainTxRow[]>`SELECT ${sql.unsafe(columns)} FROM chain_txs WHERE chain_id = ${chainId} AND sender = ${sender} AND nonce >= ${nonce} ORDER BY nonce`)]
    },
    async attemptHashes(id) {
      const rows = await sql<{ txHash: string }[]>`SELECT tx_hash FROM chain_tx_attempts WHERE chain_tx_id = ${id} ORDER BY created_at`
      return rows.map((r) => r.txHash)
    },
    // Conditional: of two gateways' relayers only one marks a queued row sent.
    async markSent(id, now, sentBy) {
      const rows = await sql`UPDATE chain_txs SET status = 'sent', sent_at = coalesce(sent_at, ${now}), sent_by = ${sentBy}, last_error = NULL
        WHERE id = ${id} AND status = 'queued' RETURNING id`
      return rows.length === 1
    },
    async sentBy(chainId) {
      const rows = await sql<{ holder: string; n: number }[]>`SELECT sent_by AS holder, count(*) AS n FROM chain_txs
        WHERE chain_id = ${chainId} AND sent_by IS NOT NULL GROUP BY sent_by ORDER BY sent_by COLLATE "C"`
      return new Map(rows.map((r) => [r.holder, r.n]))
    },
    async markMined(id, r) {
      const rows = await sql`UPDATE chain_txs SET status = 'mined', tx_hash = ${r.txHash}, block_number = ${r.blockNumber},
          block_timestamp = ${r.blockTimestamp}, reverted = ${r.reverted}, contract_address = ${r.contractAddress}, mined_at = ${r.now}, last_error = NULL
        WHERE id = ${id} AND status <> 'mined' RETURNING id`
      return rows.length === 1
    },
    // As on SQLite, the attempt is recorded even when the row was mined meanwhile: it was broadcast.
    async replace(id, r) {
      await sql`
        WITH updated AS (
          UPDATE chain_txs SET raw_tx = ${r.rawTx}, tx_hash = ${r.txHash}, max_fee_per_gas = ${r.maxFeePerGas},
            max_priority_fee_per_gas = ${r.maxPriorityFeePerGas}, sent_at = ${r.now}
          WHERE id = ${id} AND status <> 'mined'
        )
        INSERT INTO chain_tx_attempts (tx_hash, chain_tx_id, raw_tx, max_fee_per_gas, created_at)
        VALUES (${r.txHash}, ${id}, ${r.rawTx}, ${r.maxFeePerGas}, ${r.now})
        ON CONFLICT DO NOTHING`
    },
    async attemptRaw(hash) {
      const [row] = await sql<{ rawTx: string }[]>`SELECT raw_tx FROM chain_tx_attempts WHERE tx_hash = ${hash}`
      return row?.rawTx
    },
    async requeue(id) {
      const rows = await sql`UPDATE chain_txs SET status = 'queued' WHERE id = ${id} AND status = 'sent' RETURNING id`
      return rows.length === 1
    },
    async setError(id, message) {
      await sql`UPDATE chain_txs SET last_error = ${message.slice(0, 500)} WHERE id = ${id}`
    },
    async watch(id, w) {
      await sql`UPDATE chain_txs SET station_id = ${w.stationId}, check_in_id = ${w.checkInId}, claim_id = ${w.claimId} WHERE id = ${id}`
    },
    async countOpen(chainId) {
      const [row] = await sql<{ n: number }[]>`SELECT count(*) AS n FROM chain_txs WHERE chain_id = ${chainId} AND status <> 'mined'`
      return row!.n
    },

    // SQLite raises then increments (two statements under its one writer); here one upsert does both. Its row
    // lock is held to COMMIT, so a concurrent allocation waits and gets the next nonce, and a rolled-back
    // allocation gives its nonce back: never one nonce twice, never a gap.
    async allocateNonce(chainId, sender, floor = 0) {
      const [row] = await sql<{ nonce: number }[]>`
        INSERT INTO relayer_nonces (chain_id, sender, next_nonce) VALUES (${chainId}, ${sender}, ${floor}::bigint + 1)
        ON CONFLICT (chain_id, sender) DO UPDATE SET next_nonce = GREATEST(relayer_nonces.next_nonce, ${floor}::bigint) + 1
        RETURNING next_nonce - 1 AS nonce`
      return row!.nonce
    },
    async raiseNonce(chainId, sender, floor) {
      await sql`INSERT INTO relayer_nonces (chain_id, sender, next_nonce) VALUES (${chainId}, ${sender}, ${floor})
        ON CONFLICT (chain_id, sender) DO UPDATE SET next_nonce = GREATEST(relayer_nonces.next_nonce, excluded.next_nonce)`
    },
    async peekNonce(chainId, sender) {
      const [row] = await sql<{ nextNonce: number }[]>`SELECT next_nonce FROM relayer_nonces WHERE chain_id = ${chainId} AND sender = ${sender}`
      return row?.nextNonce ?? 0
    },

    async getHead(chainId) {
      const [row] = await sql<ChainHead[]>`SELECT chain_id, block_number, max_fee_per_gas, max_priority_fee_per_gas, updated_at
        FROM chain_heads WHERE chain_id = ${chainId}`
      return row
    },
    async setHead(head) {
      await sql`INSERT INTO chain_heads (chain_id, block_number, max_fee_per_gas, max_priority_fee_per_gas, updated_at)
        VALUES (${head.chainId}, ${head.blockNumber}, ${head.maxFeePerGas}, ${head.maxPriorityFeePerGas}, ${head.updatedAt})
        ON CONFLICT (chain_id) DO UPDATE SET block_number = excluded.block_number, max_fee_per_gas = excluded.max_fee_per_gas,
          max_priority_fee_per_gas = excluded.max_priority_fee_per_gas, updated_at = excluded.updated_at`
    },

    async allocateTokenNonce(chainId, contract, tokenId, floor = 0) {
      const [row] = await sql<{ nonce: number }[]>`
        INSERT INTO token_nonces (chain_id, contract, token_id, next_nonce) VALUES (${chainId}, ${contract}, ${tokenId}, ${floor}::bigint + 1)
        ON CONFLICT (chain_id, contract, token_id) DO UPDATE SET next_nonce = GREATEST(token_nonces.next_nonce, ${floor}::bigint) + 1
        RETURNING next_nonce - 1 AS nonce`
      return row!.nonce
    },
    async setTokenNonce(chainId, contract, tokenId, next) {
      await sql`INSERT INTO token_nonces (chain_id, contract, token_id, next_nonce) VALUES (${chainId}, ${contract}, ${tokenId}, ${next})
        ON CONFLICT (chain_id, contract, token_id) DO UPDATE SET next_nonce = excluded.next_nonce`
    },
  }
}
