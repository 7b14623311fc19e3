import type { ChainTxRow, TxWatcher } from '../db/chainTxs.js'
import type { Tx } from '../db/types.js'
import type { TxStatus } from '../wire/feedProtocol.js'

/** A station's check-in or claim whose chain transaction its kiosk follows. */
export type StationTxWatcher = { stationId: number; checkInId: number | null; claimId: number | null }

/**
 * A station's check-in or claim just queued chain transaction `txId` (a mint, a transfer, a staff
 * retry's new one): the outbox row records who watches it, and the station's feed gets its `queued`
 * row, in the caller's transaction. Every later step (recordTxStep) is written from the row alone.
 */
export async function watchTx(tx: Tx, txId: number, watcher: StationTxWatcher, step: { hash: string; now: number }): Promise<void> {
  await tx.chainTxs.watch(txId, watcher)
  await appendStep(tx, txId, watcher, { status: 'queued', hash: step.hash, now: step.now })
}

/**
 * A relayed transfer was re-signed as a new transaction: whoever watched the old one follows the new
 * one, and a claim points at it (its retry and its page read the claim's transaction).
 */
export async function passWatch(tx: Tx, from: TxWatcher, toTxId: number): Promise<void> {
  if (from.stationId === null) return
  await tx.chainTxs.watch(toTxId, from)
  if (from.claimId !== null) await tx.claims.setTx(from.claimId, toTxId)
}

/**
 * Appends a step of the transaction (sent, replaced, confirmed, failed) to the feed of the station
 * that watches it, inside the relayer's transaction, so the step and its feed row commit together.
 * A transaction nobody watches (an API mint, a deploy) appends nothing.
 *
 * @returns true when a row was appended (the store tells the feed hub once it commits)
 */
export async function recordTxStep(
  tx: Tx,
  row: Pick<ChainTxRow, 'id' | keyof TxWatcher>,
  step: { status: Exclude<TxStatus, 'queued'>; hash: string | null; error?: string; now: number },
): Promise<boolean> {
  if (row.stationId === null) return false
  await appendStep(tx, row.id, { stationId: row.stationId, checkInId: row.checkInId, claimId: row.claimId }, step)
  return true
}

async function appendStep(tx: Tx, txId: number, w: StationTxWatcher, step: { status: TxStatus; hash: string | null; error?: string; now: number }): Promise<void> {
  await tx.stationEvents.append(
    w.stationId,
    'tx',
    {
      txId,
      checkInId: w.checkInId,
      ...(w.claimId !== null ? { claimId: w.claimId } : {}),
      status: step.status,
      hash: step.hash,
      ...(step.error ? { error: step.error } : {}),
    },
    step.now,
  )
}

/** A chain_txs row as the kiosk strip shows it. */
export function txStatusOf(row: Pick<ChainTxRow, 'status' | 'reverted' | 'txHash' | 'initialTxHash'>): TxStatus {
  if (row.status === 'mined') return row.reverted ? 'failed' : 'confirmed'
  if (row.status === 'sent') return row.txHash === row.initialTxHash ? 'sent' : 'replaced'
  return 'queued'
}
