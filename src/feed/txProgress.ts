import type { ChainTxRow } from '../db/chainTxs.js'
import type { Store, Repositories } from '../db/store.js'
import type { TxStatus } from './protocol.js'

/**
 * Appends a `tx` row to the feed of the station whose check-in or claim this transaction is for,
 * inside the relayer's store.tx (so the step and its feed row commit together). A claim's transfer
 * is found through its transfer row, so a re-signed transfer's new transaction is followed too.
 * Other transactions have no station: nothing is appended.
 *
 * @returns true when a row was appended (the caller then tells the feed hub)
 */
export async function recordTxStep(store: Repositories, row: Pick<ChainTxRow, 'id' | 'kind'>, step: { status: TxStatus; hash: string | null; error?: string; now: number }): Promise<boolean> {
  let checkIn = undefined
  let claim = undefined
  if (row.kind === 'guestbook_mint') {
    checkIn = await store.checkIns.findByTx(row.id)
    claim = await store.claims.findByTx(row.id)
  } else if (row.kind === 'transfer') {
    const transfer = await store.transfers.findByTx(row.id)
    claim = transfer && await store.claims.findByTransfer(transfer.id)
    if (claim && claim.chainTxId !== row.id) await store.claims.setTx(claim.id, row.id)
  }
  const stationId = checkIn?.stationId ?? claim?.stationId
  if (stationId === undefined) return false
  await store.stationEvents.append(
    stationId,
    'tx',
    {
      txId: row.id,
      checkInId: checkIn?.id ?? claim?.checkInId ?? null,
      ...(claim ? { claimId: claim.id } : {}),
      status: step.status,
      hash: step.hash,
      ...(step.error ? { error: step.error } : {}),
    },
    step.now,
  )
  return true
}
