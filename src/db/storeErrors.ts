/*
 * What a driver's error means to the API, whichever engine raised it. The error handler turns a
 * conflict that escaped a domain check into 409 and an unreachable database into 503, never 500.
 */

const code = (error: unknown): string => {
  const value = (error as { code?: unknown } | null)?.code
  return typeof value === 'string' ? value : ''
}

/** A unique or primary-key violation: another writer got there first. */
export function isUniqueViolation(error: unknown): boolean {
  const c = code(error)
  return c === '23505' || c === 'SQLITE_CONSTRAINT_UNIQUE' || c === 'SQLITE_CONSTRAINT_PRIMARYKEY'
}

/** PostgreSQL gave up on a transaction so that concurrent ones stay serializable (or broke a deadlock). */
export function isSerializationFailure(error: unknown): boolean {
  const c = code(error)
  return c === '40001' || c === '40P01'
}

// postgres.js's own codes for a lost or refused connection, the server's shutdown and start-up codes
// (57P01–57P03), connection exceptions (08xxx), and SQLite's busy timeout.
const unavailableCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOENT',
  'EPIPE',
  'ETIMEDOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  '57P01',
  '57P02',
  '57P03',
  'SQLITE_BUSY',
])

/** The database cannot be reached or is shutting down: retry later. */
export function isStoreUnavailable(error: unknown): boolean {
  const c = code(error)
  return unavailableCodes.has(c) || c.startsWith('08')
}
