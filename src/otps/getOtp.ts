import type { OtpType } from '../db/otps.js'
import type { ProofEventStatus } from '../db/proofEvents.js'
import type { Store } from '../db/store.js'
import { NotFoundError } from '../errors.js'
import { iso } from '../ids.js'

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
 * `usedAt`, so a client cannot mistake it for one it may still spend.
 *
 * @throws NotFoundError for an unknown or deleted code
 */
export function getOtp(store: Store, p: { code: string; now: number }): OtpView {
  const otp = store.otps.get(p.code)
  if (!otp) throw new NotFoundError('otp_not_found', 'No OTP with this code')
  const view: OtpView = {
    otp: otp.code,
    isExpired: otp.usedAt !== null || p.now >= otp.expiresAt,
    expiresAt: iso(otp.expiresAt),
    createdAt: iso(otp.createdAt),
    type: otp.type,
  }
  if (otp.usedAt !== null) view.usedAt = iso(otp.usedAt)
  const token = otp.tokenId === null ? undefined : store.tokens.get(otp.tokenId)
  if (token) view.linkedToken = { contractAddress: token.contractAddress, chainId: token.chainId, tokenId: token.tokenId }
  const proofEvent = otp.proofEventId === null ? undefined : store.proofEvents.get(otp.proofEventId)
  if (proofEvent) view.proofEvent = { id: proofEvent.id, proofEventId: proofEvent.proofEventId, status: proofEvent.status }
  const event = otp.guestbookEventId === null ? undefined : store.guestbook.getEvent(otp.guestbookEventId)
  if (event)
    view.guestbookEvent = {
      id: event.id,
      name: event.name,
      contractAddress: event.contractAddress,
      chainId: event.chainId,
      tokenId: event.tokenId,
      createdAt: iso(event.createdAt),
    }
  return view
}

/**
 * Deletes an OTP of the caller's team (DELETE /otps/:id).
 * @throws NotFoundError when the code is unknown or belongs to another team
 */
export function deleteOtp(store: Store, p: { code: string; teamId: number }): void {
  if (!store.tx(() => store.otps.delete(p.code, p.teamId))) throw new NotFoundError('otp_not_found', 'No OTP with this code')
}
