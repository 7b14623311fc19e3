import type { ChainTxRow, MinedReceipt } from '../db/chainTxs.js'
import type { Tx } from '../db/types.js'
import { recordTxStep } from '../feed/txProgress.js'

/**
 * Records a mined transaction and what it means for the records that caused
 * it, inside the relayer's transaction (`tx`). Returns false when another process
 * (a second gateway on the data dir) recorded it first: only one reacts.
 */
export async function settleTx(tx: Tx, row: ChainTxRow, receipt: MinedReceipt): Promise<boolean> {
  if (!await tx.chainTxs.markMined(row.id, receipt)) return false
  if (receipt.reverted) {
    // A guestbook mint is never retried: what it used up is given back, so the chip, the
    // recipient and the tap's OTP may mint again (a reverted transaction can never land later).
    if (row.kind === 'guestbook_mint') {
      // A check-in's mint: its kiosk shows "failed" (staff may retry); the check-in keeps the tx id only.
      await recordTxStep(tx, row, { status: 'failed', hash: receipt.txHash, error: 'the transaction reverted', now: receipt.now })
      await tx.checkIns.dropMintOfTx(row.id)
      const mint = await tx.transfers.forgetGuestbookMint(row.id)
      if (mint?.otpCode) await tx.otps.release(mint.otpCode)
    }
    return true
  }
  await recordTxStep(tx, row, { status: 'confirmed', hash: receipt.txHash, now: receipt.now })
  // A guestbook is listed as pending (address null) until its deploy is mined.
  if (row.kind === 'deploy_guestbook') await tx.guestbook.confirmDeployed(row.id)
  return true
}
