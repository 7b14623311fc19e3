import postgres from 'postgres'

/**
 * The client's types: PostgreSQL's bigint (our ids, epoch-millisecond times, counters) parsed to a
 * number, which holds every value we store exactly (below 2^53); the driver's default is a string.
 */
const types = {
  bigint: { to: 20, from: [20], serialize: (value: number) => String(value), parse: (value: string) => Number(value) },
}

export type PgSql = postgres.Sql<{ bigint: number }>
export type PgTransaction = postgres.TransactionSql<{ bigint: number }>
/** A client or a transaction: what a repository runs its statements on. */
export type PgQuery = PgSql | PgTransaction

export type PgConnectOptions = {
  /** `postgres://user:password@host:port/db`; a Unix socket directory goes in `?host=/run/postgresql` (libpq's form). */
  url: string
  /** Connections in the pool (default 10). */
  max?: number
  /** Fails a connection attempt after this many seconds (default 5: a local or managed server answers in well under one). */
  connectTimeoutSeconds?: number
  /** Called for every statement sent (the benchmark counts round trips with it). */
  onQuery?: (query: string) => void
}

/**
 * A pooled postgres.js client. Column names come back camelCased (`chip_uid` → `chipUid`), so the
 * PostgreSQL statements select plain column names where SQLite's alias them. postgres.js rather than
 * pg: it pipelines a transaction's statements without waiting for each answer, prepares statements
 * per connection by itself, and has no dependencies.
 */
export function connectPostgres({ url, max = 10, connectTimeoutSeconds = 5, onQuery }: PgConnectOptions): PgSql {
  const options = {
    ...(onQuery ? { debug: (_connection: number, query: string) => onQuery(query) } : {}),
    max,
    connect_timeout: connectTimeoutSeconds,
    // Seconds before a lost connection is tried again. The driver's default grows to 20 s, shared by the
    // pool, and a request waits that long for a connection; capped at 1 s, a request during an outage
    // is refused (503) within about a second and the gateway serves again a second after the database.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
    types,
    transform: { column: { from: postgres.toCamel }, undefined: null },
    // Notices (e.g. IF NOT EXISTS on an existing table) are not errors; the server logs them itself.
    onnotice: () => {},
  }
  const socket = socketUrl(url)
  return (socket ? postgres({ ...socket, ...options }) : postgres(url, options)) as unknown as PgSql
}

/**
 * postgres.js reads a host from the URL's authority only, and refuses an empty one; libpq's
 * `?host=/dir` (how a local server's Unix socket is named, e.g. `postgres://tapgate@/tapgate?host=
 * /run/postgresql`) is turned into options here.
 */
export function socketUrl(url: string): { host: string; port: number; user?: string; password?: string; database?: string } | null {
  const withHost = url.replace(/^(postgres(?:ql)?:\/\/(?:[^@/]*@)?)(?=[/:]|$)/, '$1localhost')
  let parsed: URL
  try {
    parsed = new URL(withHost)
  } catch {
    return null
  }
  const host = parsed.searchParams.get('host')
  if (!host?.startsWith('/')) return null
  const value = (s: string) => (s ? decodeURIComponent(s) : undefined)
  return {
    host,
    port: Number(parsed.port || parsed.searchParams.get('port') || 5432),
    user: value(parsed.username),
    password: value(parsed.password),
    database: value(parsed.pathname.slice(1)),
  }
}
