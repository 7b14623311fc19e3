import { randomUUID } from 'node:crypto'
import type { Hex } from 'viem'
import type { Chain, Chains } from '../chain/chains.js'
import { ChainUnreachableError, RpcError, type RpcReceipt } from '../chain/rpc.js'
import { signTransactionSync } from '../chain/signSync.js'
import type { Config } from '../config.js'
import type { ChainTxRow } from '../db/chainTxs.js'
import type { Store } from '../db/store.js'
import { recordTxStep } from '../feed/txProgress.js'
import { createSenderLease, type SenderLease } from './lease.js'
import { recoverTransfer } from './recoverTransfer.js'
import type { RelayerLog } from './relayerLog.js'
import { settleTx } from '../outbox/settleTx.js'

export type ChainStatus = { chainId: number; reachable: boolean; lastError: string | null; open: number }

export type Relayer = {
  /** This instance's id in relayer_leases and chain_txs.sent_by: random, since pids repeat across machines. */
  readonly holder: string
  /** Starts a loop per chain, woken by every commit that queues a transaction (the store's `tapgate_outbox`). */
  start(): void
  /** Something was queued for this chain: send it now rather than at the next poll. */
  wake(chainId: number): void
  /** Resolves once every transaction of the chain (default: all chains) is mined, or rejects after timeoutMs. */
  waitIdle(options?: { chainId?: number; timeoutMs?: number }): Promise<void>
  status(): ChainStatus[]
  /**
   * Runs `work` while this chain's loop is paused: after a pass in progress has
   * ended, before the next one starts (the embedded chain's restart replays
   * the outbox this way, with nothing else sending).
   */
  hold<T>(chainId: number, work: () => Promise<T>): Promise<T>
  stop(): Promise<void>
}

export type RelayerParameters = {
  store: Store
  chains: Chains
  config: Config
  log: RelayerLog
  now?: () => number
  holder?: string
}

/** Transactions of one chain sent (and, on the embedded chain, mined into one block) per pass. */
const BATCH = 64

type BroadcastResult = { error?: string; unreachable?: boolean }

/** Errors that mean the node already has this nonce's transaction: follow receipts instead. */
const alreadyKnown = /already known|known transaction|already imported|nonce too low|replacement transaction underpriced|nonce has already been used/i

/**
 * The outbox worker. Per chain, one loop at a time: broadcast queued
 * transactions in nonce order, follow receipts (for every signed version of a
 * transaction, since a replaced one may still be the one mined), settle what
 * was mined, and replace what is stuck with higher fees. An unreachable RPC
 * only pauses the loop: everything stays in the outbox and goes out when the
 * RPC answers again.
 *
 * On the embedded chain each pass's batch is mined into one block (see
 * sendAndMine).
 */
export function createRelayer({ store, chains, config, log, now = Date.now, holder = randomUUID() }: RelayerParameters): Relayer {
  type Loop = {
    chain: Chain
    /** Only the holder of the chain's sender lease sends, replaces and mines; anyone follows receipts. */
    lease: SenderLease
    running: Promise<void> | null
    again: boolean
    timer: NodeJS.Timeout | null
    headAt: number
    /** The last head seen, and when (wall clock) a new block was last seen or mined: the embedded chain's idle blocks go by it. */
    head: bigint
    blockAt: number
    status: ChainStatus
    held: number
  }
  const loops = new Map<number, Loop>()
  let stopped = true
  // The store's outbox notifications, while started: this process's commits, and on PostgreSQL every gateway's.
  let listening: Promise<(() => Promise<void>) | null> | null = null

  const schedule = (loop: Loop, delayMs: number) => {
    if (stopped || loop.timer) return
    loop.timer = setTimeout(() => {
      loop.timer = null
      run(loop)
    }, delayMs)
    loop.timer.unref?.()
  }

  const run = (loop: Loop) => {
    if (stopped || loop.held > 0) return
    if (loop.running) {
      loop.again = true
      return
    }
    loop.again = false
    loop.running = tick(loop)
      .then((busy) => {
        loop.status.reachable = true
        loop.status.lastError = null
        return busy
      })
      .catch((error: unknown) => {
        if (error instanceof ChainUnreachableError) {
          if (loop.status.reachable) log.warn({ chainId: loop.chain.chainId, err: error.message }, 'chain RPC unreachable; transactions stay queued')
          loop.status.reachable = false
        } else {
          log.error({ chainId: loop.chain.chainId, err: error }, 'relayer tick failed')
        }
        loop.status.lastError = (error as Error).message
        return false
      })
      .then((busy) => {
        loop.running = null
        // Woken meanwhile, or more to send: go again now (the embedded chain answers at once), else poll.
        const soon = busy && !loop.chain.embedded ? Math.min(250, config.chain.pollIntervalMs) : 0
        schedule(loop, loop.again || busy ? soon : config.chain.pollIntervalMs)
      })
  }

  async function refreshHead(loop: Loop): Promise<bigint> {
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

  /** One pass over the chain's open transactions; true when more work is waiting. */
  async function tick(loop: Loop): Promise<boolean> {
    const { chain, lease } = loop
    const had = lease.epoch
    const holding = await lease.acquire()
    if (holding !== (had !== null)) log.info({ chainId: chain.chainId, holder, epoch: lease.epoch }, holding ? 'relayer lease taken: this gateway sends' : 'relayer lease lost: another gateway sends')
    // Wall-clock time for scheduling; now() (movable in tests) only for what is recorded.
    const head = Date.now() - loop.headAt >= config.chain.pollIntervalMs || loop.headAt === 0
      ? await refreshHead(loop)
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
      if (recorded.fenced) fenced(loop)
      const unreachable = results.find((r) => r.unreachable)
      if (unreachable) throw new ChainUnreachableError(chain.chainId, unreachable.error!)
    }

    // Receipts for every version of every sent transaction; a receipt counts once it has its confirmations.
    const sent = await store.chainTxs.withStatus(chain.chainId, 'sent', BATCH)
    const found = await Promise.all(sent.map((row) => findReceipt(chain, row)))
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

    if (receipts.length > 0) await settle(chain, receipts)
    if (lease.epoch !== null) await replaceStuck(loop)
    await mineIdleBlock(loop)
    loop.status.open = await store.chainTxs.countOpen(chain.chainId)
    // Progress and more to do: go again soon. No progress (a node refusing a transaction): wait for the next poll.
    return (sentNow > 0 || receipts.length > 0) && loop.status.open > 0
  }

  async function settle(chain: Chain, receipts: Array<[ChainTxRow, RpcReceipt]>) {
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

  /**
   * The embedded chain: the whole batch goes into one block. anvil's cost is
   * per block and grows with its state, so one block per transaction (its
   * automine) would cap the relayer at about half of what anvil can take.
   */
  async function sendAndMine(chain: Chain, rows: ChainTxRow[]): Promise<BroadcastResult[]> {
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
  async function broadcastInOrder(chain: Chain, rows: ChainTxRow[]): Promise<BroadcastResult[]> {
    const results: BroadcastResult[] = []
    for (const row of rows) {
      const last = results.at(-1)
      results.push(last?.unreachable ? last : await broadcast(chain, row.rawTx as Hex))
    }
    return results
  }

  async function broadcast(chain: Chain, raw: Hex): Promise<BroadcastResult> {
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

  async function findReceipt(chain: Chain, row: ChainTxRow): Promise<RpcReceipt | null> {
    for (const hash of await store.chainTxs.attemptHashes(row.id)) {
      const receipt = await chain.rpc.receipt(hash as Hex)
      if (receipt) return receipt
    }
    return null
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

  /**
   * anvil mines only when sent something, so on an idle embedded chain "head +
   * signatureBlocks" would bound nothing in time. After idleBlockSeconds
   * without a block, one empty block. Here in the loop, not on a timer of its
   * own, so it never lands inside a batch (sendAndMine turns automine off and
   * on) and never while the chain is held for a restart; while busy, the
   * batches are the blocks. Only the gateway that runs the chain mines.
   */
  function fenced(loop: Loop) {
    log.warn({ chainId: loop.chain.chainId, holder }, 'relayer lease taken by another gateway: this write was refused, sending stops')
  }

  async function mineIdleBlock(loop: Loop) {
    const idleMs = config.chain.idleBlockSeconds * 1000
    if (!loop.chain.embedded || !chains.embedded?.owner || idleMs === 0 || Date.now() - loop.blockAt < idleMs) return
    await loop.chain.rpc.request('evm_mine')
    loop.blockAt = Date.now()
    chains.embedded.noteMined(1)
  }

  /** Re-signs transactions sent longer than replaceAfterSeconds ago with fees raised by feeBumpPercent. */
  async function replaceStuck(loop: Loop) {
    const { chain, lease } = loop
    if (chain.embedded) return
    const cutoff = now() - config.chain.replaceAfterSeconds * 1000
    const stuck = (await store.chainTxs.withStatus(chain.chainId, 'sent', BATCH)).filter((row) => (row.sentAt ?? 0) <= cutoff)
    if (stuck.length === 0) return
    const current = await store.chainTxs.getHead(chain.chainId)
    const bump = (value: string) => (BigInt(value) * BigInt(100 + config.chain.feeBumpPercent) + 99n) / 100n
    for (const row of stuck) {
      const maxPriorityFeePerGas = max(bump(row.maxPriorityFeePerGas), BigInt(current?.maxPriorityFeePerGas ?? 0))
      const maxFeePerGas = max(bump(row.maxFeePerGas), BigInt(current?.maxFeePerGas ?? 0), maxPriorityFeePerGas)
      const { raw, hash } = signTransactionSync(chain.relayer.key, {
        type: 'eip1559',
        chainId: chain.chainId,
        nonce: row.nonce,
        to: (row.toAddress ?? undefined) as Hex | undefined,
        data: row.data as Hex,
        gas: BigInt(row.gas),
        maxFeePerGas,
        maxPriorityFeePerGas,
      })
      // Recorded before it is sent: whichever version gets mined, we know its hash.
      const recorded = await lease.write(async (tx) => {
        await tx.chainTxs.replace(row.id, {
          rawTx: raw,
          txHash: hash,
          maxFeePerGas: maxFeePerGas.toString(),
          maxPriorityFeePerGas: maxPriorityFeePerGas.toString(),
          now: now(),
        })
        await recordTxStep(tx, row, { status: 'replaced', hash, now: now() })
      })
      // Fenced out: another gateway took the lease and replaces from now on; this version is never sent.
      if (recorded.fenced) return fenced(loop)
      log.info({ chainId: chain.chainId, nonce: row.nonce, from: row.txHash, to: hash, maxFeePerGas: maxFeePerGas.toString() }, 'replaced a stuck transaction with higher fees')
      const result = await broadcast(chain, raw)
      if (result.unreachable) throw new ChainUnreachableError(chain.chainId, result.error!)
      if (result.error) await store.chainTxs.setError(row.id, result.error)
    }
  }

  const wake = (chainId: number) => {
    const loop = loops.get(chainId)
    if (!loop) return
    if (loop.timer) {
      clearTimeout(loop.timer)
      loop.timer = null
    }
    run(loop)
  }

  return {
    holder,
    start() {
      if (!stopped) return
      stopped = false
      // A LISTEN that fails (PostgreSQL unreachable at this moment) leaves the poll: late, never lost.
      listening = store.listen('tapgate_outbox', (chainId) => wake(Number(chainId))).catch((error: unknown) => {
        log.warn({ err: error }, 'not following queued transactions: the relayer polls')
        return null
      })
      for (const chain of chains.list()) {
        const loop: Loop = {
          chain,
          lease: createSenderLease(store, { chainId: chain.chainId, sender: chain.relayer.address, holder }, config.chain.leaseSeconds * 1000),
          running: null,
          again: false,
          timer: null,
          headAt: 0,
          head: -1n,
          blockAt: Date.now(),
          status: { chainId: chain.chainId, reachable: true, lastError: null, open: 0 },
          held: 0,
        }
        loops.set(chain.chainId, loop)
        run(loop)
      }
    },
    wake,
    async waitIdle({ chainId, timeoutMs = 30_000 } = {}) {
      const deadline = Date.now() + timeoutMs
      const ids = chainId === undefined ? [...loops.keys()] : [chainId]
      for (;;) {
        // A tick in progress may be about to queue more (a re-signed transfer after a revert).
        const open = await Promise.all(ids.map((id) => store.chainTxs.countOpen(id)))
        if (ids.every((id, i) => open[i] === 0 && !loops.get(id)?.running)) return
        if (Date.now() > deadline) throw new Error(`relayer still has open transactions after ${timeoutMs} ms`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    },
    status: () => [...loops.values()].map((loop) => ({ ...loop.status })),
    async hold(chainId, work) {
      const loop = loops.get(chainId)
      if (!loop) return work()
      loop.held++
      try {
        while (loop.running) await loop.running
        return await work()
      } finally {
        loop.held--
        if (loop.held === 0) run(loop)
      }
    },
    async stop() {
      stopped = true
      const unlisten = await listening
      listening = null
      // UNLISTEN ends with its connection: a database already gone must not stop the stop.
      await unlisten?.().catch((error: unknown) => log.warn({ err: error }, 'could not stop following queued transactions'))
      for (const loop of loops.values()) {
        if (loop.timer) clearTimeout(loop.timer)
        loop.timer = null
      }
      await Promise.all([...loops.values()].map((loop) => loop.running))
      // Handed over at once: another gateway takes the lease at its next poll instead of after leaseSeconds.
      for (const loop of loops.values()) loop.lease.release()
      loops.clear()
    },
  }
}

const max = (...values: bigint[]) => values.reduce((a, b) => (b > a ? b : a))
