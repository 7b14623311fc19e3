import fs from 'node:fs'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { databaseFile, openDatabase, type Db } from '../../src/db/sqlite/openDatabase.js'
import { createSqliteStore, type SqliteStore } from '../../src/db/sqlite/store.js'
import { makeTempDir } from '../helpers/gateway.js'

// Group commit (store.batch on SQLite): the jobs of one event-loop turn share one BEGIN IMMEDIATE …
// COMMIT, each in its own savepoint. A second connection to the same file stands for every other
// reader: what it sees is what was committed.

let dir: string
let db: Db
let store: SqliteStore
let other: Database.Database
beforeEach(() => {
  dir = makeTempDir('tapgate-group-commit-')
  db = openDatabase({ dataDir: dir, busyTimeoutMs: 200 })
  db.exec('CREATE TABLE t (v TEXT PRIMARY KEY)')
  store = createSqliteStore(db, { busyTimeoutMs: 200 })
  other = new Database(databaseFile(dir), { readonly: true })
})
afterEach(async () => {
  other.close()
  await store.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

const insert = (v: string) => async () => db.prepare('INSERT INTO t (v) VALUES (?)').run(v).changes
const values = () => db.prepare<[], { v: string }>('SELECT v FROM t ORDER BY v').all().map((r) => r.v)
const committed = () => other.prepare<[], { v: string }>('SELECT v FROM t ORDER BY v').all().map((r) => r.v)

test('jobs of one event-loop turn share one transaction and one COMMIT; a failing job rolls back only itself', async () => {
  let inTransaction = false
  let sawOther = false
  let committedDuringLast: string[] | undefined
  const results = await Promise.allSettled([
    store.batch(insert('a')),
    store.batch(async () => {
      inTransaction = db.inTransaction
      // The first job's write, not yet committed: the same transaction.
      sawOther = db.prepare("SELECT 1 FROM t WHERE v = 'a'").get() !== undefined
      // A job may await between its statements: the batch waits for it.
      await new Promise((resolve) => setImmediate(resolve))
      return insert('b')()
    }),
    store.batch(async () => {
      await insert('c')()
      throw new Error('job failed')
    }),
    store.batch(insert('a')), // a duplicate key fails in its own savepoint
    store.batch(async () => {
      // The last job: nothing of the earlier ones is committed yet, so they were not committed one by one.
      committedDuringLast = committed()
      return insert('d')()
    }),
  ])
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled'])
  expect((results[2] as PromiseRejectedResult).reason.message).toBe('job failed')
  expect((results[3] as PromiseRejectedResult).reason.code).toBe('SQLITE_CONSTRAINT_PRIMARYKEY')
  expect(inTransaction).toBe(true)
  expect(sawOther).toBe(true)
  expect(committedDuringLast).toEqual([])
  expect(values()).toEqual(['a', 'b', 'd'])
  expect(committed()).toEqual(['a', 'b', 'd'])
})

test('results arrive only after COMMIT: another connection already sees the write', async () => {
  const seen = await store.batch(insert('x')).then(() => committed())
  expect(seen).toEqual(['x'])
})

test('when the write lock cannot be had, every job of the batch fails and nothing is written', async () => {
  const writer = new Database(databaseFile(dir))
  writer.exec('BEGIN IMMEDIATE')
  try {
    const results = await Promise.allSettled([store.batch(insert('p')), store.batch(insert('q'))])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect((results[0] as PromiseRejectedResult).reason.code).toBe('SQLITE_BUSY')
    expect((results[1] as PromiseRejectedResult).reason.code).toBe('SQLITE_BUSY')
  } finally {
    writer.exec('ROLLBACK')
    writer.close()
  }
  expect(values()).toEqual([])
  // The queue recovers: the next batch commits normally.
  await store.batch(insert('r'))
  expect(committed()).toEqual(['r'])
})
