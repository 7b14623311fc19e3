import type Database from 'better-sqlite3'
import { loadMigrations, type Migration } from '../migrations.js'

/**
 * Applies every migration newer than the database's `user_version`.
 *
 * The version is read again inside BEGIN IMMEDIATE so that two processes
 * starting on one data dir cannot both apply the same migration.
 *
 * @returns the versions applied by this call
 */
export function migrate(db: Database.Database, migrations: Migration[] = loadMigrations()): number[] {
  const applied: number[] = []
  const run = db.transaction(() => {
    const current = db.pragma('user_version', { simple: true }) as number
    for (const migration of migrations) {
      if (migration.version <= current) continue
      db.exec(migration.sql)
      db.pragma(`user_version = ${migration.version}`)
      applied.push(migration.version)
    }
  })
  run.immediate()
  return applied
}
