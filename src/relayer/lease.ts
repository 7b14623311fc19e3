import type { LeaseKey } from '../db/relayerLeases.js'
import type { Store } from '../db/store.js'
import type { Tx } from '../db/tx.js'

export type SenderLease = {
  readonly key: LeaseKey
  /** The epoch held now, or null (another holder's lease runs, or this one was fenced out). */
  readonly epoch: number | null
  /** Takes or renews the lease (every poll tick); true while held. */
  acquire(): boolean
  /**
   * Runs `write` in one store transaction that first checks this holder still holds the lease at
   * its epoch. Fenced out (someone took the lease since): nothing is written, the lease counts as
   * lost until `acquire` gets it again, and the result is `{ fenced: true }`. `write` gets the
   * transaction's handle, for its after-commit effects.
   */
  write<T>(write: (tx: Tx) => T): { fenced: true } | { fenced: false; value: T }
  release(): void
}

/** The relayer's lease on one (chain, sender): see docs/chain.md, "Several gateways". */
export function createSenderLease(store: Store, key: LeaseKey, leaseMs: number): SenderLease {
  let epoch: number | null = null
  return {
    key,
    get epoch() {
      return epoch
    },
    acquire() {
      epoch = store.relayerLeases.acquire(key, leaseMs)
      return epoch !== null
    },
    write<T>(write: (tx: Tx) => T) {
      const held = epoch
      const result = held === null ? null : store.tx((tx) => (store.relayerLeases.holds(key, held) ? { value: write(tx) } : null))
      if (result) return { fenced: false as const, value: result.value }
      epoch = null
      return { fenced: true as const }
    },
    release() {
      if (epoch !== null) store.relayerLeases.release(key)
      epoch = null
    },
  }
}
