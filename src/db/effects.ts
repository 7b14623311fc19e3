import type { StoreLog } from './types.js'

/** What `tx.afterCommit` registers: run once the transaction has committed. */
export type Effect = () => void

/**
 * Runs a committed transaction's effects in registration order. One that throws is logged and stops
 * nothing: the data is committed, a failed notification cannot undo it, nor stop the others.
 */
export function runEffects(effects: Effect[], log: StoreLog): void {
  for (const effect of effects) {
    try {
      effect()
    } catch (error) {
      log.error({ err: error }, 'an after-commit effect failed')
    }
  }
}
