import type { ClaimRow } from '../db/claims.js'
import type { Repositories } from '../db/store.js'
import { txStatusOf } from '../feed/txProgress.js'
import type { ClaimStep, ClaimSummary, ProductCard, TxStatus } from '../wire/feedProtocol.js'
import { mediaPath } from '../media/mediaCache.js'
import { tokenMovedSince } from '../otps/tokenOtp.js'

const MAX_TEXT = 600
const MAX_ATTRIBUTES = 12

const text = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value.trim().slice(0, MAX_TEXT) : null)

/**
 * The card of a token or an event from its metadata (name, description, image, attributes), as the
 * kiosk and the phone page show it. The image becomes a gateway path (`/media/<key>`, fetched once
 * and kept in the data dir), so the card shows offline and no page loads another origin.
 * Takes the repositories, not a `Tx`: it also serves reads outside a transaction (a phone polling its
 * claim), where recording the media row (once, read first) commits on its own.
 */
export async function productCard(store: Repositories, metadataText: string | null, fallbackName: string, now: number): Promise<ProductCard> {
  let metadata: Record<string, unknown> = {}
  try {
    const parsed: unknown = metadataText === null ? null : JSON.parse(metadataText)
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) metadata = parsed as Record<string, unknown>
  } catch {
    // Stored metadata was validated on the way in; an unreadable one still gets a card with a name.
  }
  const attributes = Array.isArray(metadata.attributes) ? metadata.attributes : []
  return {
    name: text(metadata.name) ?? fallbackName,
    description: text(metadata.description),
    image: await mediaPath(store, typeof metadata.image === 'string' ? metadata.image : null, now),
    attributes: attributes.slice(0, MAX_ATTRIBUTES).flatMap((a: unknown) => {
      if (a === null || typeof a !== 'object') return []
      const { trait_type: trait, value } = a as { trait_type?: unknown; value?: unknown }
      if (typeof trait !== 'string' || (typeof value !== 'string' && typeof value !== 'number')) return []
      return [{ trait: trait.slice(0, 80), value: String(value).slice(0, 160) }]
    }),
  }
}

/** The card a claim shows: its token's, or its event's. */
export async function claimCard(store: Repositories, claim: ClaimRow, now: number): Promise<ProductCard> {
  if (claim.kind === 'token') {
    const token = (await store.tokens.get(claim.tokenId!))!
    return productCard(store, token.metadata, `Token #${token.tokenId}`, now)
  }
  const event = (await store.guestbook.getEvent(claim.guestbookEventId!))!
  return productCard(store, event.metadata, event.name, now)
}

/**
 * The step a claim is at now: an open one past its OTP's lifetime has expired; one whose token
 * moved since its tap (`moved`, from claimMoved) was claimed meanwhile and can no longer take an address.
 */
export function claimStep(claim: Pick<ClaimRow, 'step' | 'expiresAt'>, now: number, moved = false): ClaimStep {
  if (claim.step !== 'open' && claim.step !== 'opened') return claim.step
  if (now >= claim.expiresAt) return 'expired'
  return moved ? 'moved' : claim.step
}

/** Whether a token claim's token moved after its tap: its OTP would be refused (token_moved). */
export async function claimMoved(store: Repositories, claim: ClaimRow): Promise<boolean> {
  if (claim.kind !== 'token' || claim.tokenId === null) return false
  const otp = await store.otps.get(claim.otpCode)
  const token = await store.tokens.get(claim.tokenId)
  return otp !== undefined && token !== undefined && tokenMovedSince(otp, token)
}

/** A claim's transaction now (a re-signed transfer's latest one). */
export async function claimTx(store: Repositories, claim: ClaimRow): Promise<{ id: number; status: TxStatus; hash: string | null } | null> {
  let txId = claim.chainTxId
  if (claim.transferId !== null) txId = (await store.transfers.get(claim.transferId))?.chainTxId ?? txId
  const tx = txId === null ? undefined : await store.chainTxs.get(txId)
  return tx ? { id: tx.id, status: txStatusOf(tx), hash: tx.txHash } : null
}

/** When a 2-tap claim's address may claim: its registration's allowedAt. */
async function allowedAt(store: Repositories, claim: ClaimRow): Promise<string | null> {
  if (claim.registrationId !== null) {
    const registration = await store.claimRegistrations.get(claim.registrationId)
    return registration ? new Date(registration.allowedAt).toISOString() : null
  }
  return null
}

/** The feed's (and the kiosk's) view of a claim; the recipient is staff only (publicClaim strips it). */
export async function claimSummary(store: Repositories, claim: ClaimRow, now: number, extra: { step?: ClaimStep; allowedAt?: number } = {}): Promise<ClaimSummary> {
  const token = claim.tokenId === null ? undefined : await store.tokens.get(claim.tokenId)
  return {
    id: claim.id,
    kind: claim.kind,
    product: await claimCard(store, claim, now),
    step: extra.step ?? claimStep(claim, now, (claim.step === 'open' || claim.step === 'opened') && await claimMoved(store, claim)),
    expiresAt: new Date(claim.expiresAt).toISOString(),
    twoTap: token?.twoTapClaim === 1,
    allowedAt: extra.allowedAt === undefined ? await allowedAt(store, claim) : new Date(extra.allowedAt).toISOString(),
    via: claim.via,
    tx: await claimTx(store, claim),
    recipient: claim.recipient,
  }
}

/** A claim as the kiosk's own answers show it: without its recipient, like the public feed. */
export async function publicClaimSummary(store: Repositories, claim: ClaimRow, now: number): Promise<ClaimSummary> {
  const { recipient: _recipient, ...rest } = await claimSummary(store, claim, now)
  return rest
}
