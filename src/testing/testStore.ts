import fs from 'node:fs'
import { databaseFile } from '../db/sqlite/openDatabase.js'
import { openStore, type SqliteStore } from '../db/store.js'

/** The first test gateway's database as its migrations left it, before any row of its own. */
let migrated: Buffer | undefined

/**
 * The store of a new test gateway. The first of a process runs every migration (~20 ms); the others
 * start from a copy of its database just after them, which the migrations then find up to date.
 */
export function openTestStore(dataDir: string): SqliteStore {
  if (migrated) fs.writeFileSync(databaseFile(dataDir), migrated, { mode: 0o600 })
  const store = openStore({ dataDir })
  migrated ??= store.db.serialize()
  return store
}
