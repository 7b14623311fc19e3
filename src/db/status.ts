import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { loadMigrations, type Migration } from './migrations.js'
import { databaseFile } from './sqlite/openDatabase.js'

export type TableRows = { name: string; rows: number }

/**
 * What `tapgate db status` reports: a plain value each backend fills (today SQLite; issue 18's
 * PostgreSQL fills the same fields from its URL, `schema_migrations` and its tables).
 */
export type DatabaseStatus = {
  backend: 'sqlite' | 'postgres'
  /** Where the data lives: the SQLite file's absolute path, or the PostgreSQL URL without its password. */
  location: string
  /** The database file's size on disk (a running gateway's -wal is not counted). */
  sizeBytes: number
  /** The last migration applied to this database. */
  schemaVersion: number
  /** The last migration this tapgate knows. */
  latestVersion: number
  /** Migrations this tapgate knows and the database lacks, applied when a command next opens it normally. */
  pendingMigrations: string[]
  /** Every table, sorted by name, SQLite's own (sqlite_sequence, sqlite_stat1) left out. */
  tables: TableRows[]
}

/** The data dir holds no tapgate database that can be read: the message names the path and why. */
export class DatabaseStatusError extends Error {
  override name = 'DatabaseStatusError'
}

// Tables every tapgate schema has had since migration 001: a file without them is someone else's.
const tapgateTables = ['teams', 'api_keys']

/**
 * Reads the status of the SQLite database in `dataDir` without changing anything: no migration,
 * no file or directory created, and `query_only` so no statement can write. A read-write
 * connection rather than SQLITE_OPEN_READONLY because only a read-write one removes the -wal and
 * -shm that opening a WAL database creates, when it closes as the last connection; a read-only
 * one leaves them behind. `immutable=1` would ignore a running gateway's WAL, so its recent rows.
 *
 * @example
 * sqliteStatus('./data') // { backend: 'sqlite', schemaVersion: 12, latestVersion: 12, tables: [{ name: 'api_keys', rows: 1 }, …], … }
 */
export function sqliteStatus(dataDir: string, migrations: Migration[] = loadMigrations()): DatabaseStatus {
  const dir = path.resolve(dataDir)
  const file = databaseFile(dir)
  if (!fs.existsSync(dir)) throw new DatabaseStatusError(`no data dir at ${dir}`)
  if (!fs.statSync(dir).isDirectory()) throw new DatabaseStatusError(`the data dir ${dir} is not a directory`)
  if (!fs.existsSync(file)) throw new DatabaseStatusError(`no database in the data dir: ${file} does not exist`)
  let db: Database.Database
  try {
    db = new Database(file, { fileMustExist: true, timeout: 5_000 })
  } catch (error) {
    throw new DatabaseStatusError(`cannot open ${file}: ${(error as Error).message}`, { cause: error })
  }
  try {
    db.pragma('query_only = ON')
    // One read transaction: the counts are one snapshot even while a gateway writes.
    const read = db.transaction(() => readStatus(db, file, migrations))
    return read()
  } catch (error) {
    if (error instanceof Database.SqliteError)
      throw new DatabaseStatusError(`cannot read ${file} as a tapgate database: ${error.message} (${error.code})`, { cause: error })
    throw error
  } finally {
    db.close()
  }
}

function readStatus(db: Database.Database, file: string, migrations: Migration[]): DatabaseStatus {
  const schemaVersion = db.pragma('user_version', { simple: true }) as number
  const names = db
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name`)
    .pluck()
    .all() as string[]
  const missing = tapgateTables.filter((name) => !names.includes(name))
  if (missing.length > 0)
    throw new DatabaseStatusError(
      `${file} is a SQLite database but not a tapgate one: no ${missing.join(' or ')} table (schema version ${schemaVersion}, ${names.length} tables)`,
    )
  return {
    backend: 'sqlite',
    location: file,
    sizeBytes: fs.statSync(file).size,
    schemaVersion,
    latestVersion: migrations.at(-1)?.version ?? 0,
    pendingMigrations: migrations.filter((m) => m.version > schemaVersion).map((m) => m.name),
    tables: names.map((name) => ({ name, rows: db.prepare(`SELECT count(*) FROM ${quoteIdentifier(name)}`).pluck().get() as number })),
  }
}

/** A name as an SQL identifier: in double quotes, its own double quotes doubled. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}
