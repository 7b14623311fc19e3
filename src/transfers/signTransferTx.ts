import type { Address } from 'viem'
import type { ChainSigner } from '../chain/chainKeys.js'
import { signClaim } from '../chain/claimSignature.js'
import { GAS, transferData, type TransferMethod } from '../chain/contractCalls.js'
import type { Config } from '../config.js'
import type { Tx } from '../db/types.js'
import type { TokenRow } from '../db/tokens.js'
import { type QueuedTx, queueTx } from '../outbox/queueTx.js'

export type SignTransferTxParameters = {
  token: TokenRow
  recipient: Address
  method: TransferMethod
  now: number
  config: Config
  /** The chain's head, read just now; else the relayer's last recorded head (at most one poll old). */
  head?: number
}

/**
 * A relayed transfer is the contract's own pull: the relayer sends
 * mintNFT/claimNFT carrying a signature of the signer key, exactly as a user
 * would with a signature from GET /phygitals/transfer-signature. Its token
 * nonce comes from a local counter, so transfers of one token queued while the
 * RPC is down (or back to back) each get the next one: they land in relayer
 * nonce order, which is the order they were queued in. Runs inside the
 * caller's transaction (`tx`).
 */
export async function signTransferTx(tx: Tx, chain: ChainSigner, p: SignTransferTxParameters): Promise<QueuedTx> {
  const contract = p.token.contractAddress as Address
  const nonce = await tx.chainTxs.allocateTokenNonce(chain.chainId, contract, p.token.tokenId)
  const head = p.head ?? (await tx.chainTxs.getHead(chain.chainId))?.blockNumber ?? 0
  // Far in the future: a queued transfer must survive an outage. It is bound to recipient and the token's nonce, so it can only ever do this move.
  const blockExpiry = BigInt(head + p.config.chain.relayedSignatureBlocks)
  const tokenId = BigInt(p.token.tokenId)
  const signature = signClaim(chain.signer.key, { blockExpiry, recipient: p.recipient, tokenId, contract, chainId: BigInt(chain.chainId), nonce: BigInt(nonce) })
  return queueTx(tx, chain, {
    kind: 'transfer',
    to: contract,
    data: transferData(p.method, { signature, blockExpiry, recipient: p.recipient, tokenId }),
    gas: GAS.transfer,
    now: p.now,
    fallbackMaxFeeGwei: p.config.chain.fallbackMaxFeeGwei,
  })
}
