import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { createStore } from '../../src/db/store.js'
import { openDatabase, type Db } from '../../src/db/openDatabase.js'
import { makeTempDir } from '../helpers/gateway.js'

let dir: string
let db: Db
beforeEach(() => {
  dir = makeTempDir('tapgate-group-commit-')
  db = openDatabase({ dataDir: dir, busyTimeoutMs: 200 })
  db.exec('CREATE TABLE t (v TEXT PRIMARY KEY)')
})
afterEach(() => {
  db.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

const insert = (v: string) => () => db.prepare('INSERT INTO t (v) VALUES (?)').run(v).changes
const values = () => db.prepare<[], { v: string }>('SELECT v FROM t ORDER BY v').all().map((r) => r.v)

test('jobs of one event-loop turn share one transaction; a failing job rolls back only itself', async () => {
  const batch = createStore(db).batch
  let sawOther = false
  let inTransaction = false
  const results = await Promise.allSettled([
    batch(insert('a')),
    batch(() => {
      inTransaction = db.inTransaction
      sawOther = db.prepare("SELECT 1 FROM t WHERE v = 'a'").get() !== undefined
      return insert('b')()
    }),
    batch(() => {
      insert('c')()
      throw new Error('job failed')
    }),
    batch(insert('a')), // a duplicate key fails in its own savepoint
  ])
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected'])
  expect((results[2] as PromiseRejectedResult).reason.message).toBe('job failed')
  expect(inTransaction).toBe(true)
  expect(sawOther).toBe(true)
  expect(values()).toEqual(['a', 'b'])
})

test('results arrive only after COMMIT: another connection already sees the write', async () => {
  const batch = createStore(db).batch
  const other = new Database(path.join(dir, 'tapgate.sqlite'), { readonly: true })
  try {
    await batch(insert('x'))
    expect(other.prepare("SELECT v FROM t WHERE v = 'x'").get()).toEqual({ v: 'x' })
  } finally {
    other.close()
  }
})

test('when the write lock cannot be had, every job of the batch fails and nothing is written', async () => {
  const batch = createStore(db).batch
  const other = new Database(path.join(dir, 'tapgate.sqlite'))
  other.exec('BEGIN IMMEDIATE')
  try {
    const results = await Promise.allSettled([batch(insert('p')), batch(insert('q'))])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect((results[0] as PromiseRejectedResult).reason.code).toBe('SQLITE_BUSY')
  } finally {
    other.exec('ROLLBACK')
    other.close()
  }
  expect(values()).toEqual([])
  // The queue recovers: the next batch commits normally.
  await batch(insert('r'))
  expect(values()).toEqual(['r'])
})
