import type { Db } from './openDatabase.js'

type Job = { fn: () => unknown; resolve: (value: unknown) => void; reject: (error: unknown) => void }

/**
 * Group commit: write jobs that arrive within one event-loop turn share a
 * single BEGIN IMMEDIATE … COMMIT. A commit costs far more than the small
 * writes of a ref query, so under load this multiplies throughput.
 *
 * Each job runs in its own savepoint, so a job that throws rolls back only its
 * own writes. Results are delivered only after the COMMIT, so no caller acts on
 * a write that could still be lost. Jobs must be synchronous and must make
 * their own decisions from what they read inside the job (e.g. a conditional
 * UPDATE), exactly as inside `store.tx`.
 *
 * @example
 * const batch = createGroupCommit(db)
 * const won = await batch(() => refs.consume(id, now))
 */
export function createGroupCommit(db: Db): <T>(fn: () => T) => Promise<T> {
  let queue: Job[] = []
  // Called inside the outer transaction, better-sqlite3 turns this into a SAVEPOINT.
  const savepoint = db.transaction((fn: () => unknown) => fn())
  const outer = db.transaction((jobs: Job[]) =>
    jobs.map((job) => {
      try {
        return { ok: true as const, value: savepoint(job.fn) }
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
      results = outer.immediate(jobs)
    } catch (error) {
      // BEGIN (busy timeout) or COMMIT failed: nothing of this batch was written.
      for (const job of jobs) job.reject(error)
      return
    }
    results.forEach((result, i) => (result.ok ? jobs[i]!.resolve(result.value) : jobs[i]!.reject(result.error)))
  }

  return <T>(fn: () => T) =>
    new Promise<T>((resolve, reject) => {
      queue.push({ fn, resolve: resolve as (value: unknown) => void, reject })
      if (queue.length === 1) setImmediate(flush)
    })
}
