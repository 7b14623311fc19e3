import Database from 'better-sqlite3'
import { expect, onTestFinished, test } from 'vitest'
import { databaseFile } from '../../src/db/sqlite/openDatabase.js'
import { openStore } from '../../src/db/store.js'
import type { Repositories, Tx } from '../../src/db/types.js'
import { testDir } from '../helpers/gateway.js'

// Issue 18, "after-commit effects belong to the transaction": what a transaction announces (a feed
// notification, a kiosk push, a relayer wake-up) runs once its outermost COMMIT succeeded, in the
// order registered, and never for what rolled back. A second connection to the same SQLite file
// stands for every other reader: an effect must find the rows it announces already committed.

function setUp() {
  const dir = testDir('tapgate-after-commit-')
  const errors: Array<{ obj: object; msg?: string }> = []
  const store = openStore({ dataDir: dir, log: { warn: () => {}, error: (obj, msg) => errors.push({ obj, msg }) } })
  const other = new Database(databaseFile(dir), { readonly: true })
  onTestFinished(async () => {
    other.close()
    await store.close()
  })
  const committedTeams = () => other.prepare<[], { name: string }>('SELECT name FROM teams ORDER BY id').all().map((r) => r.name)
  return { store, errors, committedTeams }
}

const team = (tx: Pick<Repositories, 'teams'>, name: string) => tx.teams.insert({ name, redirectUrl: null, now: 1 })
const boom = () => {
  throw new Error('refused by the test')
}

test('effects run after the commit, in registration order, and see the committed rows from another connection', async () => {
  const { store, committedTeams } = setUp()
  const seen: string[][] = []
  const order: string[] = []
  await store.tx(async (tx) => {
    await team(tx, 'a')
    tx.afterCommit(() => {
      order.push('first')
      seen.push(committedTeams())
    })
    await team(tx, 'b')
    tx.afterCommit(() => order.push('second'))
    // Inside the transaction nothing has run yet, and the other connection sees nothing.
    expect(order).toEqual([])
    expect(committedTeams()).toEqual([])
  })
  expect(order).toEqual(['first', 'second'])
  expect(seen).toEqual([['a', 'b']])
})

test('a rolled-back transaction runs none of its effects', async () => {
  const { store, committedTeams } = setUp()
  const ran: string[] = []
  await expect(
    store.tx(async (tx) => {
      await team(tx, 'a')
      tx.afterCommit(() => ran.push('a'))
      boom()
    }),
  ).rejects.toThrow('refused by the test')
  expect(ran).toEqual([])
  expect(committedTeams()).toEqual([])
  // The next transaction starts clean: nothing of the rolled-back one is left to run.
  await store.tx(async (tx) => tx.afterCommit(() => ran.push('next')))
  expect(ran).toEqual(['next'])
})

test('a nested tx (savepoint) that rolls back drops only its own effects; the outer commits and runs its own, once, after the outer COMMIT', async () => {
  const { store, committedTeams } = setUp()
  const ran: string[] = []
  await store.tx(async (tx) => {
    await team(tx, 'outer')
    tx.afterCommit(() => ran.push(`outer sees ${committedTeams().join(',')}`))
    await expect(
      tx.tx(async (inner) => {
        await team(inner, 'dropped')
        inner.afterCommit(() => ran.push('dropped'))
        boom()
      }),
    ).rejects.toThrow('refused by the test')
    await tx.tx(async (inner) => {
      await team(inner, 'kept')
      inner.afterCommit(() => ran.push(`kept sees ${committedTeams().join(',')}`))
    })
    // A committed savepoint is not the outermost commit: its effects wait.
    expect(ran).toEqual([])
  })
  expect(ran).toEqual(['outer sees outer,kept', 'kept sees outer,kept'])
  expect(committedTeams()).toEqual(['outer', 'kept'])
})

test("in a group commit, a job whose savepoint rolls back drops its effects; the others' run after the batch's one COMMIT", async () => {
  const { store, committedTeams } = setUp()
  const ran: string[] = []
  const job = (name: string, fail = false) =>
    store.batch(async (tx) => {
      await team(tx, name)
      tx.afterCommit(() => ran.push(`${name} sees ${committedTeams().join(',')}`))
      if (fail) boom()
      return name
    })
  const results = await Promise.allSettled([job('a'), job('b', true), job('c')])
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
  expect(ran).toEqual(['a sees a,c', 'c sees a,c'])
})

test('an effect that throws is logged, keeps the commit and does not stop the others', async () => {
  const { store, errors, committedTeams } = setUp()
  const ran: string[] = []
  const value = await store.tx(async (tx) => {
    await team(tx, 'a')
    tx.afterCommit(() => ran.push('before'))
    tx.afterCommit(boom)
    tx.afterCommit(() => ran.push('after'))
    return 'committed'
  })
  expect(value).toBe('committed')
  expect(ran).toEqual(['before', 'after'])
  expect(committedTeams()).toEqual(['a'])
  expect(errors).toEqual([{ obj: { err: expect.objectContaining({ message: 'refused by the test' }) }, msg: 'an after-commit effect failed' }])
})

test('a handle used after its transaction ended is refused, not silently run or dropped', async () => {
  const { store } = setUp()
  let escaped: Tx | undefined
  await store.tx(async (tx) => {
    escaped = tx
  })
  expect(() => escaped!.afterCommit(() => {})).toThrow(/afterCommit outside a transaction/)
  await expect(escaped!.tx(async () => {})).rejects.toThrow(/outside its transaction/)
})
