import path from 'node:path'
import Database from 'better-sqlite3'
import { ensurePrivateDir, ensurePrivateFile } from '../../paths.js'
import { migrate } from './migrate.js'

export type Db = Database.Database

/** The SQLite file of a data dir. */
export const databaseFile = (dataDir: string): string => path.join(dataDir, 'tapgate.sqlite')

export type OpenDatabaseParameters = {
  /** Directory holding `tapgate.sqlite`; created (mode 0700) when missing. */
  dataDir: string
  /** How long a writer waits for another process's lock before failing. */
  busyTimeoutMs?: number
}

/**
 * Opens (and migrates) the gateway database in `dataDir`.
 *
 * WAL lets the CLI and a running server share the file; `synchronous=NORMAL`
 * in WAL mode survives a process crash (not a power cut) at a fraction of FULL's cost.
 *
 * @example
 * const db = openDatabase({ dataDir: './data' })
 */
export function openDatabase({ dataDir, busyTimeoutMs = 10_000 }: OpenDatabaseParameters): Db {
  ensurePrivateDir(dataDir)
  const file = databaseFile(dataDir)
  ensurePrivateFile(file)
  const db = new Database(file, { timeout: busyTimeoutMs })
  enableWal(db, busyTimeoutMs)
  db.pragma('synchronous = NORMAL')
  db.pragma('foreign_keys = ON')
  migrate(db)
  return db
}

/**
 * Switching a brand-new file to WAL needs an exclusive lock, and SQLite answers
 * SQLITE_BUSY at once (the busy timeout does not apply) when another process is
 * opening the same new file. Retry within the busy timeout.
 */
function enableWal(db: Db, timeoutMs: number): void {
  const deadline = Date.now() + timeoutMs
  const pause = new Int32Array(new SharedArrayBuffer(4))
  for (;;) {
    try {
      db.pragma('journal_mode = WAL')
      return
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error
      Atomics.wait(pause, 0, 0, 10)
    }
  }
}
