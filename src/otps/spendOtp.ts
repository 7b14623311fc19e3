import type { OtpRow, OtpType } from '../db/otps.js'
import type { Store, Repositories } from '../db/store.js'
import { ConflictError, ForbiddenError, UnauthorizedError } from '../errors.js'

export type SpendOtpParameters = {
  code: string | undefined
  /** The kind of OTP the endpoint accepts. */
  type: OtpType
  /** Recorded on the OTP, e.g. `claim-registration`. */
  usedFor: string
  now: number
}

/**
 * Checks an `x-service-code` for an endpoint and marks it used. Call it inside
 * the endpoint's own `store.tx` so the code is spent if and only if the
 * endpoint's write commits.
 *
 * @throws UnauthorizedError missing/unknown code; ForbiddenError wrong kind;
 *   ConflictError used or expired
 * @example
 * await store.tx(async (tx) => { const otp = await spendOtp(tx, { code, type: 'PHYGITAL_CLAIM', usedFor: 'transfer', now }); … })
 */
export async function spendOtp(store: Repositories, p: SpendOtpParameters): Promise<OtpRow> {
  const otp = await checkOtp(store, p)
  if (!await store.otps.markUsed(otp.code, p.usedFor, p.now)) throw new ConflictError('otp_used', 'This OTP has already been used')
  return otp
}

/** Every check of spendOtp without spending: for endpoints that must do slow work (a chain read) before they commit. */
export async function checkOtp(store: Repositories, p: Omit<SpendOtpParameters, 'usedFor'>): Promise<OtpRow> {
  const otp = await findOtp(store, p.code)
  if (otp.type !== p.type)
    throw new ForbiddenError('otp_wrong_type', `This endpoint needs a ${p.type} OTP; this one is ${otp.type}`)
  if (otp.usedAt !== null) throw new ConflictError('otp_used', 'This OTP has already been used')
  if (p.now >= otp.expiresAt) throw new ConflictError('otp_expired', 'This OTP has expired; tap the chip again')
  return otp
}

/** The OTP of an `x-service-code`, whatever its kind or state. @throws UnauthorizedError missing/unknown code */
export async function findOtp(store: Repositories, code: string | undefined): Promise<OtpRow> {
  if (!code) throw new UnauthorizedError('otp_missing', 'This endpoint needs an OTP in the x-service-code header')
  const otp = await store.otps.get(code)
  if (!otp) throw new UnauthorizedError('otp_invalid', 'The OTP in x-service-code is unknown')
  return otp
}
