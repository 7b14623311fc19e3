import { setTimeout as sleep } from 'node:timers/promises'
import { isSerializationFailure } from '../storeErrors.js'
import { runEffects, type Effect } from '../effects.js'
import type { Isolation, Store, StoreLog, Tx, TxOptions } from '../types.js'
import type { PgSql, PgTransaction } from './connect.js'
import { createPgRepositories } from './repositories.js'


export type PostgresStore = Store & {
  readonly backend: 'postgres'
  /** The pooled client (for migrations, LISTEN/NOTIFY and `db status`). */
  readonly sql: PgSql
}

/** Attempts of a transaction that PostgreSQL aborts for a serialization failure or a deadlock. */
const ATTEMPTS = 6

const begin: Record<Isolation, string> = {
  serializable: 'isolation level serializable',
  'read committed': 'isolation level read committed',
}

/**
 * The store on PostgreSQL. A transaction is SERIALIZABLE unless it asks for READ COMMITTED (the hot
 * paths whose rules are single-row conditional UPDATEs); one that PostgreSQL aborts with 40001 or
 * 40P01 runs again after a jittered pause, up to ATTEMPTS times, and its after-commit effects are
 * only those of the attempt that committed. Every single-use rule is a constraint or a conditional
 * UPDATE … RETURNING, so it holds with any number of gateways on the database.
 *
 * @example
 * const store = createPostgresStore(connectPostgres({ url }))
 * await store.tx(async (tx) => tx.refs.consume(id, Date.now()), { isolation: 'read committed' })
 */
export function createPostgresStore(sql: PgSql, { log = { error: (obj, msg) => console.error(msg, obj) } }: { log?: StoreLog } = {}): PostgresStore {
  const tx = async <T>(fn: (tx: Tx) => Promise<T>, { isolation = 'serializable' }: TxOptions = {}): Promise<T> => {
    for (let attempt = 1; ; attempt++) {
      const effects: Effect[] = []
      try {
        const value = (await sql.begin(begin[isolation], (transaction) => fn(handleOf(transaction as unknown as PgTransaction, effects)))) as T
        runEffects(effects, log)
        return value
      } catch (error) {
        if (!isSerializationFailure(error) || attempt === ATTEMPTS) throw error
        // Jittered and growing, so the racers that lost do not collide again in step.
        await sleep(Math.random() * 5 * 2 ** attempt)
      }
    }
  }

  return {
    backend: 'postgres',
    sql,
    ...createPgRepositories(sql),
    tx,
    batch: (fn) => tx(fn, { isolation: 'read committed' }),
    async ping() {
      await sql`SELECT 1`
    },
    async listen(channel, onNotify) {
      const { unlisten } = await sql.listen(channel, onNotify)
      return unlisten
    },
    async close() {
      await sql.end({ timeout: 5 })
    },
  }
}

function handleOf(transaction: PgTransaction, effects: Effect[]): Tx {
  return {
    ...createPgRepositories(transaction),
    afterCommit(effect) {
      effects.push(effect)
    },
    async tx(fn) {
      const mine: Effect[] = []
      const value = await transaction.savepoint((savepoint) => fn(handleOf(savepoint as unknown as PgTransaction, mine)))
      effects.push(...mine)
      return value as Awaited<ReturnType<typeof fn>>
    },
  }
}
