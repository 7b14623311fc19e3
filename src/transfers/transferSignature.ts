import type { Address } from 'viem'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'
import type { Chain } from '../chain/chains.js'
import { signClaim } from '../chain/claimSignature.js'
import { type ChainDeps, readChain } from '../chain/chainDeps.js'
import { ContractRevertError } from '../chain/rpc.js'
import type { TokenKey, TokenRow } from '../db/tokens.js'
import { ConflictError } from '../errors.js'
import { checkOtp, spendOtp } from '../otps/spendOtp.js'
import { tokenOfOtp } from './transferToken.js'
import { findToken } from '../phygitals/findTeamToken.js'
import { checkClaimRegistration } from './claimGate.js'

export type TransferSignature = {
  signature: string
  blockExpiry: string
  tokenRef: { contractAddress: string; tokenId: string; chainId: string }
}

/**
 * Signs what mintNFT/claimNFT accept for `recipient`: valid until the current
 * block + chain.signatureBlocks, with the recipient's next claim nonce —
 * counting our own relayed transfers to the recipient that are still
 * waiting, since those will use the nonces before it.
 */
async function sign(deps: ChainDeps, chain: Chain, token: TokenRow, recipient: Address): Promise<Omit<TransferSignature, 'tokenRef'>> {
  const contract = token.contractAddress as Address
  const [head, onChainNonce] = await readChain(chain.chainId, () =>
    Promise.all([
      chain.rpc.blockNumber(),
      chain.rpc.read({ address: contract, abi: phygitalTokenAbi, functionName: 'getClaimNonce', args: [recipient] }).catch((error: unknown) => {
        if (error instanceof ContractRevertError)
          throw new ConflictError('not_a_phygital_contract', `${contract} on chain ${chain.chainId} is not a phygital contract (no getClaimNonce)`)
        throw error
      }),
    ]),
  )
  const nonce = onChainNonce + BigInt(deps.store.transfers.countPendingTo(chain.chainId, contract, recipient, Number.MAX_SAFE_INTEGER))
  const blockExpiry = head + BigInt(deps.config.chain.signatureBlocks)
  const signature = signClaim(chain.signer.key, { blockExpiry, recipient, tokenId: BigInt(token.tokenId), contract, nonce })
  return { signature, blockExpiry: blockExpiry.toString() }
}

const tokenRef = (token: TokenRow) => ({ contractAddress: token.contractAddress, tokenId: token.tokenId, chainId: String(token.chainId) })

/** GET /phygitals/transfer-signature (API key). A 2-tap token needs an open registration; it is used up by the transfer itself, on chain. */
export async function transferSignatureWithApiKey(deps: ChainDeps, p: { key: TokenKey; teamId: number; recipient: Address }): Promise<TransferSignature> {
  const token = findToken(deps.store, p.key, p.teamId)
  const chain = deps.chains.require(token.chainId)
  checkClaimRegistration(deps.store, token, p.recipient, deps.now())
  const { signature, blockExpiry } = await sign(deps, chain, token, p.recipient)
  return { signature, blockExpiry, tokenRef: tokenRef(token) }
}

/**
 * GET /phygitals/transfer-signature/pullable (OTP). The chain is read first and
 * the OTP spent after, so an outage does not burn the tap.
 */
export async function transferSignatureWithOtp(deps: ChainDeps, p: { code: string | undefined; recipient: Address }): Promise<TransferSignature> {
  const { store } = deps
  const otp = checkOtp(store, { code: p.code, type: 'PHYGITAL_CLAIM', now: deps.now() })
  const token = tokenOfOtp(store, otp)
  const chain = deps.chains.require(token.chainId)
  checkClaimRegistration(store, token, p.recipient, deps.now())
  const { signature, blockExpiry } = await sign(deps, chain, token, p.recipient)
  // Spent only now; a second request racing this one gets 409 otp_used and no signature.
  store.tx(() => spendOtp(store, { code: p.code, type: 'PHYGITAL_CLAIM', usedFor: 'transfer-signature', now: deps.now() }))
  return { signature, blockExpiry, tokenRef: tokenRef(token) }
}
