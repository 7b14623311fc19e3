import type { ChainTxRow, MinedReceipt } from '../db/chainTxs.js'
import type { Store, Repositories } from '../db/store.js'
import { recordTxStep } from '../feed/txProgress.js'

/**
 * Records a mined transaction and what it means for the records that caused
 * it. Runs inside the relayer's store.tx. Returns false when another process
 * (a second gateway on the data dir) recorded it first: only one reacts.
 */
export async function settleTx(store: Repositories, row: ChainTxRow, receipt: MinedReceipt): Promise<boolean> {
  if (!await store.chainTxs.markMined(row.id, receipt)) return false
  if (receipt.reverted) {
    // A guestbook mint is never retried: what it used up is given back, so the chip, the
    // recipient and the tap's OTP may mint again (a reverted transaction can never land later).
    if (row.kind === 'guestbook_mint') {
      // A check-in's mint: its kiosk shows "failed" (staff may retry); the check-in keeps the tx id only.
      await recordTxStep(store, row, { status: 'failed', hash: receipt.txHash, error: 'the transaction reverted', now: receipt.now })
      await store.checkIns.dropMintOfTx(row.id)
      const mint = await store.transfers.forgetGuestbookMint(row.id)
      if (mint?.otpCode) await store.otps.release(mint.otpCode)
    }
    return true
  }
  await recordTxStep(store, row, { status: 'confirmed', hash: receipt.txHash, now: receipt.now })
  // A guestbook is listed as pending (address null) until its deploy is mined.
  if (row.kind === 'deploy_guestbook') await store.guestbook.confirmDeployed(row.id)
  return true
}
