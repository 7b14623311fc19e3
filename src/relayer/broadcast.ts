import type { Hex } from 'viem'
import type { Chain } from '../chain/chains.js'
import { ChainUnreachableError, RpcError } from '../chain/rpc.js'
import type { ChainTxRow } from '../db/chainTxs.js'

export type BroadcastResult = { error?: string; unreachable?: boolean }

/** Errors that mean the node already has this nonce's transaction: follow receipts instead. */
const alreadyKnown = /already known|known transaction|already imported|nonce too low|replacement transaction underpriced|nonce has already been used/i

/**
 * The embedded chain: the whole batch goes into one block. anvil's cost is
 * per block and grows with its state, so one block per transaction (its
 * automine) would cap the relayer at about half of what anvil can take.
 */
export async function sendAndMine(chain: Chain, rows: ChainTxRow[]): Promise<BroadcastResult[]> {
  await chain.rpc.request('evm_setAutomine', [false])
  try {
    const results = await Promise.all(rows.map((row) => broadcast(chain, row.rawTx as Hex)))
    if (results.some((r) => !r.error)) await chain.rpc.request('evm_mine')
    return results
  } finally {
    await chain.rpc.request('evm_setAutomine', [true])
  }
}

/**
 * Sends the rows one after the other, in their nonce order (the order `withStatus` lists them). Sent
 * side by side they reach the node in any order, and a node pools a transaction that arrives before
 * its predecessor as "queued"; anvil then did not always promote it once the gap closed, and it sat
 * there until its fee replacement a minute later (test/postgres/outage: 5 of about 60 runs, txpool
 * queued with the account's nonce equal to the transaction's). One round trip per transaction of a
 * tick costs nothing at a door's rate of mints. Once the node is unreachable, the rest are not tried.
 */
export async function broadcastInOrder(chain: Chain, rows: ChainTxRow[]): Promise<BroadcastResult[]> {
  const results: BroadcastResult[] = []
  for (const row of rows) {
    const last = results.at(-1)
    results.push(last?.unreachable ? last : await broadcast(chain, row.rawTx as Hex))
  }
  return results
}

export async function broadcast(chain: Chain, raw: Hex): Promise<BroadcastResult> {
  try {
    await chain.rpc.request<Hex>('eth_sendRawTransaction', [raw])
    return {}
  } catch (error) {
    if (error instanceof ChainUnreachableError) return { error: error.message, unreachable: true }
    if (error instanceof RpcError && alreadyKnown.test(error.message)) return {}
    if (error instanceof RpcError) return { error: error.message }
    throw error
  }
}
