import { ensurePrivateDir } from '../paths.js'
import { connectPostgres } from './pg/connect.js'
import { guardPostgresNullSocketWrite } from './pg/driverGuard.js'
import { migratePostgres } from './pg/migrate.js'
import { createPostgresStore, type PostgresStore } from './pg/store.js'
import { openSqliteStore, type OpenSqliteStoreParameters, type SqliteStore } from './sqlite/store.js'
import type { Store } from './types.js'

export type { Backend, Isolation, Repositories, Store, StoreLog, Transactional, Tx, TxOptions } from './types.js'
export type { SqliteStore } from './sqlite/store.js'
export type { PostgresStore } from './pg/store.js'

/**
 * Opens (and migrates) the SQLite store of a data dir: the default, and what tests of one gateway use.
 *
 * @example
 * const store = openStore({ dataDir: './data' })
 * await store.tx(async (tx) => tx.refs.consume(id, Date.now()))
 */
export function openStore(params: OpenSqliteStoreParameters): SqliteStore {
  return openSqliteStore(params)
}

export type OpenGatewayStoreParameters = OpenSqliteStoreParameters & {
  /** `postgres://…`: the shared PostgreSQL database; without it, SQLite in the data dir. */
  databaseUrl?: string | null
}

/** The store a gateway or a CLI command runs on: PostgreSQL when a database URL is configured. */
export async function openGatewayStore({ databaseUrl, ...params }: OpenGatewayStoreParameters): Promise<Store> {
  if (!databaseUrl) return openSqliteStore(params)
  // The data dir still holds what each gateway keeps to itself (the media cache, the secret file).
  ensurePrivateDir(params.dataDir)
  return openPostgresStore(databaseUrl, params.log)
}

/** Connects to PostgreSQL and applies the migrations (once, however many gateways start together). */
export async function openPostgresStore(url: string, log?: OpenSqliteStoreParameters['log']): Promise<PostgresStore> {
  const unguard = guardPostgresNullSocketWrite(log ?? { warn: (obj, msg) => console.warn(msg, obj) })
  const sql = connectPostgres({ url, max: 1 })
  try {
    await migratePostgres(sql)
  } catch (error) {
    unguard()
    throw error
  } finally {
    await sql.end({ timeout: 1 })
  }
  return createPostgresStore(() => connectPostgres({ url }), { log, reconnect: true, onClose: unguard })
}
