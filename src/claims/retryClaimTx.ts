import type { Address } from 'viem'
import type { Chains } from '../chain/chains.js'
import type { Config } from '../config.js'
import type { Store } from '../db/store.js'
import { ConflictError, NotFoundError, UnavailableError } from '../errors.js'
import { watchTx } from '../feed/txProgress.js'
import { txStatusOf } from '../feed/txProgress.js'
import { transferWithOtp } from '../transfers/transferToken.js'

/** What a retry needs: the store, the signers (absent: 503 chain_unavailable) and the clock. */
export type RetryClaimTxDeps = { store: Store; chains?: Chains; config?: Config; now: () => number }

/**
 * POST /kiosk/staff/retry for a claim's transfer that was given up (it reverted and re-signing
 * could not help: src/relayer/recoverTransfer.ts). Giving up gave back the claim's OTP, so the
 * same transfer is accepted again through the same domain code, to the same address; the claim
 * follows the new transfer. The tap's OTP must still be alive: past it, the customer taps again.
 *
 * @throws NotFoundError tx_not_found; ConflictError tx_not_failed / claim_expired (otp_expired)
 */
export async function retryClaimTx(deps: RetryClaimTxDeps, p: { stationId: number; txId: number }): Promise<{ txId: number; txnHash: string }> {
  const { store } = deps
  if (!deps.chains || !deps.config) throw new UnavailableError('chain_unavailable', 'This gateway cannot sign transactions')
  const claim = await store.claims.findByTx(p.txId)
  const tx = await store.chainTxs.get(p.txId)
  if (!claim || !tx || claim.stationId !== p.stationId || claim.kind !== 'token' || claim.recipient === null)
    throw new NotFoundError('tx_not_found', `No transaction ${p.txId} of this station's claims`)
  const status = txStatusOf(tx)
  if (status !== 'failed') throw new ConflictError('tx_not_failed', `Transaction ${p.txId} is ${status}: only a failed one can be retried`)
  if (await store.transfers.findByTx(p.txId) && (await store.otps.get(claim.otpCode))?.usedAt !== null)
    throw new ConflictError('tx_not_failed', `Transaction ${p.txId} is being re-sent by the relayer`)
  const accepted = await transferWithOtp(
    { store, chains: deps.chains, config: deps.config, now: deps.now },
    {
      code: claim.otpCode,
      recipient: claim.recipient as Address,
      onAccepted: async (a, tx) => {
        const now = deps.now()
        await tx.claims.setRetried(claim.id, { transferId: a.transferId, guestbookMintId: null, chainTxId: a.txId })
        await watchTx(tx, a.txId, { stationId: claim.stationId, checkInId: claim.checkInId, claimId: claim.id }, { hash: a.initialTxHash, now })
        await tx.stationEvents.append(claim.stationId, 'staff', { action: 'retry', summary: `retried claim ${claim.id}'s transaction ${p.txId} as ${a.txId}`, txId: a.txId }, now)
      },
    },
  ).catch((error: unknown) => {
    if (error instanceof ConflictError && error.code === 'otp_expired')
      throw new ConflictError('claim_expired', "The claim's tap has expired: ask the customer to tap the tag again")
    throw error
  })
  return { txId: accepted.txId, txnHash: accepted.initialTxHash }
}
