import { createHash, randomBytes } from 'node:crypto'
import encodeQR from 'qr'
import type { Address } from 'viem'
import type { ClaimRow } from '../db/claims.js'
import type { Store, Repositories } from '../db/store.js'
import { BaseError, ConflictError, ForbiddenError, GoneError, NotFoundError } from '../errors.js'
import type { ClaimSummary, TxStatus } from '../wire/feedProtocol.js'
import { claimStep, claimSummary } from './claimViews.js'
import { type ClaimDeps, checkClaimOpen, giveClaimAddress } from './giveClaimAddress.js'

/** A link token: 128 random bits, base64url (22 characters). Only its sha256 is stored. */
export const LINK_TOKEN = /^[A-Za-z0-9_-]{22}$/

const newSecret = () => randomBytes(16).toString('base64url')
export const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex')

/** The phone page's view of its claim (the kiosk's ClaimSummary, with the lifetime made relative). */
export type PhoneClaim = Pick<ClaimSummary, 'kind' | 'product' | 'step' | 'twoTap' | 'allowedAt'> & {
  /** How long the link has left (the page counts it down with its own clock). */
  expiresInMs: number
  /** ENS names can be resolved here (a mainnet RPC is configured). */
  ens: boolean
  tx: { status: TxStatus; hash: string | null } | null
}

export async function phoneClaim(store: Store, claim: ClaimRow, p: { now: number; ens: boolean }): Promise<PhoneClaim> {
  const s = await claimSummary(store, claim, p.now)
  return {
    kind: s.kind,
    product: s.product,
    step: s.step,
    twoTap: s.twoTap,
    allowedAt: s.allowedAt,
    expiresInMs: Math.max(0, claim.expiresAt - p.now),
    ens: p.ens,
    tx: s.tx && { status: s.tx.status, hash: s.tx.hash },
  }
}

/**
 * The kiosk's "Finish on your phone": a fresh one-time link to the claim, `<base>/c/<token>`, and its
 * QR code. Only the newest link of a claim works (a second press replaces the first), and only
 * until a phone opens it or the claim's OTP expires.
 *
 * @throws NotFoundError claim_not_found; ConflictError claim_used / claim_not_open; GoneError claim_expired
 */
export async function createClaimLink(store: Store, p: { stationId: number; claimId: number; baseUrl: string; now: number }): Promise<{ url: string; svg: string; expiresAt: string }> {
  const token = newSecret()
  const claim = await store.tx(async (tx) => {
    const row = await tx.claims.get(p.claimId)
    const claim = await checkClaimOpen(tx, row?.stationId === p.stationId ? row : undefined, { via: 'kiosk', now: p.now })
    if (!await tx.claims.setLink(claim.id, hashSecret(token))) throw new ConflictError('claim_not_open', 'This claim is no longer open')
    return claim
  })
  const url = `${p.baseUrl.replace(/\/+$/, '')}/c/${token}`
  // A quiet zone of 4 modules, as the QR standard asks: phone cameras find the code faster.
  return { url, svg: encodeQR(url, 'svg', { border: 4 }), expiresAt: new Date(claim.expiresAt).toISOString() }
}

async function claimOfLink(store: Repositories, token: string): Promise<ClaimRow> {
  const claim = LINK_TOKEN.test(token) ? await store.claims.findByLink(hashSecret(token)) : undefined
  if (!claim) throw new NotFoundError('claim_link_not_found', 'This link is not valid: ask at the kiosk for a new one')
  return claim
}

const linkUsed = () => new ConflictError('claim_link_used', 'This link was already used')
const linkExpired = () => new GoneError('claim_link_expired', 'This link has expired: tap the tag at the kiosk again')

/**
 * A phone opens the link. The first one takes it (the claim is `opened`, its kiosk goes back to
 * idle) and gets a session secret; that phone's later calls (a reload) send it back. Any other
 * phone, or a link already claimed, is `claim_link_used`; past the OTP's lifetime, `expired`.
 */
export async function openClaimLink(deps: Pick<ClaimDeps, 'store' | 'now'>, p: { token: string; session?: string; ens: boolean }): Promise<{ session: string; claim: PhoneClaim }> {
  const { store } = deps
  const now = deps.now()
  const opened = await store.tx(async (tx) => {
    const claim = await claimOfLink(tx, p.token)
    if (p.session !== undefined && claim.phoneHash !== null && hashSecret(p.session) === claim.phoneHash) return { session: p.session, claim, fresh: false }
    if (claim.step !== 'open') throw linkUsed()
    if (claimStep(claim, now) === 'expired') throw linkExpired()
    const session = newSecret()
    if (!await tx.claims.markOpened(claim.id, hashSecret(session), now)) throw linkUsed()
    const row = (await tx.claims.get(claim.id))!
    await tx.stationEvents.append(row.stationId, 'claim', { claim: await claimSummary(tx, row, now) }, now)
    return { session, claim: row, fresh: true }
  })
  return { session: opened.session, claim: await phoneClaim(store, opened.claim, { now, ens: p.ens }) }
}

/** The claim of a link, for the phone that opened it. @throws claim_link_not_found, claim_session_mismatch */
export async function claimOfPhone(store: Store, p: { token: string; session: string }): Promise<ClaimRow> {
  const claim = await claimOfLink(store, p.token)
  if (claim.phoneHash === null || hashSecret(p.session) !== claim.phoneHash)
    throw new ForbiddenError('claim_session_mismatch', 'This link was opened on another phone')
  return claim
}

/** The phone sends its address: the claim goes as at the kiosk, with the phone's own words for the refusals. */
export async function sendFromPhone(deps: ClaimDeps, p: { token: string; session: string; recipient: Address; ens: boolean }): Promise<PhoneClaim> {
  const claim = await claimOfPhone(deps.store, p)
  try {
    const done = await giveClaimAddress(deps, { claimId: claim.id, recipient: p.recipient, via: 'phone', phoneHash: claim.phoneHash! })
    return phoneClaim(deps.store, done, { now: deps.now(), ens: p.ens })
  } catch (error) {
    if (error instanceof BaseError && error.code === 'claim_used') throw linkUsed()
    if (error instanceof BaseError && error.code === 'claim_expired') throw linkExpired()
    // Lost a race to another submission of this same link: its checks read the claim before the winner
    // committed and the token after (token_moved, or another gateway's conflict). The link is used.
    if (error instanceof BaseError && error.statusCode === 409) {
      const now = await deps.store.claims.get(claim.id)
      if (now && (now.step === 'claimed' || now.step === 'registered')) throw linkUsed()
    }
    throw error
  }
}
