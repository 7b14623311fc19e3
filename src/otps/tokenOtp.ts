import type { OtpRow } from '../db/otps.js'
import type { Store, Repositories } from '../db/store.js'
import type { TokenRow } from '../db/tokens.js'
import { ConflictError } from '../errors.js'
import { checkOtp, type SpendOtpParameters, spendOtp } from './spendOtp.js'

/** A PHYGITAL_CLAIM OTP and the token it moves. */
export type TokenOtp = { otp: OtpRow; token: TokenRow }

/** The token a PHYGITAL_CLAIM OTP is for: the one linked at tap time, else the chip's token now. */
export async function tokenOfOtp(store: Repositories, otp: OtpRow): Promise<TokenRow> {
  const token = otp.tokenId === null ? await store.tokens.findByChip(otp.chipUid) : await store.tokens.get(otp.tokenId)
  if (!token) throw new ConflictError('chip_not_linked', 'The tapped chip is not linked to a phygital token')
  return token
}

/**
 * Whether the token moved since the OTP was issued (by any path the gateway knows of: its own
 * transfers, and pulls it found on chain). An OTP of a chip that had no token when tapped knows no
 * state of it: it holds only while the token has never moved.
 */
export const tokenMovedSince = (otp: Pick<OtpRow, 'tokenMoves'>, token: Pick<TokenRow, 'moves'>): boolean =>
  otp.tokenMoves === null ? token.moves > 0 : token.moves !== otp.tokenMoves

export const tokenMovedError = () =>
  new ConflictError('token_moved', 'This product was claimed meanwhile: the token moved after this tap, so its code no longer works. Tap the tag again.')

/** @throws ConflictError token_moved when the token moved after the OTP was issued */
export function refuseMovedToken(otp: OtpRow, token: TokenRow): void {
  if (tokenMovedSince(otp, token)) throw tokenMovedError()
}

/** Every check of spendTokenOtp without spending: for endpoints that read the chain before they commit. */
export async function checkTokenOtp(store: Repositories, p: Omit<SpendOtpParameters, 'type' | 'usedFor'>): Promise<TokenOtp> {
  const otp = await checkOtp(store, { ...p, type: 'PHYGITAL_CLAIM' })
  const token = await tokenOfOtp(store, otp)
  refuseMovedToken(otp, token)
  return { otp, token }
}

/**
 * Spends a PHYGITAL_CLAIM OTP inside the endpoint's own store.tx, after the same checks as
 * checkTokenOtp: an OTP whose token moved since it was issued is refused (409 token_moved) and
 * stays as it was.
 *
 * @example
 * await store.tx(async (tx) => { const { otp, token } = await spendTokenOtp(tx, { code, usedFor: 'transfer', now }); … })
 */
export async function spendTokenOtp(store: Repositories, p: Omit<SpendOtpParameters, 'type'>): Promise<TokenOtp> {
  const { token } = await checkTokenOtp(store, p)
  return { otp: await spendOtp(store, { ...p, type: 'PHYGITAL_CLAIM' }), token }
}
