import type { Address, Hex } from 'viem'
import { getContractAddress } from 'viem/utils'
import type { ChainSigner } from '../chain/chainKeys.js'
import { signTransactionSync } from '../chain/signSync.js'
import type { ChainTxKind } from '../db/chainTxs.js'
import type { Tx } from '../db/types.js'

export type QueueTxParameters = {
  kind: ChainTxKind
  /** null deploys `data` as init code. */
  to: Address | null
  /** A deploy may build its init code from the address the contract will get (e.g. its own tokenURI base). */
  data: Hex | ((contractAddress: Address) => Hex)
  gas: bigint
  now: number
  /** maxFeePerGas when the chain's fee data has never been seen (config chain.fallbackMaxFeeGwei). */
  fallbackMaxFeeGwei: number
}

export type QueuedTx = {
  id: number
  hash: Hex
  nonce: number
  /** For a deploy: where the contract will be once mined. */
  contractAddress: Address | null
}

/**
 * Signs a transaction with the chain's relayer key and stores it in the
 * outbox. Must run inside the caller's transaction (`tx`): the nonce, the signed
 * transaction and the request's own record commit together or not at all, so
 * an accepted request is never lost and a nonce never used twice. Nothing is
 * broadcast here; the relayer worker sends it after the commit.
 *
 * Fees are the last ones seen from the chain, so requests are still accepted
 * while its RPC is unreachable; a stuck transaction is later replaced with
 * higher fees (see relayer.ts).
 */
export async function queueTx(tx: Tx, chain: ChainSigner, p: QueueTxParameters): Promise<QueuedTx> {
  const head = await tx.chainTxs.getHead(chain.chainId)
  const fallback = BigInt(Math.round(p.fallbackMaxFeeGwei * 1e9))
  const maxPriorityFeePerGas = head ? BigInt(head.maxPriorityFeePerGas) : fallback / 10n
  const maxFeePerGas = head ? BigInt(head.maxFeePerGas) : fallback
  const nonce = await tx.chainTxs.allocateNonce(chain.chainId, chain.relayer.address)
  const contractAddress = p.to === null ? getContractAddress({ from: chain.relayer.address, nonce: BigInt(nonce) }) : null
  const data = typeof p.data === 'function' ? p.data(contractAddress!) : p.data
  const { raw, hash } = signTransactionSync(chain.relayer.key, {
    type: 'eip1559',
    chainId: chain.chainId,
    nonce,
    to: p.to ?? undefined,
    data,
    gas: p.gas,
    maxFeePerGas,
    maxPriorityFeePerGas,
  })
  const id = await tx.chainTxs.insert({
    chainId: chain.chainId,
    sender: chain.relayer.address,
    nonce,
    kind: p.kind,
    toAddress: p.to,
    data,
    gas: Number(p.gas),
    maxFeePerGas: maxFeePerGas.toString(),
    maxPriorityFeePerGas: maxPriorityFeePerGas.toString(),
    rawTx: raw,
    txHash: hash,
    createdAt: p.now,
  })
  return { id, hash, nonce, contractAddress }
}
