import type { Address, Hex } from 'viem'
import { hashTypedData, isAddressEqual, recoverTypedDataAddress } from 'viem/utils'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'
import { type ChainDeps, readChain } from '../chain/chainDeps.js'
import { ContractRevertError } from '../chain/rpc.js'
import type { Store, Repositories } from '../db/store.js'
import type { TokenKey } from '../db/tokens.js'
import { BadRequestError, ConflictError, ForbiddenError } from '../errors.js'
import { findToken } from '../tokens/findTeamToken.js'

/** The spec's EIP-712 request (no chainId or verifyingContract in the domain: the token names both). */
export const selfServiceTypes = {
  Updates: [{ name: 'redirectUrl', type: 'string' }],
  TokenRef: [
    { name: 'contractAddress', type: 'address' },
    { name: 'tokenId', type: 'uint256' },
    { name: 'chainId', type: 'uint256' },
  ],
  UpdateRequest: [
    { name: 'token', type: 'TokenRef' },
    { name: 'updates', type: 'Updates' },
    { name: 'requestExpiryTime', type: 'uint256' },
  ],
} as const

export const selfServiceDomain = { name: 'Update Self Service Tag', version: '1' } as const

export type SelfServiceRequest = {
  key: TokenKey
  updates: { redirectUrl: string }
  requestExpiryTime: number
  ownerSignature: Hex
}

/**
 * The typed data a token owner signs to edit the chips of a token. `redirectUrl` must be the string
 * exactly as the owner sent it (RedirectUrl validates without rewriting): the signature covers those bytes.
 */
export function selfServiceTypedData(p: Omit<SelfServiceRequest, 'ownerSignature'>) {
  return {
    domain: selfServiceDomain,
    types: selfServiceTypes,
    primaryType: 'UpdateRequest' as const,
    message: {
      token: { contractAddress: p.key.contractAddress as Address, tokenId: BigInt(p.key.tokenId), chainId: BigInt(p.key.chainId) },
      updates: { redirectUrl: p.updates.redirectUrl },
      requestExpiryTime: BigInt(p.requestExpiryTime),
    },
  }
}

/**
 * PATCH /chips/self-service: the token's current on-chain owner sets the
 * redirect URL of every chip of the token. Checks, in order: the request has
 * not expired and is not too far ahead (config chain.selfServiceMaxSeconds),
 * the signature recovers to `ownerOf(tokenId)` now, and the same signed
 * request was not applied before (each signature works once).
 */
export async function editChipsBySelfService(
  deps: ChainDeps,
  p: SelfServiceRequest,
): Promise<{ success: true; updatedTags: string[] }> {
  const { store } = deps
  const nowSeconds = Math.floor(deps.now() / 1000)
  if (p.requestExpiryTime <= nowSeconds)
    throw new BadRequestError('request_expired', `requestExpiryTime ${p.requestExpiryTime} is in the past (now ${nowSeconds})`)
  if (p.requestExpiryTime > nowSeconds + deps.config.chain.selfServiceMaxSeconds)
    throw new BadRequestError(
      'request_expiry_too_far',
      `requestExpiryTime may be at most ${deps.config.chain.selfServiceMaxSeconds} s ahead; sign a request that expires sooner`,
    )
  const token = await findToken(store, p.key, null)
  const chain = deps.chains.require(token.chainId)
  const typedData = selfServiceTypedData(p)
  let signer: Address
  try {
    signer = await recoverTypedDataAddress({ ...typedData, signature: p.ownerSignature })
  } catch {
    throw new BadRequestError('invalid_signature', 'ownerSignature is not a valid EIP-712 signature')
  }
  const owner = await readChain(chain.chainId, () =>
    chain.rpc
      .read({ address: token.contractAddress as Address, abi: phygitalTokenAbi, functionName: 'ownerOf', args: [BigInt(token.tokenId)] })
      .catch((error: unknown) => {
        if (error instanceof ContractRevertError) throw new ConflictError('token_not_minted', 'The token has no owner yet, so nobody can sign for it')
        throw error
      }),
  )
  if (!isAddressEqual(signer, owner))
    throw new ForbiddenError('not_token_owner', `The request is signed by ${signer}, but the token's owner is ${owner}`)
  const digest = hashTypedData(typedData)
  return store.tx(async (tx) => {
    if (!await tx.usedSignatures.use(digest, deps.now()))
      throw new ConflictError('signature_used', 'This signed request was already applied; sign a new one')
    const updatedTags = await applyRedirect(tx, token.id, p.updates.redirectUrl)
    return { success: true as const, updatedTags }
  })
}

async function applyRedirect(store: Repositories, tokenRowId: number, redirectUrl: string): Promise<string[]> {
  const uids = await store.tokens.chipUids(tokenRowId)
  for (const uid of uids) await store.chips.setRedirectUrl(uid, redirectUrl)
  return uids
}
