import type { Address } from 'viem'
import type { ClaimRow } from '../db/claims.js'
import type { StationRow } from '../db/stations.js'
import type { Tx } from '../db/types.js'
import { issueOtp } from '../otps/issueOtp.js'

export type OpenClaimDeps = { tx: Tx; otpTtlMs: number }

/** What a tap at a claim station found: a claim (with an address the gateway already knows), or nothing to claim. */
export type OpenedClaim =
  | { claim: ClaimRow; known: Address | null; allowedAt?: number }
  | { nothing: 'chip_not_linked' | 'ref_used'; detail: string }

/**
 * The gateway takes the tap's ref itself (the kiosk is the tap's reader and the customer's screen):
 * it consumes it and issues the one OTP the claim needs, which stays on the gateway. Whoever queried
 * the ref first (a race with GET /refs/:id) keeps it: then there is nothing to claim here.
 */
async function takeRef(tx: Tx, refId: string, now: number): Promise<{ id: string; teamId: number; chipUid: string } | null> {
  const ref = await tx.refs.get(refId)
  if (!ref || !await tx.refs.consume(ref.id, now)) return null
  return ref
}

/**
 * A tap at a claim station, inside the tap's transaction (`tx`): opens a claim of the chip's phygital token.
 * An address is known when a 2-tap token has an open registration (the second tap: it claims from
 * allowedAt; before that the claim is `early`) or the chip has a wallet on record.
 */
export async function openTokenClaim(deps: OpenClaimDeps, p: { station: StationRow; uid: string; refId: string; now: number }): Promise<OpenedClaim> {
  const { tx } = deps
  const { now } = p
  const token = await tx.tokens.findByChip(p.uid)
  if (!token || token.teamId !== p.station.teamId) return { nothing: 'chip_not_linked', detail: `chip ${p.uid} is linked to no phygital token of this team` }
  const ref = await takeRef(tx, p.refId, now)
  if (!ref) return { nothing: 'ref_used', detail: `ref ${p.refId} was queried before the station could take it` }
  const otpCode = await issueOtp(tx, ref, 'PHYGITAL_CLAIM', { token }, { now, ttlMs: deps.otpTtlMs })
  const id = await tx.claims.insert({
    stationId: p.station.id,
    kind: 'token',
    chipUid: p.uid,
    tokenId: token.id,
    guestbookEventId: null,
    checkInId: null,
    otpCode,
    createdAt: now,
    expiresAt: now + deps.otpTtlMs,
  })
  const claim = (await tx.claims.get(id))!
  if (token.twoTapClaim === 1) {
    const registration = await tx.claimRegistrations.findOpen(token.id, now)
    if (registration && now < registration.allowedAt) return { claim, known: null, allowedAt: registration.allowedAt }
    if (registration) return { claim, known: registration.recipient as Address }
  }
  const wallet = (await tx.chips.get(p.uid))?.wallet ?? null
  return { claim, known: wallet as Address | null }
}

/**
 * A new check-in of a chip with no wallet on record, inside the check-in's transaction (`tx`): its event's
 * guestbook token waits for an address ("check in now, collect later"), given through the same
 * hand-off as a product. The OTP is the one POST /events/mint/self takes, for the station's event.
 */
export async function openGuestbookClaim(deps: OpenClaimDeps, p: { station: StationRow & { eventId: number }; uid: string; refId: string; checkInId: number; now: number }): Promise<ClaimRow | null> {
  const { tx } = deps
  const { now } = p
  const ref = await takeRef(tx, p.refId, now)
  if (!ref) return null
  const otpCode = await issueOtp(tx, ref, 'GUESTBOOK_EVENT', { guestbookEventId: p.station.eventId }, { now, ttlMs: deps.otpTtlMs })
  const id = await tx.claims.insert({
    stationId: p.station.id,
    kind: 'guestbook',
    chipUid: p.uid,
    tokenId: null,
    guestbookEventId: p.station.eventId,
    checkInId: p.checkInId,
    otpCode,
    createdAt: now,
    expiresAt: now + deps.otpTtlMs,
  })
  return (await tx.claims.get(id))!
}
