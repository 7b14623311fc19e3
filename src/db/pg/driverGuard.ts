/**
 * postgres.js 3.4.9 (the newest release) can throw from a setImmediate after a connection closed:
 * `nextWrite` writes a buffered chunk to a socket that `closed()` has already set to null
 * (porsager/postgres#1154, #1066, #1208; the one-line guard of #1168/#1176 is not released). Thrown
 * from a timer, it would end the gateway on a database restart. By then `closed()` has rejected the
 * connection's queries with CONNECTION_CLOSED (which the API answers 503), so the write is moot: this
 * recognises exactly that error and lets the process live, and one more of the same kind
 * (isDestroyedOnEnd). Every other uncaught exception still ends the process, printed, with exit code 1,
 * as Node would.
 *
 * @returns removes the guard
 */
export function guardPostgresNullSocketWrite(log: { warn(obj: object, msg?: string): void }): () => void {
  const handler = (error: Error) => {
    if (isNullSocketWrite(error)) {
      log.warn({ err: error }, 'postgres.js wrote to a connection that had closed (porsager/postgres#1154): ignored, its queries were already refused')
      return
    }
    if (isDestroyedOnEnd(error)) {
      log.warn({ err: error }, 'postgres.js rejected a query of a client the store had ended after a lost connection: ignored')
      return
    }
    process.removeListener('uncaughtException', handler)
    console.error(error)
    process.exit(1)
  }
  process.on('uncaughtException', handler)
  return () => process.removeListener('uncaughtException', handler)
}

export function isNullSocketWrite(error: unknown): boolean {
  if (!(error instanceof TypeError)) return false
  const stack = error.stack ?? ''
  return /reading 'write'|evaluating 'socket\.write'/.test(error.message) && /\bnextWrite\b/.test(stack) && /postgres[\\/](src|cjs[\\/]src)[\\/]connection\.js/.test(stack)
}

/**
 * The store ends a client whose connection was lost (`end({ timeout: 0 })`, src/db/pg/store.ts) and takes a
 * fresh one. postgres.js's `destroy` then terminates the old connections, rejecting what was in flight on
 * them with CONNECTION_DESTROYED; a request's own query has its handler (503), but a promise of the
 * driver's own (a connection's start-up) may have none, and Node would end the gateway for it (seen in
 * test/postgres/outage, 1 run in 20). Recognised by its code and a stack through postgres.js's
 * `terminate` called from `destroy`.
 */
export function isDestroyedOnEnd(error: unknown): boolean {
  if (!(error instanceof Error) || (error as { code?: unknown }).code !== 'CONNECTION_DESTROYED') return false
  const stack = error.stack ?? ''
  const driver = /postgres[\\/](src|cjs[\\/]src)[\\/]/
  return /\bterminate\b/.test(stack) && /\bdestroy\b/.test(stack) && driver.test(stack)
}
