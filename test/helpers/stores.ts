/*
 * Contract tests of the store: one body, run on SQLite (a fresh data dir per test) and on PostgreSQL
 * (this file's database from the run's server, emptied before each test). Both must give the same
 * answers; a test that only one engine passes is a bug in the other's repository.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe } from 'vitest'
import { connectPostgres } from '../../src/db/pg/connect.js'
import { createPostgresStore, type PostgresStore } from '../../src/db/pg/store.js'
import { openStore, type Backend, type Store } from '../../src/db/store.js'
import { emptyTables, HAS_POSTGRES, testDatabase } from './postgres.js'

export type StoreContext = {
  /** The store of the running test. */
  store(): Store
  backend: Backend
}

/** Runs `body` once per backend, as `describe(name + ' (sqlite)')` and `describe(name + ' (postgres)')`. */
export function describeStores(name: string, body: (context: StoreContext) => void): void {
  describe(`${name} (sqlite)`, () => {
    let dir: string | undefined
    let store: Store | undefined
    beforeEach(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tapgate-store-'))
      store = openStore({ dataDir: dir })
    })
    afterEach(async () => {
      await store?.close()
      if (dir) fs.rmSync(dir, { recursive: true, force: true })
    })
    body({ store: () => store!, backend: 'sqlite' })
  })

  describe.skipIf(!HAS_POSTGRES)(`${name} (postgres)`, () => {
    const database = testDatabase()
    let store: PostgresStore | undefined
    beforeAll(() => {
      store = createPostgresStore(() => connectPostgres({ url: database.url(), max: 4 }))
    })
    beforeEach(() => emptyTables(store!.sql))
    afterAll(async () => {
      await store?.close()
    })
    body({ store: () => store!, backend: 'postgres' })
  })
}
