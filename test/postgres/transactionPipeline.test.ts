// postgres.js 3.4.9 can send a transaction's BEGIN on a connection that is busy with other queries
// without reserving it (porsager/postgres#823, #1189): the transaction fails with UNSAFE_TRANSACTION,
// and the connection goes back to the pool inside the open transaction, where unrelated statements
// then run (and are lost with its rollback). Seen in test/postgres/outage.test.ts as a 500 in 300 mints.
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { connectPostgres } from '../../src/db/pg/connect.js'
import { createPostgresStore, type PostgresStore } from '../../src/db/pg/store.js'
import { HAS_POSTGRES, testDatabase } from '../helpers/postgres.js'

describe.skipIf(!HAS_POSTGRES)('transactions while every connection of the pool is busy', () => {
  const database = testDatabase()
  let store: PostgresStore
  beforeAll(() => {
    store = createPostgresStore(() => connectPostgres({ url: database.url(), max: 3 }))
  })
  afterAll(async () => store?.close())

  test('each commits on a connection of its own: none refused, none left open, nothing of others inside one', async () => {
    const failures: string[] = []
    // A connection pipelines up to 100 statements; a BEGIN sent as the one that fills it was not
    // reserved (#1189). However the pool spreads them, some count of plain statements before a
    // transaction puts its BEGIN there.
    for (let before = 290; before <= 310; before++) {
      await Promise.all([1, 2, 3].map(() => store.sql`SELECT pg_sleep(0.005)`))
      const plain = Array.from({ length: before }, () => store.sql`SELECT 1`.then(() => undefined))
      const txs = [store.tx(async (tx) => tx.teams.insert({ name: `t${before}`, redirectUrl: null, now: 1 }))]
      for (const result of await Promise.allSettled([...plain, ...txs])) if (result.status === 'rejected') failures.push(`${before}: ${String(result.reason)}`)
    }
    expect(failures).toEqual([])
    const open = await store.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`
    expect(open[0]!.n).toBe(0)
    const teams = await store.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM teams`
    expect(teams[0]!.n).toBe(21)
  })
})
