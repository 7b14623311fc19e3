import type { ChainDeps } from '../chain/chainDeps.js'
import type { ClaimRegistrationRow } from '../db/claimRegistrations.js'
import type { Store, Repositories } from '../db/store.js'
import type { TokenKey, TokenRow } from '../db/tokens.js'
import type { Tx } from '../db/types.js'
import { ConflictError, NotFoundError } from '../errors.js'
import { iso } from '../ids.js'
import { checkTokenOtp, spendTokenOtp } from '../otps/tokenOtp.js'
import { refreshTokenMoves } from '../tokens/tokenMoves.js'
import { findToken } from '../tokens/findTeamToken.js'

export type ClaimRegistrationView = {
  recipient: string
  linkedToken: { contractAddress: string; tokenId: string; chainId: string }
  allowedAt: string
  expiresAt: string
  createdAt: string
}

export type ClaimRegistrationStatus = Omit<ClaimRegistrationView, 'allowedAt' | 'expiresAt' | 'createdAt'> & {
  isRequired: boolean
  isValid: boolean
  allowedAt: string | null
  expiresAt: string | null
  createdAt: string | null
}

const linkedToken = (token: TokenRow) => ({
  contractAddress: token.contractAddress,
  tokenId: token.tokenId,
  chainId: String(token.chainId),
})

const view = (token: TokenRow, r: ClaimRegistrationRow): ClaimRegistrationView => ({
  recipient: r.recipient,
  linkedToken: linkedToken(token),
  allowedAt: iso(r.allowedAt),
  expiresAt: iso(r.expiresAt),
  createdAt: iso(r.createdAt),
})

/** A registration lets its recipient claim from allowedAt until expiresAt, once. */
export const isRegistrationValid = (r: ClaimRegistrationRow | undefined, now: number): r is ClaimRegistrationRow =>
  r !== undefined && r.usedAt === null && now >= r.allowedAt && now < r.expiresAt

/**
 * GET /phygitals/claim-registration: whether a 2-tap claim applies to the token
 * and whether `recipient` may claim now. Timestamps are null when the
 * recipient has no registration.
 */
export async function getClaimRegistration(store: Store, p: { key: TokenKey; recipient: string; now: number }): Promise<ClaimRegistrationStatus> {
  const token = await findToken(store, p.key, null)
  const reg = await store.claimRegistrations.findLatest(token.id, p.recipient)
  return {
    recipient: p.recipient,
    linkedToken: linkedToken(token),
    isRequired: token.twoTapClaim === 1,
    isValid: isRegistrationValid(reg, p.now),
    allowedAt: reg ? iso(reg.allowedAt) : null,
    expiresAt: reg ? iso(reg.expiresAt) : null,
    createdAt: reg ? iso(reg.createdAt) : null,
  }
}

async function register(store: Repositories, token: TokenRow, recipient: string, now: number): Promise<{ id: number; view: ClaimRegistrationView }> {
  if (token.twoTapClaim !== 1)
    throw new ConflictError('two_tap_claim_disabled', 'This token does not use a 2-tap claim; transfer it directly')
  const open = await store.claimRegistrations.findOpen(token.id, now)
  if (open)
    throw new ConflictError(
      'claim_registration_exists',
      `This token already has an open claim registration until ${iso(open.expiresAt)}`,
    )
  const allowedAt = now + token.claimDelaySeconds * 1000
  const row = { tokenId: token.id, recipient, createdAt: now, allowedAt, expiresAt: allowedAt + token.claimWindowSeconds * 1000 }
  const id = await store.claimRegistrations.insert(row)
  return { id, view: view(token, { ...row, id, usedAt: null }) }
}

/** POST /phygitals/claim-registration (API key). */
export function createClaimRegistration(
  store: Store,
  p: { key: TokenKey; teamId: number; recipient: string; now: number },
): Promise<ClaimRegistrationView> {
  return store.tx(async (tx) => (await register(tx, await findToken(tx, p.key, p.teamId), p.recipient, p.now)).view)
}

type RegisterWithOtpParameters = { code: string | undefined; recipient: string; now: number; onRegistered?: (registrationId: number, view: ClaimRegistrationView, tx: Tx) => Promise<unknown> }

/**
 * The OTP from the first tap registers the recipient, inside one store.tx. The
 * OTP is spent only if the registration is made; an OTP issued before the
 * token's last move is refused (409 token_moved). The caller has read the
 * chain for moves made outside the gateway (registerWithOtp, a kiosk claim).
 */
export function createClaimRegistrationWithOtp(store: Store, p: RegisterWithOtpParameters): Promise<ClaimRegistrationView> {
  return store.tx(async (tx) => {
    const { token } = await spendTokenOtp(tx, { code: p.code, usedFor: 'claim-registration', now: p.now })
    const { id, view } = await register(tx, token, p.recipient, p.now)
    await p.onRegistered?.(id, view, tx)
    return view
  })
}

/**
 * POST /phygitals/claim-registration/pullable: a stale OTP is refused before the chain is read for the
 * token's moves, and a token whose moves cannot be read is not registered (503 chain_state_unknown).
 * A chain this gateway has no keys for is not read: the gateway moves nothing there, and the
 * transfer that would use the registration needs keys and its own read.
 */
export async function registerWithOtp(deps: Pick<ChainDeps, 'store' | 'chains' | 'config'>, p: RegisterWithOtpParameters): Promise<ClaimRegistrationView> {
  const { token } = await checkTokenOtp(deps.store, { code: p.code, now: p.now })
  if (deps.chains.findSigner(token.chainId)) await refreshTokenMoves(deps, token)
  return createClaimRegistrationWithOtp(deps.store, p)
}

/** DELETE /phygitals/claim-registration: removes the recipient's unused registration. */
export async function deleteClaimRegistration(store: Store, p: { key: TokenKey; teamId: number; recipient: string }): Promise<void> {
  await store.tx(async (tx) => {
    const token = await findToken(tx, p.key, p.teamId)
    if (await tx.claimRegistrations.deleteUnused(token.id, p.recipient) === 0)
      throw new NotFoundError('claim_registration_not_found', 'This recipient has no unused claim registration for the token')
  })
}
