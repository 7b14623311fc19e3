import type { Hex } from 'viem'
import type { Chain } from '../chain/chains.js'
import type { RpcReceipt } from '../chain/rpc.js'
import type { ChainTxRow } from '../db/chainTxs.js'
import { settleTx } from '../outbox/settleTx.js'
import type { RelayerContext } from './chainLoop.js'
import { recoverTransfer } from './recoverTransfer.js'

/**
 * A pass's receipts, each with its confirmations: every transaction settled in one store
 * transaction (settleTx appends a confirmed / failed row for each one a station watches), then a
 * reverted transfer re-signed or given up (recoverTransfer).
 */
export async function settleReceipts(ctx: RelayerContext, chain: Chain, receipts: Array<[ChainTxRow, RpcReceipt]>): Promise<void> {
  const { store, chains, config, log, now } = ctx
  const timestamps = await blockTimestamps(chain, receipts.map(([, r]) => r))
  const reverted: ChainTxRow[] = []
  await store.tx(async (tx) => {
    for (const [row, receipt] of receipts) {
      const isReverted = receipt.status !== '0x1'
      const settled = await settleTx(tx, row, {
        txHash: receipt.transactionHash,
        blockNumber: Number(BigInt(receipt.blockNumber)),
        blockTimestamp: timestamps.get(receipt.blockNumber) ?? 0,
        reverted: isReverted,
        contractAddress: receipt.contractAddress,
        now: now(),
      })
      if (settled && isReverted) reverted.push(row)
    }
  })
  if (chain.embedded) chains.embedded?.noteMined(timestamps.size)
  for (const row of reverted) {
    log.warn({ chainId: chain.chainId, tx: row.txHash, kind: row.kind, nonce: row.nonce }, 'transaction reverted')
    if (row.kind === 'transfer') await recoverTransfer({ store, chain, config, row, log, now: now() })
  }
}

async function blockTimestamps(chain: Chain, receipts: RpcReceipt[]): Promise<Map<string, number>> {
  const times = new Map<string, number>()
  for (const receipt of receipts) {
    // anvil (and newer nodes) put blockTimestamp on the receipt; others need the block.
    const stamp = (receipt as RpcReceipt & { blockTimestamp?: Hex }).blockTimestamp
    if (stamp) times.set(receipt.blockNumber, Number(BigInt(stamp)))
  }
  for (const receipt of receipts)
    if (!times.has(receipt.blockNumber)) times.set(receipt.blockNumber, await chain.rpc.blockTimestamp(receipt.blockNumber))
  return times
}
