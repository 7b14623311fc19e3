import type { LeaseKey } from '../db/relayerLeases.js'
import type { Store } from '../db/store.js'
import type { Tx } from '../db/types.js'

export type SenderLease = {
  readonly key: LeaseKey
  /** The epoch held now, or null (another holder's lease runs, or this one was fenced out). */
  readonly epoch: number | null
  /** Takes or renews the lease (every poll tick); true while held. */
  acquire(): Promise<boolean>
  /**
   * Runs `write` in one store transaction that first checks this holder still holds the lease at
   * its epoch. Fenced out (someone took the lease since): nothing is written, the lease counts as
   * lost until `acquire` gets it again, and the result is `{ fenced: true }`. `write` gets the
   * transaction's handle, for its after-commit effects.
   */
  write<T>(write: (tx: Tx) => Promise<T>): Promise<{ fenced: true } | { fenced: false; value: T }>
  release(): Promise<void>
}

/** The relayer's lease on one (chain, sender): see docs/chain.md, "Several gateways". */
export function createSenderLease(store: Store, key: LeaseKey, leaseMs: number): SenderLease {
  let epoch: number | null = null
  return {
    key,
    get epoch() {
      return epoch
    },
    async acquire() {
      epoch = await store.relayerLeases.acquire(key, leaseMs)
      return epoch !== null
    },
    async write<T>(write: (tx: Tx) => Promise<T>) {
      const held = epoch
      const result = held === null ? null : await store.tx(async (tx) => (await tx.relayerLeases.holds(key, held) ? { value: await write(tx) } : null))
      if (result) return { fenced: false as const, value: result.value }
      epoch = null
      return { fenced: true as const }
    },
    async release() {
      if (epoch !== null) await store.relayerLeases.release(key)
      epoch = null
    },
  }
}
