import { setTimeout as sleep } from 'node:timers/promises'
import { isSerializationFailure, isStoreUnavailable } from '../storeErrors.js'
import { runEffects, type Effect } from '../effects.js'
import type { Isolation, Repositories, Store, StoreChannel, StoreLog, Tx, TxOptions } from '../types.js'
import type { PgSql, PgTransaction } from './connect.js'
import { mapMethods } from '../mapMethods.js'
import { announcing, createNotifications, type Notifications, registerOnce } from '../notifications.js'
import { createPgRepositories } from './repositories.js'
import { transactionClient } from './transactionClient.js'

export type PostgresStore = Store & {
  readonly backend: 'postgres'
  /** The pooled client of statements outside transactions (for migrations and `db status`). */
  readonly sql: PgSql
}

/**
 * Attempts of a transaction that PostgreSQL aborts for a serialization failure or a deadlock. Each
 * round of writers to one hot row (the relayer's nonce) lets one through: 12 chain writes at once
 * needed more than 6 (a 409 in 1 of 3 runs of test/routes/poapMint.test.ts), none failed with 12.
 */
const ATTEMPTS = 12
/** The longest pause between attempts, so the last ones of a long queue do not wait seconds. */
const MAX_PAUSE_MS = 320

const begin: Record<Isolation, string> = {
  serializable: 'isolation level serializable',
  'read committed': 'isolation level read committed',
}

export type PostgresStoreOptions = {
  log?: StoreLog & { warn?(obj: object, msg?: string): void }
  /**
   * A connection-class error (the database gone, restarting) replaces the clients with fresh ones, at
   * most once a second: postgres.js 3.4.9 can leave a connection that closed with a write pending
   * unable to send again (its write timer is cleared but not reset; see driverGuard.ts), and every
   * request routed to it would wait for the connect timeout.
   */
  reconnect?: boolean
  /** Runs after the store closed its clients. */
  onClose?: () => void
}

/**
 * The store on PostgreSQL, on clients from `connect`: one for statements, one for transactions
 * (transactionClient.ts says why), one for LISTEN. A transaction is SERIALIZABLE unless it asks for READ COMMITTED (the hot
 * paths whose rules are single-row conditional UPDATEs); one that PostgreSQL aborts with 40001 or
 * 40P01 runs again after a jittered pause, up to ATTEMPTS times, and its after-commit effects are
 * only those of the attempt that committed. Every single-use rule is a constraint or a conditional
 * UPDATE … RETURNING, so it holds with any number of gateways on the database.
 *
 * @example
 * const store = createPostgresStore(() => connectPostgres({ url }))
 * await store.tx(async (tx) => tx.refs.consume(id, Date.now()), { isolation: 'read committed' })
 */
export function createPostgresStore(connect: () => PgSql, { log = { error: (obj, msg) => console.error(msg, obj) }, reconnect = false, onClose }: PostgresStoreOptions = {}): PostgresStore {
  // LISTEN on a client of its own, never replaced: postgres.js re-listens on its own after a reconnect,
  // and the feed and the relayer poll as well, so a lost notification is late, never lost.
  let listener: PgSql | null = null
  const notifications = createNotifications(log)
  const run = (_key: string, effect: Effect) => runEffects([effect], log)
  let sql = connect()
  let transactions = transactionClient(connect())
  let replacedAt = 0

  const noteError = (error: unknown) => {
    if (!reconnect || !isStoreUnavailable(error) || Date.now() - replacedAt < 1000) return
    replacedAt = Date.now()
    const old = [sql, transactions.sql]
    sql = connect()
    transactions = transactionClient(connect())
    repositories = announcing(observed(createPgRepositories(sql), noteError), notifications, run)
    log.warn?.({ err: error }, 'the database connection was lost: fresh PostgreSQL clients take over')
    // Their queries in flight fail (503) rather than wait on a connection that may never send again.
    for (const client of old) void client.end({ timeout: 0 }).catch(() => undefined)
  }
  let repositories = announcing(observed(createPgRepositories(sql), noteError), notifications, run)

  const tx = async <T>(fn: (tx: Tx) => Promise<T>, { isolation = 'serializable' }: TxOptions = {}): Promise<T> => {
    for (let attempt = 1; ; attempt++) {
      const effects: Effect[] = []
      try {
        const value = await transactions.begin(begin[isolation], (transaction) => fn(handleOf(transaction, effects, notifications)))
        runEffects(effects, log)
        return value
      } catch (error) {
        noteError(error)
        if (!isSerializationFailure(error) || attempt === ATTEMPTS) throw error
        // Jittered and growing, so the racers that lost do not collide again in step.
        await sleep(Math.random() * Math.min(5 * 2 ** attempt, MAX_PAUSE_MS))
      }
    }
  }

  const store = {
    backend: 'postgres' as const,
    get sql() {
      return sql
    },
    tx,
    batch: <T>(fn: (tx: Tx) => Promise<T>) => tx(fn, { isolation: 'read committed' }),
    async ping() {
      try {
        await sql`SELECT 1`
      } catch (error) {
        noteError(error)
        throw error
      }
    },
    // This gateway's commits at once, from their after-commit effects; every gateway's (this one's
    // again, harmlessly: a feed hub reads what is new, a relayer's wake joins its running pass) by LISTEN.
    async listen(channel: StoreChannel, onNotify: (payload: string) => void) {
      const stop = notifications.listen(channel, onNotify)
      try {
        listener ??= connect()
        const { unlisten } = await listener.listen(channel, onNotify)
        return async () => {
          stop()
          await unlisten()
        }
      } catch (error) {
        stop()
        throw error
      }
    },
    async close() {
      await Promise.all([sql, transactions.sql, ...(listener ? [listener] : [])].map((client) => client.end({ timeout: 5 })))
      onClose?.()
    },
  }
  // The repositories follow the current client.
  for (const name of Object.keys(repositories) as (keyof Repositories)[]) {
    Object.defineProperty(store, name, { enumerable: true, get: () => repositories[name] })
  }
  return store as unknown as PostgresStore
}

/** The same repositories, each method reporting a failure to `onError` before it reaches the caller. */
function observed(repositories: Repositories, onError: (error: unknown) => void): Repositories {
  return mapMethods<Repositories>(repositories, (fn) => (...args) =>
    (fn(...args) as Promise<unknown>).catch((error: unknown) => {
      onError(error)
      throw error
    }),
  )
}

function handleOf(transaction: PgTransaction, effects: Effect[], notifications: Notifications): Tx {
  return {
    ...announcing(createPgRepositories(transaction), notifications, (key, effect) => registerOnce(effects, key, effect)),
    afterCommit(effect) {
      effects.push(effect)
    },
    async tx(fn) {
      const mine: Effect[] = []
      const value = await transaction.savepoint((savepoint) => fn(handleOf(savepoint as unknown as PgTransaction, mine, notifications)))
      effects.push(...mine)
      return value as Awaited<ReturnType<typeof fn>>
    },
  }
}
