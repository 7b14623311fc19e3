import { randomUUID } from 'node:crypto'
import type { Chains } from '../chain/chains.js'
import { ChainUnreachableError } from '../chain/rpc.js'
import type { Config } from '../config.js'
import type { Store } from '../db/store.js'
import type { ChainLoop, ChainStatus, RelayerContext } from './chainLoop.js'
import { createSenderLease } from './lease.js'
import type { RelayerLog } from './relayerLog.js'
import { tick } from './tick.js'

export type { ChainStatus } from './chainLoop.js'

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

/**
 * The outbox worker. Per chain, one loop at a time: broadcast queued
 * transactions in nonce order, follow receipts (for every signed version of a
 * transaction, since a replaced one may still be the one mined), settle what
 * was mined, and replace what is stuck with higher fees. An unreachable RPC
 * only pauses the loop: everything stays in the outbox and goes out when the
 * RPC answers again.
 *
 * On the embedded chain each pass's batch is mined into one block (see
 * sendAndMine). Here the loops (one per chain: when to run a pass, wake-ups, holds, stop); a pass
 * is tick.ts, what a mined transaction means settleReceipts.ts, fee replacement replaceStuck.ts.
 */
export function createRelayer({ store, chains, config, log, now = Date.now, holder = randomUUID() }: RelayerParameters): Relayer {
  const ctx: RelayerContext = { store, chains, config, log, now, holder }
  const loops = new Map<number, ChainLoop>()
  let stopped = true
  // The store's outbox notifications, while started: this process's commits, and on PostgreSQL every gateway's.
  let listening: Promise<(() => Promise<void>) | null> | null = null

  const schedule = (loop: ChainLoop, delayMs: number) => {
    if (stopped || loop.timer) return
    loop.timer = setTimeout(() => {
      loop.timer = null
      run(loop)
    }, delayMs)
    loop.timer.unref?.()
  }

  const run = (loop: ChainLoop) => {
    if (stopped || loop.held > 0) return
    if (loop.running) {
      loop.again = true
      return
    }
    loop.again = false
    loop.running = tick(ctx, loop)
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
        const loop: ChainLoop = {
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
