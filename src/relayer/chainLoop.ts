import type { Chain, Chains } from '../chain/chains.js'
import type { Config } from '../config.js'
import type { Store } from '../db/store.js'
import type { SenderLease } from './lease.js'
import type { RelayerLog } from './relayerLog.js'

export type ChainStatus = { chainId: number; reachable: boolean; lastError: string | null; open: number }

/** What every part of the relayer (its loop, a pass, settling, replacing) works with: one per createRelayer. */
export type RelayerContext = {
  store: Store
  chains: Chains
  config: Config
  log: RelayerLog
  /** Time for what is recorded (movable in tests); scheduling goes by the wall clock. */
  now: () => number
  /** This instance's id in relayer_leases and chain_txs.sent_by. */
  holder: string
}

/** One chain's loop: the state a pass reads and leaves for the next. */
export type ChainLoop = {
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

/** Transactions of one chain sent (and, on the embedded chain, mined into one block) per pass. */
export const BATCH = 64

/** A lease write refused: another gateway took the chain's lease. */
export function fenced({ log, holder }: RelayerContext, loop: ChainLoop) {
  log.warn({ chainId: loop.chain.chainId, holder }, 'relayer lease taken by another gateway: this write was refused, sending stops')
}
