import type { Address } from 'viem'
import type { Chain } from '../chain/chains.js'
import { signClaim } from '../chain/claimSignature.js'
import { type ChainDeps, readChain } from '../chain/chainDeps.js'
import { checkRecipientCanReceive } from '../chain/recipientCheck.js'
import { ChainUnreachableError } from '../chain/rpc.js'
import type { TokenKey, TokenRow } from '../db/tokens.js'
import { BaseError } from '../errors.js'
import { checkTokenOtp, spendTokenOtp } from '../otps/tokenOtp.js'
import { findToken } from '../tokens/findTeamToken.js'
import { checkClaimRegistration } from './claimGate.js'
import { noteChainNonce, readTokenNonce } from '../tokens/tokenMoves.js'

export type TransferSignature = {
  signature: string
  blockExpiry: string
  tokenRef: { contractAddress: string; tokenId: string; chainId: string }
}

/**
 * Signs what mintNFT/claimNFT accept for `recipient`: valid until the current
 * block + chain.signatureBlocks, on this chain, with the token's next nonce —
 * counting our own relayed transfers of the token that are still waiting,
 * since each of those moves it once. Any later move of the token (ours or a
 * user's) kills the signature. A recipient that cannot receive is refused first.
 */
async function sign(deps: ChainDeps, chain: Chain, token: TokenRow, recipient: Address): Promise<Omit<TransferSignature, 'tokenRef'>> {
  const contract = token.contractAddress as Address
  const tokenId = BigInt(token.tokenId)
  const [head, onChainNonce] = await readChain(chain.chainId, () =>
    Promise.all([
      chain.rpc.blockNumber(),
      // Bounded like every read of a token's moves: 503 chain_state_unknown past it, nothing spent. An
      // RPC that is gone is the endpoint's usual chain_unavailable (the head read fails the same way).
      readTokenNonce(deps, token).catch((error: unknown) => {
        throw error instanceof BaseError && error.cause instanceof ChainUnreachableError ? error.cause : error
      }),
      checkRecipientCanReceive(chain.rpc, { standard: 'erc721', contract, operator: chain.relayer.address, tokenId, recipient }),
    ]),
  )
  // The read also tells whether the token moved outside the gateway (a pull with an earlier signature).
  await deps.store.tx(async (tx) => noteChainNonce(tx, await tx.tokens.get(token.id) ?? token, onChainNonce))
  const nonce = onChainNonce + BigInt(await deps.store.transfers.countPendingOfToken(token.id))
  const blockExpiry = head + BigInt(deps.config.chain.signatureBlocks)
  const signature = signClaim(chain.signer.key, { blockExpiry, recipient, tokenId, contract, chainId: BigInt(chain.chainId), nonce })
  return { signature, blockExpiry: blockExpiry.toString() }
}

const tokenRef = (token: TokenRow) => ({ contractAddress: token.contractAddress, tokenId: token.tokenId, chainId: String(token.chainId) })

/** GET /phygitals/transfer-signature (API key). A 2-tap token needs an open registration; it is used up by the transfer itself, on chain. */
export async function transferSignatureWithApiKey(deps: ChainDeps, p: { key: TokenKey; teamId: number; recipient: Address }): Promise<TransferSignature> {
  const token = await findToken(deps.store, p.key, p.teamId)
  const chain = deps.chains.require(token.chainId)
  await checkClaimRegistration(deps.store, token, p.recipient, deps.now())
  const { signature, blockExpiry } = await sign(deps, chain, token, p.recipient)
  return { signature, blockExpiry, tokenRef: tokenRef(token) }
}

/**
 * GET /phygitals/transfer-signature/pullable (OTP). The chain is read first and
 * the OTP spent after, so an outage does not burn the tap. An OTP issued before
 * the token's last move is refused (409 token_moved), also when the read finds
 * that move.
 */
export async function transferSignatureWithOtp(deps: ChainDeps, p: { code: string | undefined; recipient: Address }): Promise<TransferSignature> {
  const { store } = deps
  const { token } = await checkTokenOtp(store, { code: p.code, now: deps.now() })
  const chain = deps.chains.require(token.chainId)
  await checkClaimRegistration(store, token, p.recipient, deps.now())
  const { signature, blockExpiry } = await sign(deps, chain, token, p.recipient)
  // Spent only now; a second request racing this one gets 409 otp_used and no signature.
  await store.tx((tx) => spendTokenOtp(tx, { code: p.code, usedFor: 'transfer-signature', now: deps.now() }))
  return { signature, blockExpiry, tokenRef: tokenRef(token) }
}
