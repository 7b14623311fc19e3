import { createRepositories } from '../repositories.js'
import { runEffects, type Effect } from '../effects.js'
import { createLock } from '../lock.js'
import { mapMethods } from '../mapMethods.js'
import { announcing, createNotifications, registerOnce } from '../notifications.js'
import type { Repositories, Store, StoreChannel, StoreLog, Tx, TxOptions } from '../types.js'
import { openDatabase, type Db } from './openDatabase.js'
import { startWalCheckpointer, type WalCheckpointer } from './walCheckpointer.js'


/** The SQLite store: the connection and its WAL checkpointer stay reachable for SQLite-only tools and tests. */
export type SqliteStore = Store & {
  readonly backend: 'sqlite'
  readonly db: Db
  /** The worker that checkpoints the WAL, when this store has one (the server's). */
  readonly checkpointer: WalCheckpointer | null
}

/**
 * The asynchronous store over one better-sqlite3 connection. A transaction is BEGIN IMMEDIATE …
 * COMMIT, one at a time in this process (a lock: between two statements of an asynchronous
 * transaction, anything else on the connection would join it) and across processes (SQLite's write
 * lock). A lone repository call outside a transaction waits for the lock only while a transaction
 * holds it; otherwise it runs at once. Statements are synchronous, so a transaction that awaits only
 * its handle holds the lock for microtasks, not event-loop turns.
 *
 * @example
 * const store = createSqliteStore(openDatabase({ dataDir }))
 * await store.tx(async (tx) => tx.refs.consume(id, Date.now()))
 */
export function createSqliteStore(db: Db, options: { checkpointer?: WalCheckpointer | null; log?: StoreLog; busyTimeoutMs?: number } = {}): SqliteStore {
  const { checkpointer = null, log = { error: (obj, msg) => console.error(msg, obj) }, busyTimeoutMs = 10_000 } = options
  const lock = createLock(busyTimeoutMs)
  const statements = {
    ping: db.prepare('SELECT 1'),
    begin: db.prepare('BEGIN IMMEDIATE'),
    commit: db.prepare('COMMIT'),
    rollback: db.prepare('ROLLBACK'),
    savepoint: db.prepare('SAVEPOINT job'),
    releaseSavepoint: db.prepare('RELEASE job'),
    rollbackToSavepoint: db.prepare('ROLLBACK TO job'),
  }
  const sync = createRepositories(db)
  const notifications = createNotifications(log)
  // The effects of the transaction (or group-commit job, or savepoint) running now: the lock means there is one.
  let effects: Effect[] | null = null
  let depth = 0
  const handle: Tx = {
    ...announcing(
      mapMethods<Repositories>(sync, (fn) => (...args) => settle(() => fn(...args))),
      notifications,
      (key, effect) => {
        if (!effects) throw new Error('a write outside a transaction on its handle: the handle escaped its store.tx')
        registerOnce(effects, key, effect)
      },
    ),
    afterCommit(effect) {
      if (!effects) throw new Error('afterCommit outside a transaction: the handle escaped its store.tx')
      effects.push(effect)
    },
    async tx(fn) {
      const outer = effects
      if (!outer) throw new Error('tx on a transaction handle outside its transaction: the handle escaped its store.tx')
      const name = `nested${++depth}`
      const mine: Effect[] = []
      db.exec(`SAVEPOINT ${name}`)
      effects = mine
      try {
        const value = await fn(handle)
        db.exec(`RELEASE ${name}`)
        outer.push(...mine)
        return value
      } catch (error) {
        db.exec(`ROLLBACK TO ${name}`)
        db.exec(`RELEASE ${name}`)
        throw error
      } finally {
        effects = outer
        depth--
      }
    },
  }
  const rollback = () => {
    if (db.inTransaction) statements.rollback.run()
  }

  const tx = async <T>(fn: (tx: Tx) => Promise<T>, _options?: TxOptions): Promise<T> => {
    await lock.acquire()
    const mine: Effect[] = []
    let value: T
    try {
      statements.begin.run()
      effects = mine
      try {
        value = await fn(handle)
        statements.commit.run()
      } catch (error) {
        rollback()
        throw error
      } finally {
        effects = null
      }
    } finally {
      lock.release()
    }
    runEffects(mine, log)
    return value
  }

  const batch = createGroupCommit(async (jobs) => {
    await lock.acquire()
    const committed: Effect[] = []
    const results: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = []
    try {
      statements.begin.run()
      try {
        for (const job of jobs) {
          // Each job in its own savepoint, with its own effects: one that throws loses only its own.
          const mine: Effect[] = []
          effects = mine
          statements.savepoint.run()
          try {
            const value = await job(handle)
            statements.releaseSavepoint.run()
            committed.push(...mine)
            results.push({ ok: true, value })
          } catch (error) {
            statements.rollbackToSavepoint.run()
            statements.releaseSavepoint.run()
            results.push({ ok: false, error })
          }
        }
        effects = null
        statements.commit.run()
      } catch (error) {
        effects = null
        rollback()
        throw error
      }
    } finally {
      lock.release()
    }
    runEffects(committed, log)
    return results
  })

  const outside = <T>(run: () => T): Promise<T> => (lock.held ? queued(run) : settle(run))
  const queued = async <T>(run: () => T): Promise<T> => {
    await lock.acquire()
    try {
      return plain(run())
    } finally {
      lock.release()
    }
  }

  return {
    backend: 'sqlite',
    db,
    checkpointer,
    ...announcing(
      mapMethods<Repositories>(sync, (fn) => (...args) => outside(() => fn(...args))),
      notifications,
      (_key, effect) => runEffects([effect], log),
    ),
    tx,
    batch,
    // This process's commits only: another process on the same file is found by polling.
    async listen(channel: StoreChannel, onNotify: (payload: string) => void) {
      const stop = notifications.listen(channel, onNotify)
      return async () => stop()
    },
    async ping() {
      await outside(() => statements.ping.get())
    },
    async close() {
      checkpointer?.stop()
      if (db.open) db.close()
    },
  }
}

export type OpenSqliteStoreParameters = {
  dataDir: string
  busyTimeoutMs?: number
  /** The long-running server: checkpoint the WAL from a worker thread, not inside commits (see walCheckpointer.ts). */
  backgroundCheckpoints?: boolean
  log?: { warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void }
}

/** Opens (and migrates) the SQLite database of a data dir as a store. */
export function openSqliteStore({ backgroundCheckpoints = false, log, busyTimeoutMs, dataDir }: OpenSqliteStoreParameters): SqliteStore {
  const db = openDatabase({ dataDir, busyTimeoutMs })
  const checkpointer = backgroundCheckpoints ? startWalCheckpointer(db, { log }) : null
  try {
    return createSqliteStore(db, { checkpointer, log, busyTimeoutMs })
  } catch (error) {
    // A statement that does not prepare (a data dir from a newer tapgate): the worker would keep the process alive.
    checkpointer?.stop()
    db.close()
    throw error
  }
}

type Job = (tx: Tx) => Promise<unknown>
type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown }

/**
 * Group commit: jobs that arrive within one event-loop turn share one BEGIN IMMEDIATE … COMMIT (a
 * commit costs far more than a ref query's small writes, so under load this multiplies throughput).
 * Results are delivered only after the COMMIT, so no caller acts on a write that could still be lost;
 * if BEGIN or COMMIT fails, every job of the batch gets the error.
 */
function createGroupCommit(runBatch: (jobs: Job[]) => Promise<Outcome[]>) {
  let queue: Array<{ job: Job; resolve(value: unknown): void; reject(error: unknown): void }> = []
  const flush = async () => {
    const waiting = queue
    queue = []
    let outcomes: Outcome[]
    try {
      outcomes = await runBatch(waiting.map((entry) => entry.job))
    } catch (error) {
      for (const entry of waiting) entry.reject(error)
      return
    }
    outcomes.forEach((outcome, i) => (outcome.ok ? waiting[i]!.resolve(outcome.value) : waiting[i]!.reject(outcome.error)))
  }
  return <T>(job: (tx: Tx) => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      queue.push({ job, resolve: resolve as (value: unknown) => void, reject })
      if (queue.length === 1) setImmediate(() => void flush())
    })
}

/** A driver result (better-sqlite3's RunResult) is not part of the store's contract: see types.ts. */
function plain<T>(value: T): T {
  if (value !== null && typeof value === 'object' && 'changes' in value && 'lastInsertRowid' in value) return undefined as T
  return value
}

function settle<T>(run: () => T): Promise<T> {
  try {
    return Promise.resolve(plain(run()))
  } catch (error) {
    return Promise.reject(error)
  }
}
