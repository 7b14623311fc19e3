import type Database from 'better-sqlite3'
import type { StationEvent, StationEventData, StationEventKind } from '../wire/feedProtocol.js'
import type { Repositories as SqliteRepositories } from './repositories.js'

/*
 * The store's contract, whatever the engine. SQLite's repositories (src/db/*.ts) define each
 * method's arguments and result; here every method becomes asynchronous, and a write's driver
 * result (better-sqlite3's RunResult) becomes nothing: a caller that needs to know whether a row
 * changed gets a boolean from a method that says so. src/db/pg/ implements the same methods on
 * PostgreSQL.
 */

type AsyncResult<R> = R extends Database.RunResult ? void : Awaited<R>

type AsyncMethod<F> = F extends (...args: infer A) => infer R ? (...args: A) => Promise<AsyncResult<R>> : never

export type AsyncRepository<R> = { [K in keyof R]: AsyncMethod<R[K]> }

// A mapped type drops a method's own type parameters: the feed's two generic methods are spelled out.
type StationEventsRepository = Omit<AsyncRepository<SqliteRepositories['stationEvents']>, 'append' | 'lastOfKind'> & {
  append<K extends StationEventKind>(stationId: number, kind: K, data: StationEventData[K], now: number): Promise<number>
  lastOfKind<K extends StationEventKind>(stationId: number, kind: K): Promise<Extract<StationEvent, { kind: K }> | undefined>
}

/** Every repository, each method asynchronous: what a `Store` and a transaction's `Tx` carry. */
export type Repositories = { [K in Exclude<keyof SqliteRepositories, 'stationEvents'>]: AsyncRepository<SqliteRepositories[K]> } & {
  stationEvents: StationEventsRepository
}

/**
 * A transaction's handle: the repositories, written inside this transaction, and `afterCommit`.
 * A function that must run inside its caller's transaction takes a `Tx`, never the `Store`, so the
 * type says so. Effects (a feed notification, a kiosk push, a relayer wake-up) registered with
 * `afterCommit` run once the transaction has committed, in registration order; a rolled-back
 * transaction (or group-commit job) drops its own. A handle is valid only until its transaction ends.
 */
export type Tx = Repositories & {
  /** Runs `effect` after COMMIT; never if this transaction rolls back. */
  afterCommit(effect: () => void): void
  /**
   * A savepoint inside this transaction: `fn`'s writes and effects are dropped if it throws, and the
   * transaction goes on. What lets a function that opens its own transaction (`Transactional`) run
   * inside a caller's too. The isolation is the outer transaction's.
   */
  tx<T>(fn: (tx: Tx) => Promise<T>, options?: TxOptions): Promise<T>
}

/**
 * A store or a transaction: for a function that needs its writes atomic but not a transaction of its
 * own (inside a caller's transaction it is a savepoint).
 */
export type Transactional = Repositories & { tx<T>(fn: (tx: Tx) => Promise<T>, options?: TxOptions): Promise<T> }

/**
 * READ COMMITTED for the hot paths whose rules are single-row conditional UPDATEs (a tap, a first ref
 * query, an OTP use): under SERIALIZABLE concurrent racers would mostly retry. SQLite runs every
 * transaction one writer at a time (BEGIN IMMEDIATE), which is stronger than both.
 */
export type Isolation = 'serializable' | 'read committed'

export type TxOptions = { isolation?: Isolation }

export type Backend = 'sqlite' | 'postgres'

/**
 * The data layer: the repositories (each call its own statement, autocommitted) and `tx`, which runs
 * `fn` as one transaction. On PostgreSQL a transaction is SERIALIZABLE by default and re-run (bounded,
 * jittered) on a serialization failure or deadlock, so `fn` must have no effect but its writes through
 * the handle and what it registers with `afterCommit`.
 *
 * @example
 * const won = await store.tx((tx) => tx.refs.consume(id, Date.now()))
 */
export type Store = Repositories & {
  readonly backend: Backend
  tx<T>(fn: (tx: Tx) => Promise<T>, options?: TxOptions): Promise<T>
  /**
   * Like `tx` at READ COMMITTED; on SQLite, jobs of one event-loop turn share one commit (group
   * commit, createGroupCommit in src/db/sqlite/store.ts).
   */
  batch<T>(fn: (tx: Tx) => Promise<T>): Promise<T>
  /** A round trip to the database, for health checks. */
  ping(): Promise<void>
  /**
   * Follows what transactions commit on `channel` (StoreChannel): this process's, as after-commit
   * effects of the transaction that appended the station event or queued the chain transaction (one
   * rolled back, or a savepoint or group-commit job that rolled back, announces nothing), and on
   * PostgreSQL every other gateway's too (LISTEN; SQLite has no such thing: a second process on the
   * same file is found by polling). `onNotify` gets each notification's payload. So the feed hub and
   * the relayer subscribe once, and no caller announces its own writes.
   *
   * @returns stops listening
   */
  listen(channel: StoreChannel, onNotify: (payload: string) => void): Promise<() => Promise<void>>
  close(): Promise<void>
}

/**
 * What a transaction tells on commit: `tapgate_feed` (payload: the station id) when it appended a
 * station event, `tapgate_outbox` (payload: the chain id) when it queued a chain transaction
 * (src/db/notifications.ts; on PostgreSQL the same statements also pg_notify every gateway).
 */
export type StoreChannel = 'tapgate_feed' | 'tapgate_outbox'

/** Where a store reports an after-commit effect that threw. */
export type StoreLog = { error(obj: object, msg?: string): void; warn?(obj: object, msg?: string): void }
