import type { Db } from './openDatabase.js'
import type { AfterCommit, Tx } from './tx.js'

type Job = { fn: (tx: Tx) => unknown; resolve: (value: unknown) => void; reject: (error: unknown) => void }

/**
 * Group commit: write jobs that arrive within one event-loop turn share a
 * single BEGIN IMMEDIATE … COMMIT. A commit costs far more than the small
 * writes of a ref query, so under load this multiplies throughput.
 *
 * Each job runs in its own savepoint, so a job that throws rolls back only its
 * own writes. Results are delivered only after the COMMIT, so no caller acts on
 * a write that could still be lost. Jobs must be synchronous and must make
 * their own decisions from what they read inside the job (e.g. a conditional
 * UPDATE), exactly as inside `store.tx`. A job's after-commit effects run after
 * the batch's COMMIT; a job that throws drops its own, the others' still run.
 *
 * @example
 * const batch = createGroupCommit(db, handle, effects)
 * const won = await batch((tx) => tx.refs.consume(id, now))
 */
export function createGroupCommit(db: Db, handle: Tx, effects: AfterCommit): <T>(fn: (tx: Tx) => T) => Promise<T> {
  let queue: Job[] = []
  // Called inside the outer transaction, better-sqlite3 turns this into a SAVEPOINT.
  const savepoint = db.transaction((fn: (tx: Tx) => unknown) => fn(handle))
  const outer = db.transaction((jobs: Job[]) =>
    jobs.map((job) => {
      try {
        // Its own frame of effects: dropped with its savepoint if it throws.
        return { ok: true as const, value: effects.scope(() => savepoint(job.fn)) }
      } catch (error) {
        return { ok: false as const, error }
      }
    }),
  )

  const flush = () => {
    const jobs = queue
    queue = []
    let results: ReturnType<typeof outer>
    try {
      results = effects.scope(() => outer.immediate(jobs))
    } catch (error) {
      // BEGIN (busy timeout) or COMMIT failed: nothing of this batch was written.
      for (const job of jobs) job.reject(error)
      return
    }
    results.forEach((result, i) => (result.ok ? jobs[i]!.resolve(result.value) : jobs[i]!.reject(result.error)))
  }

  return <T>(fn: (tx: Tx) => T) =>
    new Promise<T>((resolve, reject) => {
      queue.push({ fn, resolve: resolve as (value: unknown) => void, reject })
      if (queue.length === 1) setImmediate(flush)
    })
}
