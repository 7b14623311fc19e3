import type { OtpRow, OtpType } from '../db/otps.js'
import type { RefRow } from '../db/refs.js'
import type { Store } from '../db/store.js'
import { newPublicId } from '../ids.js'

export type OtpTarget = { tokenId?: number; proofEventId?: number; guestbookEventId?: number }

/**
 * Issues one OTP of a consumed ref, inside the caller's store.tx: the first query of a ref
 * (GET /refs/:id), or the gateway itself when a kiosk claim takes the tap (src/claims).
 */
export function issueOtp(store: Store, ref: Pick<RefRow, 'id' | 'teamId' | 'chipUid'>, type: OtpType, target: OtpTarget, p: { now: number; ttlMs: number }): OtpRow['code'] {
  const code = newPublicId()
  store.otps.insert({
    code,
    teamId: ref.teamId,
    refId: ref.id,
    chipUid: ref.chipUid,
    type,
    tokenId: target.tokenId ?? null,
    proofEventId: target.proofEventId ?? null,
    guestbookEventId: target.guestbookEventId ?? null,
    createdAt: p.now,
    expiresAt: p.now + p.ttlMs,
  })
  return code
}
