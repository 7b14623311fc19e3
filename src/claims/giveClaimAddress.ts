import type { Address } from 'viem'
import type { ChainDeps } from '../chain/chainDeps.js'
import { refuseZeroAddress } from '../chain/recipientCheck.js'
import type { ClaimRow, ClaimVia } from '../db/claims.js'
import type { Repositories, Store } from '../db/store.js'
import type { Tx } from '../db/types.js'
import { BaseError, ConflictError, ForbiddenError, GoneError, NotFoundError } from '../errors.js'
import { mintGuestbookEventSelf } from '../guestbook/guestbookChain.js'
import type { TapEventData } from '../wire/feedProtocol.js'
import { watchTx } from '../feed/txProgress.js'
import { createClaimRegistrationWithOtp } from '../phygitals/claimRegistrations.js'
import { checkClaimRegistration } from '../transfers/claimGate.js'
import { checkRecipient, transferWithOtp } from '../transfers/transferToken.js'
import { tokenMovedError } from '../otps/tokenOtp.js'
import { claimMoved, claimSummary } from './claimViews.js'

/** A claim's steps need what every on-chain endpoint does: the store tells the kiosks and the relayer what they commit. */
export type ClaimDeps = ChainDeps

export type GiveClaimAddressParameters = {
  claimId: number
  recipient: Address
  via: ClaimVia
  /** The phone's session (sha256): a claim opened on a phone takes an address from that phone only. */
  phoneHash?: string
  /**
   * The known-address path of a tap: the feed gets the tap's own row (state product, the claim
   * already claimed) instead of a separate `claim` row, so the kiosk sees one result.
   */
  tapRow?: Omit<TapEventData, 'state' | 'claim'>
}

/** Whether a claim can take an address from this source now. @throws the claim_* refusals, token_moved */
export async function checkClaimOpen(store: Repositories, claim: ClaimRow | undefined, p: { via: ClaimVia; phoneHash?: string; now: number }): Promise<ClaimRow> {
  if (!claim) throw new NotFoundError('claim_not_found', 'No such claim at this station')
  if (claim.step === 'claimed' || claim.step === 'registered') throw new ConflictError('claim_used', 'This claim was already used')
  if (p.now >= claim.expiresAt) throw new GoneError('claim_expired', 'This claim expired with its tap: tap the tag again')
  // Its OTP would be refused too (inside the transfer's transaction): said before anything is read or spent.
  if (await claimMoved(store, claim)) throw tokenMovedError()
  if (claim.step === 'opened') {
    if (p.via !== 'phone') throw new ConflictError('claim_not_open', 'This claim was opened on a phone: it is finished there')
    if (p.phoneHash !== claim.phoneHash) throw new ForbiddenError('claim_session_mismatch', 'This link was opened on another phone')
  } else if (p.via === 'phone') throw new ConflictError('claim_not_open', 'Open the link before sending an address')
  return claim
}

// The OTP behind a claim is the claim's single use: its refusals are the claim's.
function asClaimError(error: unknown): unknown {
  if (!(error instanceof BaseError)) return error
  if (error.code === 'otp_used') return new ConflictError('claim_used', 'This claim was already used')
  if (error.code === 'otp_expired') return new GoneError('claim_expired', 'This claim expired with its tap: tap the tag again')
  return error
}

/**
 * A claim gets its address (typed or scanned at the kiosk, sent from the phone, or known to the
 * gateway) and the token goes: through the same domain code as POST /phygitals/transfer/pullable
 * (a token), POST /phygitals/claim-registration/pullable (a 2-tap token's first tap) or POST
 * /events/mint/self (a check-in's guestbook token), with the claim's OTP. The claim's step, its feed
 * rows and the OTP commit in that endpoint's transaction; of many submissions exactly one wins (the
 * conditional step update and the OTP are both single use), the rest are 409 claim_used.
 * An address that can never receive is refused before anything is spent (the endpoints' check).
 */
export async function giveClaimAddress(deps: ClaimDeps, p: GiveClaimAddressParameters): Promise<ClaimRow> {
  const { store } = deps
  refuseZeroAddress(p.recipient)
  const claim = await checkClaimOpen(store, await store.claims.get(p.claimId), { ...p, now: deps.now() })
  try {
    if (claim.kind === 'guestbook') {
      const mint = await mintGuestbookEventSelf(deps, {
        code: claim.otpCode,
        recipient: p.recipient,
        onQueued: async (queued, tx) => {
          await claimed(tx, deps, p, { transferId: null, guestbookMintId: queued.mintId, txId: queued.txId, hash: queued.txnHash })
          if (claim.checkInId !== null) await tx.checkIns.setMint(claim.checkInId, queued.mintId, queued.txId)
        },
      })
    } else if (await needsRegistration(store, claim, p.recipient, deps.now())) {
      // The registration spends the first tap's OTP: an address the token can never reach is refused first.
      await checkRecipient(deps, (await store.tokens.get(claim.tokenId!))!, p.recipient)
      await createClaimRegistrationWithOtp(store, {
        code: claim.otpCode,
        recipient: p.recipient,
        now: deps.now(),
        onRegistered: (registrationId, _view, tx) => registered(tx, deps, p, registrationId),
      })
    } else {
      await transferWithOtp(deps, {
        code: claim.otpCode,
        recipient: p.recipient,
        onAccepted: (a, tx) => claimed(tx, deps, p, { transferId: a.transferId, guestbookMintId: null, txId: a.txId, hash: a.initialTxHash }),
      })
    }
  } catch (error) {
    throw asClaimError(error)
  }
  return (await store.claims.get(claim.id))!
}

/**
 * A 2-tap token takes an address in two steps: with no registration open, the first tap's address
 * is registered; a registration that lets this address claim now means the transfer. Any other
 * state (another address registered, too early) is the gate's own 409.
 */
async function needsRegistration(store: Store, claim: ClaimRow, recipient: Address, now: number): Promise<boolean> {
  const token = (await store.tokens.get(claim.tokenId!))!
  if (token.twoTapClaim !== 1) return false
  if (await store.claimRegistrations.findOpen(token.id, now) === undefined) return true
  await checkClaimRegistration(store, token, recipient, now)
  return false
}

/** Inside the transfer's (or mint's) transaction: the claim is claimed, and its feed row commits with it. */
async function claimed(
  tx: Tx,
  deps: ClaimDeps,
  p: GiveClaimAddressParameters,
  t: { transferId: number | null; guestbookMintId: number | null; txId: number; hash: string },
): Promise<void> {
  const now = deps.now()
  if (!await tx.claims.markClaimed({ id: p.claimId, via: p.via, phoneHash: p.phoneHash ?? null, recipient: p.recipient, transferId: t.transferId, guestbookMintId: t.guestbookMintId, chainTxId: t.txId, now }))
    throw new ConflictError('claim_used', 'This claim was already used')
  const claim = (await tx.claims.get(p.claimId))!
  await appendClaimRow(tx, claim, p.tapRow, now)
  await watchTx(tx, t.txId, { stationId: claim.stationId, checkInId: claim.checkInId, claimId: claim.id }, { hash: t.hash, now })
  // The transfer's (or mint's) own transaction wakes the relayer after the same commit.
}

async function registered(tx: Tx, deps: ClaimDeps, p: GiveClaimAddressParameters, registrationId: number): Promise<void> {
  const now = deps.now()
  if (!await tx.claims.markRegistered({ id: p.claimId, via: p.via, phoneHash: p.phoneHash ?? null, recipient: p.recipient, registrationId, now }))
    throw new ConflictError('claim_used', 'This claim was already used')
  await appendClaimRow(tx, (await tx.claims.get(p.claimId))!, p.tapRow, now)
}

/** The claim's new state for its station's kiosks: a `claim` row, or the tap's own row (known-address path). */
export async function appendClaimRow(tx: Tx, claim: ClaimRow, tapRow: GiveClaimAddressParameters['tapRow'], now: number): Promise<void> {
  const summary = await claimSummary(tx, claim, now)
  if (tapRow) await tx.stationEvents.append(claim.stationId, 'tap', { ...tapRow, state: 'product', claim: summary }, now)
  else await tx.stationEvents.append(claim.stationId, 'claim', { claim: summary }, now)
}
