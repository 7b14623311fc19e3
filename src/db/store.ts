import { createGroupCommit } from './groupCommit.js'
import { openDatabase, type Db } from './openDatabase.js'
import { createRepositories } from './repositories.js'
import { createAfterCommit, type Tx } from './tx.js'
import { startWalCheckpointer, type WalCheckpointer } from './walCheckpointer.js'

export type { Repositories } from './repositories.js'

/** Where a store reports an after-commit effect that threw. */
export type StoreLog = { error(obj: object, msg?: string): void }

/**
 * The data layer: every repository over one connection, plus `tx`, which runs
 * a read-modify-write under BEGIN IMMEDIATE so concurrent writers (another
 * request, the CLI, a second server process) queue instead of interleaving.
 * `fn` gets the transaction's handle (`Tx`): what must happen only once the
 * write is committed (a feed notification, a relayer wake-up) goes to
 * `tx.afterCommit`. A `tx` inside a `tx` is a savepoint.
 *
 * @example
 * const store = openStore({ dataDir: './data' })
 * store.tx((tx) => tx.refs.consume(id, Date.now()))
 */
export function createStore(db: Db, checkpointer: WalCheckpointer | null = null, log: StoreLog = { error: (obj, msg) => console.error(msg, obj) }) {
  const ping = db.prepare('SELECT 1')
  // Built once: db.transaction() wraps a function in four fresh closures on every call,
  // which cost ~6 µs per transaction (half of an empty BEGIN IMMEDIATE/COMMIT).
  const immediate = db.transaction((fn: () => unknown) => fn()).immediate
  const repositories = createRepositories(db)
  const effects = createAfterCommit(log)
  const handle: Tx = { ...repositories, afterCommit: effects.register }
  const batch = createGroupCommit(db, handle, effects)
  return {
    db,
    ...repositories,
    tx<T>(fn: (tx: Tx) => T): T {
      return effects.scope(() => immediate(() => fn(handle)) as T)
    },
    /** Like `tx`, but shares one commit with the other jobs of this event-loop turn (see groupCommit.ts). */
    batch<T>(fn: (tx: Tx) => T): Promise<T> {
      return batch(fn)
    },
    /** A round trip to the database, for health checks. */
    ping(): void {
      ping.get()
    },
    /** The worker that checkpoints the WAL, when this store has one (the server's). */
    checkpointer,
    close() {
      checkpointer?.stop()
      if (db.open) db.close()
    },
  }
}

export type Store = ReturnType<typeof createStore>

export type OpenStoreParameters = {
  dataDir: string
  busyTimeoutMs?: number
  /** The long-running server: checkpoint the WAL from a worker thread, not inside commits (see walCheckpointer.ts). */
  backgroundCheckpoints?: boolean
  log?: { warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void }
}

export function openStore({ backgroundCheckpoints = false, log, ...params }: OpenStoreParameters): Store {
  const db = openDatabase(params)
  const checkpointer = backgroundCheckpoints ? startWalCheckpointer(db, { log }) : null
  try {
    return createStore(db, checkpointer, log)
  } catch (error) {
    // A statement that does not prepare (a data dir from a newer tapgate): the worker would keep the process alive.
    checkpointer?.stop()
    db.close()
    throw error
  }
}
