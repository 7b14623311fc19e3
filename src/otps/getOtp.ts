import type { OtpType } from '../db/otps.js'
import type { ProofEventStatus } from '../db/proofEvents.js'
import type { Store, Repositories } from '../db/store.js'
import { NotFoundError } from '../errors.js'
import { iso } from '../ids.js'
import { tokenMovedSince } from './tokenOtp.js'

export type OtpView = {
  otp: string
  isExpired: boolean
  expiresAt: string
  createdAt: string
  usedAt?: string
  type: OtpType
  linkedToken?: { contractAddress: string; chainId: number; tokenId: string }
  proofEvent?: { id: number; proofEventId: number; status: ProofEventStatus }
  guestbookEvent?: {
    id: number
    name: string
    contractAddress: string | null
    chainId: number
    tokenId: string
    createdAt: string
  }
}

/**
 * Reads an OTP (GET /otps/:id). A used code reads back as expired, with
 * `usedAt`, so a client cannot mistake it for one it may still spend; so does
 * a code whose token moved after it was issued (every endpoint refuses it with
 * token_moved).
 *
 * @throws NotFoundError for an unknown or deleted code
 */
export async function getOtp(store: Repositories, p: { code: string; now: number }): Promise<OtpView> {
  const o = await store.otps.getDetail(p.code)
  if (!o) throw new NotFoundError('otp_not_found', 'No OTP with this code')
  const view: OtpView = {
    otp: o.code,
    isExpired: o.usedAt !== null || p.now >= o.expiresAt || (o.tokenMovesNow !== null && tokenMovedSince(o, { moves: o.tokenMovesNow })),
    expiresAt: iso(o.expiresAt),
    createdAt: iso(o.createdAt),
    type: o.type,
  }
  if (o.usedAt !== null) view.usedAt = iso(o.usedAt)
  if (o.tokenChainId !== null)
    view.linkedToken = { contractAddress: o.tokenContract!, chainId: o.tokenChainId, tokenId: o.tokenTokenId! }
  if (o.proofId !== null)
    view.proofEvent = { id: o.proofId, proofEventId: o.proofEventId!, status: o.proofStatus as ProofEventStatus }
  if (o.eventId !== null)
    view.guestbookEvent = {
      id: o.eventId,
      name: o.eventName!,
      contractAddress: o.eventContract,
      chainId: o.eventChainId!,
      tokenId: o.eventTokenId!,
      createdAt: iso(o.eventCreatedAt!),
    }
  return view
}

/**
 * Deletes an OTP of the caller's team (DELETE /otps/:id).
 * @throws NotFoundError when the code is unknown or belongs to another team
 */
export async function deleteOtp(store: Store, p: { code: string; teamId: number }): Promise<void> {
  if (!await store.tx((tx) => tx.otps.delete(p.code, p.teamId))) throw new NotFoundError('otp_not_found', 'No OTP with this code')
}
