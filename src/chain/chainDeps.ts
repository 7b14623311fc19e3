import type { Config } from '../config.js'
import type { Store } from '../db/store.js'
import { UnavailableError } from '../errors.js'
import type { Chains } from './chains.js'
import { ChainUnreachableError } from './rpc.js'

/**
 * What every on-chain endpoint needs. The relayer is not among them: the store tells it of every
 * transaction queued in the outbox once that commits (Store.listen, `tapgate_outbox`).
 */
export type ChainDeps = { store: Store; chains: Chains; config: Config; now: () => number }

/** Runs chain reads; an unreachable RPC becomes a clear 503 instead of a 500. */
export async function readChain<T>(chainId: number, read: () => Promise<T>): Promise<T> {
  try {
    return await read()
  } catch (error) {
    if (error instanceof ChainUnreachableError)
      throw new UnavailableError('chain_unavailable', `Chain ${chainId} cannot be reached right now; try again shortly`)
    throw error
  }
}
