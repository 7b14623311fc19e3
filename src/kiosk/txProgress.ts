import type { ChainTxRow } from '../db/chainTxs.js'
import type { Store } from '../db/store.js'
import type { TxStatus } from './protocol.js'

/**
 * Appends a `tx` row to the feed of the station whose check-in this transaction mints for, inside
 * the relayer's store.tx (so the step and its feed row commit together). Other transactions have
 * no station: nothing is appended.
 *
 * @returns true when a row was appended (the caller then tells the feed hub)
 */
export function recordTxStep(store: Store, row: Pick<ChainTxRow, 'id' | 'kind'>, step: { status: TxStatus; hash: string | null; error?: string; now: number }): boolean {
  if (row.kind !== 'guestbook_mint') return false
  const checkIn = store.checkIns.findByTx(row.id)
  if (!checkIn) return false
  store.stationEvents.append(
    checkIn.stationId,
    'tx',
    { txId: row.id, checkInId: checkIn.id, status: step.status, hash: step.hash, ...(step.error ? { error: step.error } : {}) },
    step.now,
  )
  return true
}
