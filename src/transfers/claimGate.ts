import type { ClaimRegistrationRow } from '../db/claimRegistrations.js'
import type { Store, Repositories } from '../db/store.js'
import type { TokenRow } from '../db/tokens.js'
import { ConflictError } from '../errors.js'
import { iso } from '../ids.js'

/**
 * The 2-tap claim gate: a token with a 2-tap claim moves only to a recipient
 * whose registration is open right now. Returns the registration (or
 * undefined when the token has no 2-tap claim); throws 409 with a stable code.
 */
export async function checkClaimRegistration(store: Repositories, token: TokenRow, recipient: string, now: number): Promise<ClaimRegistrationRow | undefined> {
  if (token.twoTapClaim !== 1) return undefined
  const registration = await store.claimRegistrations.findLatest(token.id, recipient)
  if (!registration)
    throw new ConflictError('claim_registration_required', 'This token uses a 2-tap claim: register the recipient first (POST /phygitals/claim-registration)')
  if (registration.usedAt !== null)
    throw new ConflictError('claim_registration_used', "The recipient's claim registration was already used; register again")
  if (now < registration.allowedAt)
    throw new ConflictError('claim_not_allowed_yet', `The recipient may claim from ${iso(registration.allowedAt)}`)
  if (now >= registration.expiresAt)
    throw new ConflictError('claim_registration_expired', `The recipient's claim registration expired at ${iso(registration.expiresAt)}`)
  return registration
}

/** The gate for an actual transfer: the registration is used up in the same transaction. */
export async function useClaimRegistration(store: Repositories, token: TokenRow, recipient: string, now: number): Promise<ClaimRegistrationRow | undefined> {
  const registration = await checkClaimRegistration(store, token, recipient, now)
  if (registration && !await store.claimRegistrations.markUsed(registration.id, now))
    throw new ConflictError('claim_registration_used', "The recipient's claim registration was already used; register again")
  return registration
}
