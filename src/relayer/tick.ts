import type { Hex } from 'viem'
import type { Chain } from '../chain/chains.js'
import { ChainUnreachableError, RpcError, type RpcReceipt } from '../chain/rpc.js'
import type { ChainTxRow } from '../db/chainTxs.js'
import { recordTxStep } from '../feed/txProgress.js'
import { broadcastInOrder, sendAndMine } from './broadcast.js'
import { BATCH, type ChainLoop, fenced, type RelayerContext } from './chainLoop.js'
import { replaceStuck } from './replaceStuck.js'
import { settleReceipts } from './settleReceipts.js'

/**
 * One pass over the chain's open transactions: take (or keep) the sender lease, send what is queued
 * (the holder only), follow receipts, settle what was mined (settleReceipts), replace what is stuck
 * (replaceStuck), mine an idle block on the embedded chain.
 *
 * @returns true when more work is waiting
 */
export async function tick(ctx: RelayerContext, loop: ChainLoop): Promise<boolean> {
  const { store, config, log, now, holder } = ctx
  const { chain, lease } = loop
  const had = lease.epoch
  const holding = await lease.acquire()
  if (holding !== (had !== null)) log.info({ chainId: chain.chainId, holder, epoch: lease.epoch }, holding ? 'relayer lease taken: this gateway sends' : 'relayer lease lost: another gateway sends')
  // Wall-clock time for scheduling; now() (movable in tests) only for what is recorded.
  const head = Date.now() - loop.headAt >= config.chain.pollIntervalMs || loop.headAt === 0
    ? await refreshHead(ctx, loop)
    : BigInt((await store.chainTxs.getHead(chain.chainId))?.blockNumber ?? 0)

  const queued = holding ? await store.chainTxs.withStatus(chain.chainId, 'queued', BATCH) : []
  let sentNow = 0
  if (queued.length > 0) {
    const results = chain.embedded ? await sendAndMine(chain, queued) : await broadcastInOrder(chain, queued)
    if (chain.embedded) loop.blockAt = Date.now()
    const sentAt = now()
    const recorded = await lease.write(async (tx) => {
      for (const [i, row] of queued.entries()) {
        const error = results[i]!.error
        if (error) await tx.chainTxs.setError(row.id, error)
        else if (await tx.chainTxs.markSent(row.id, sentAt, holder)) {
          sentNow++
          await recordTxStep(tx, row, { status: 'sent', hash: row.txHash, now: sentAt })
        }
      }
    })
    if (recorded.fenced) fenced(ctx, loop)
    const unreachable = results.find((r) => r.unreachable)
    if (unreachable) throw new ChainUnreachableError(chain.chainId, unreachable.error!)
  }

  // Receipts for every version of every sent transaction; a receipt counts once it has its confirmations.
  const sent = await store.chainTxs.withStatus(chain.chainId, 'sent', BATCH)
  const found = await Promise.all(sent.map((row) => findReceipt(ctx, chain, row)))
  const receipts: Array<[ChainTxRow, RpcReceipt]> = []
  sent.forEach((row, i) => {
    const receipt = found[i]
    if (receipt && (chain.confirmations <= 1 || BigInt(receipt.blockNumber) + BigInt(chain.confirmations) - 1n <= head))
      receipts.push([row, receipt])
  })
  // Left in anvil's pool (a block was full, or sent by an earlier process): mine them.
  if (chain.embedded && receipts.length < sent.length && lease.epoch !== null) {
    await chain.rpc.request('evm_mine')
    loop.blockAt = Date.now()
  }

  if (receipts.length > 0) await settleReceipts(ctx, chain, receipts)
  if (lease.epoch !== null) await replaceStuck(ctx, loop)
  await mineIdleBlock(ctx, loop)
  loop.status.open = await store.chainTxs.countOpen(chain.chainId)
  // Progress and more to do: go again soon. No progress (a node refusing a transaction): wait for the next poll.
  return (sentNow > 0 || receipts.length > 0) && loop.status.open > 0
}

async function refreshHead({ store, now }: RelayerContext, loop: ChainLoop): Promise<bigint> {
  const { rpc, chainId } = loop.chain
  const [block, priority] = await Promise.all([
    rpc.request<{ number: Hex; baseFeePerGas?: Hex }>('eth_getBlockByNumber', ['latest', false]),
    rpc.request<Hex>('eth_maxPriorityFeePerGas').then(BigInt, (error: unknown) => {
      if (error instanceof RpcError) return 1_000_000_000n
      throw error
    }),
  ])
  const baseFee = block.baseFeePerGas ? BigInt(block.baseFeePerGas) : 0n
  const head = BigInt(block.number)
  if (head !== loop.head) {
    loop.head = head
    loop.blockAt = Date.now()
  }
  await store.chainTxs.setHead({
    chainId,
    blockNumber: Number(head),
    // Twice the base fee rides out six full blocks of base-fee growth.
    maxFeePerGas: (2n * baseFee + priority).toString(),
    maxPriorityFeePerGas: priority.toString(),
    updatedAt: now(),
  })
  loop.headAt = Date.now()
  return head
}

async function findReceipt({ store }: RelayerContext, chain: Chain, row: ChainTxRow): Promise<RpcReceipt | null> {
  for (const hash of await store.chainTxs.attemptHashes(row.id)) {
    const receipt = await chain.rpc.receipt(hash as Hex)
    if (receipt) return receipt
  }
  return null
}

/**
 * anvil mines only when sent something, so on an idle embedded chain "head +
 * signatureBlocks" would bound nothing in time. After idleBlockSeconds
 * without a block, one empty block. Here in the loop, not on a timer of its
 * own, so it never lands inside a batch (sendAndMine turns automine off and
 * on) and never while the chain is held for a restart; while busy, the
 * batches are the blocks. Only the gateway that runs the chain mines.
 */
async function mineIdleBlock({ config, chains }: RelayerContext, loop: ChainLoop) {
  const idleMs = config.chain.idleBlockSeconds * 1000
  if (!loop.chain.embedded || !chains.embedded?.owner || idleMs === 0 || Date.now() - loop.blockAt < idleMs) return
  await loop.chain.rpc.request('evm_mine')
  loop.blockAt = Date.now()
  chains.embedded.noteMined(1)
}
