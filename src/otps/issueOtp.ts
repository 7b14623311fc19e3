import type { OtpRow, OtpType } from '../db/otps.js'
import type { RefRow } from '../db/refs.js'
import type { TokenRow } from '../db/tokens.js'
import type { Tx } from '../db/types.js'
import { newPublicId } from '../ids.js'

/** What an OTP authorizes; a token's OTP is bound to the token's moves now (src/otps/tokenOtp.ts). */
export type OtpTarget = { token?: Pick<TokenRow, 'id' | 'moves'>; proofEventId?: number; guestbookEventId?: number }

/**
 * Issues one OTP of a consumed ref, inside the caller's transaction (`tx`): the first query of a ref
 * (GET /refs/:id), or the gateway itself when a kiosk claim takes the tap (src/claims).
 */
export async function issueOtp(tx: Tx, ref: Pick<RefRow, 'id' | 'teamId' | 'chipUid'>, type: OtpType, target: OtpTarget, p: { now: number; ttlMs: number }): Promise<OtpRow['code']> {
  const code = newPublicId()
  await tx.otps.insert({
    code,
    teamId: ref.teamId,
    refId: ref.id,
    chipUid: ref.chipUid,
    type,
    tokenId: target.token?.id ?? null,
    proofEventId: target.proofEventId ?? null,
    guestbookEventId: target.guestbookEventId ?? null,
    createdAt: p.now,
    expiresAt: p.now + p.ttlMs,
    tokenMoves: target.token?.moves ?? null,
  })
  return code
}
