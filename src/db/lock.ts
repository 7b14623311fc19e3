/**
 * A first-come, first-served lock for one process's transactions on one connection. SQLite has
 * one connection per process and an asynchronous transaction may wait between its statements, so
 * everything else (another transaction, a lone statement) waits for it here; another process waits
 * in BEGIN IMMEDIATE's busy timeout. A waiter gives up after `timeoutMs`, like a busy timeout, so a
 * transaction that awaits its own store (a deadlock) fails instead of hanging.
 *
 * @example
 * const lock = createLock(10_000)
 * await lock.acquire()
 * try { … } finally { lock.release() }
 */
export function createLock(timeoutMs: number) {
  let held = false
  const waiters: Array<{ grant(): void }> = []
  return {
    get held(): boolean {
      return held
    },
    acquire(): Promise<void> {
      if (!held) {
        held = true
        return Promise.resolve()
      }
      return new Promise<void>((resolve, reject) => {
        const waiter = {
          grant() {
            clearTimeout(timer)
            resolve()
          },
        }
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1)
          reject(new LockTimeoutError(timeoutMs))
        }, timeoutMs)
        waiters.push(waiter)
      })
    },
    release(): void {
      const next = waiters.shift()
      // Handed over without a gap, so a lone statement cannot slip in between two queued transactions.
      if (next) next.grant()
      else held = false
    },
  }
}

export type Lock = ReturnType<typeof createLock>

/** What a waiter gets after the timeout; `code` matches SQLite's busy error, which means the same. */
export class LockTimeoutError extends Error {
  override name = 'LockTimeoutError'
  readonly code = 'SQLITE_BUSY'
  constructor(timeoutMs: number) {
    super(`the store was busy for ${timeoutMs} ms (a transaction held it)`)
  }
}
