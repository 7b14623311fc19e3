import type Database from 'better-sqlite3'
import { loadMigrations, type Migration } from '../migrations.js'

/**
 * Applies every migration newer than the database's `user_version`.
 *
 * The version is read again inside BEGIN IMMEDIATE so that two processes
 * starting on one data dir cannot both apply the same migration.
 *
 * Foreign keys are off while migrations run and checked before the commit: SQLite changes a column's
 * constraint by rebuilding its table (create, copy, drop, rename), and with foreign keys on, the drop
 * would delete through every table that references it (https://sqlite.org/lang_altertable.html, "Making
 * Other Kinds Of Table Schema Changes"). The pragma cannot change inside a transaction, so it is set
 * around it, and put back as it was.
 *
 * @throws when a migration fails, or leaves a reference without its row (nothing is applied then)
 */
export function migrate(db: Database.Database, migrations: Migration[] = loadMigrations()): number[] {
  const applied: number[] = []
  const foreignKeys = db.pragma('foreign_keys', { simple: true }) === 1
  const run = db.transaction(() => {
    const current = db.pragma('user_version', { simple: true }) as number
    for (const migration of migrations) {
      if (migration.version <= current) continue
      db.exec(migration.sql)
      db.pragma(`user_version = ${migration.version}`)
      applied.push(migration.version)
    }
    // A connection that does not enforce references (foreign_keys off, SQLite's default) is not held to them here either.
    const broken = foreignKeys ? (db.pragma('foreign_key_check') as Array<{ table: string; rowid: number; parent: string }>) : []
    if (broken.length > 0) {
      const first = broken[0]!
      throw new Error(`migration left ${broken.length} reference(s) without their row, e.g. ${first.table} rowid ${first.rowid} → ${first.parent}`)
    }
  })
  db.pragma('foreign_keys = OFF')
  try {
    run.immediate()
  } finally {
    db.pragma(`foreign_keys = ${foreignKeys ? 'ON' : 'OFF'}`)
  }
  return applied
}
