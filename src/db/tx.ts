import type { Repositories } from './repositories.js'

/**
 * A transaction's handle: the repositories, written inside this transaction, and `afterCommit`.
 * A function that must run inside its caller's transaction takes a `Tx`, never the `Store`, so
 * the type says so. Effects (a feed notification, a kiosk push, a relayer wake-up) registered
 * with `afterCommit` run once the outermost transaction has committed, in registration order;
 * a rolled-back transaction, or a rolled-back savepoint inside one, drops its own.
 *
 * @example
 * store.tx((tx) => {
 *   tx.stationEvents.append(stationId, 'tap', data, now)
 *   tx.afterCommit(() => feed.changed())
 * })
 */
export type Tx = Repositories & {
  /** Runs `effect` after the outermost COMMIT; never if this transaction (or its savepoint) rolls back. */
  afterCommit(effect: () => void): void
}

export type Effect = () => void

type EffectLog = { error(obj: object, msg?: string): void }

/**
 * The after-commit effects of the transactions open on one connection. better-sqlite3 is
 * synchronous, so the open transactions form a stack: each `scope` (a transaction, a savepoint,
 * a group-commit job) collects its effects in its own frame; a frame that commits hands its
 * effects to the one around it, the outermost runs them; a frame that throws is dropped.
 *
 * @example
 * const effects = createAfterCommit(log)
 * const value = effects.scope(() => immediate(() => fn({ ...repositories, afterCommit: effects.register })))
 */
export function createAfterCommit(log: EffectLog) {
  const frames: Effect[][] = []

  const run = (effects: Effect[]) => {
    for (const effect of effects) {
      try {
        effect()
      } catch (error) {
        // The data is committed: a failed notification cannot undo it, nor stop the others.
        log.error({ err: error }, 'an after-commit effect failed')
      }
    }
  }

  return {
    register(effect: Effect): void {
      const frame = frames.at(-1)
      if (!frame) throw new Error('afterCommit outside a transaction: the handle escaped its store.tx')
      frame.push(effect)
    },
    /** Runs `body` (a transaction, a savepoint, a group-commit job) in its own frame of effects. */
    scope<T>(body: () => T): T {
      const frame: Effect[] = []
      frames.push(frame)
      let value: T
      try {
        value = body()
      } finally {
        frames.pop()
      }
      const outer = frames.at(-1)
      if (outer) outer.push(...frame)
      else run(frame)
      return value
    },
  }
}

export type AfterCommit = ReturnType<typeof createAfterCommit>
