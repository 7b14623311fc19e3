import type { Address } from 'viem'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'
import type { Chain } from '../chain/chains.js'
import { ContractRevertError } from '../chain/rpc.js'
import type { Config } from '../config.js'
import type { ChainTxRow } from '../db/chainTxs.js'
import type { Store } from '../db/store.js'
import { signTransferTx } from '../transfers/signTransferTx.js'
import type { RelayerLog } from './relayer.js'

/** A transfer is re-signed at most this many times before it is left for an operator. */
export const MAX_RESIGNS = 3

/**
 * A relayed transfer reverted. The usual cause is that our local view went
 * stale: a signature handed out by GET /phygitals/transfer-signature was used
 * meanwhile (the recipient's claim nonce moved, or the token got minted), or
 * the signature expired during a long outage. Read the truth from the chain
 * and send a fresh transaction for the same request; the request is never
 * dropped silently and never done twice (the old transaction is mined and
 * reverted, so it cannot land later).
 */
export async function recoverTransfer(p: { store: Store; chain: Chain; config: Config; row: ChainTxRow; log: RelayerLog; now: number }): Promise<void> {
  const { store, chain, row, log } = p
  const transfer = store.transfers.findByTx(row.id)
  if (!transfer) return
  const token = store.tokens.get(transfer.tokenId)!
  const contract = token.contractAddress as Address
  const recipient = transfer.recipient as Address
  if (transfer.resigned >= MAX_RESIGNS) {
    log.error({ transferId: transfer.id, tx: row.txHash }, 'transfer reverted again after re-signing; left for an operator')
    return
  }
  const tokenId = BigInt(token.tokenId)
  let owner: Address | null = null
  try {
    owner = await chain.rpc.read({ address: contract, abi: phygitalTokenAbi, functionName: 'ownerOf', args: [tokenId] })
  } catch (error) {
    if (!(error instanceof ContractRevertError)) throw error
  }
  if (owner === recipient) {
    log.info({ transferId: transfer.id }, 'transfer reverted but the recipient already owns the token; nothing to redo')
    return
  }
  const onChainNonce = await chain.rpc.read({ address: contract, abi: phygitalTokenAbi, functionName: 'getClaimNonce', args: [recipient] })
  const method = owner === null ? 'mintNFT' : 'claimNFT'
  const queued = store.tx(() => {
    // Transfers to the same recipient still queued ahead of this one will use the nonces before ours.
    const ahead = store.transfers.countPendingTo(chain.chainId, contract, recipient, Number.MAX_SAFE_INTEGER)
    store.chainTxs.setClaimNonce(chain.chainId, contract, recipient, Number(onChainNonce) + ahead)
    const tx = signTransferTx(store, chain, { token, recipient, method, now: p.now, config: p.config })
    store.transfers.resign(transfer.id, tx.id, method)
    return tx
  })
  log.warn({ transferId: transfer.id, from: row.txHash, to: queued.hash, method }, 'transfer re-signed after a revert')
}
