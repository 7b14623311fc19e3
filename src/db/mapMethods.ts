type Method = (...args: unknown[]) => unknown

/**
 * The same repositories with every method replaced by `wrap(method)`: how a store puts its own rule
 * around each statement (SQLite: the lock and a promise; PostgreSQL: noticing a lost connection).
 * Built once per store or client, not per call.
 */
export function mapMethods<T>(repositories: object, wrap: (method: Method) => Method): T {
  const mapped: Record<string, Record<string, Method>> = {}
  for (const [name, repository] of Object.entries(repositories)) {
    const methods: Record<string, Method> = {}
    for (const [method, fn] of Object.entries(repository as Record<string, Method>)) methods[method] = wrap(fn)
    mapped[name] = methods
  }
  return mapped as T
}
