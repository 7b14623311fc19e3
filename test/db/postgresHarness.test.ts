/*
 * The PostgreSQL test harness against the real server, through postgres.js over the Unix socket:
 * what issue 18's store will rely on (a conditional UPDATE has one winner across connections; NOTIFY
 * is delivered after COMMIT and never after ROLLBACK), and what the harness promises (a database per
 * file, dropped afterwards; a server stopped by PID leaves no process). Skipped without PostgreSQL,
 * except under CI=true, where test/helpers/postgres.ts fails this file instead.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { loadPostgresMigrations, migratePostgres } from '../../src/db/pg/migrate.js'
import { asAdmin, HAS_POSTGRES, testDatabase } from '../helpers/postgres.js'
import { findPostgresBin, startPostgresServer, type PostgresServer } from '../helpers/postgresServer.js'

describe.skipIf(!HAS_POSTGRES)('the PostgreSQL test harness', () => {
  let used: { name: string; socketDir: string } | undefined

  describe("a test file's database", () => {
    const db = testDatabase()
    beforeAll(() => {
      used = { name: db.name, socketDir: String(db.options().host) }
    })

    test('is a fresh copy of the template, reached over the Unix socket only, at the current schema', async () => {
      const sql = db.connect()
      const [row] = await sql<{ database: string; serverAddress: string | null; listen: string }[]>`
        select current_database() as "database", inet_server_addr() as "serverAddress", current_setting('listen_addresses') as "listen"`
      expect(row).toEqual({ database: db.name, serverAddress: null, listen: '' })
      // The harness migrated the template once: a test database starts at the latest version, with nothing left to apply.
      const [schema] = await sql<{ version: number }[]>`select max(version) as version from schema_migrations`
      expect(schema!.version).toBe(loadPostgresMigrations().at(-1)!.version)
      expect(await migratePostgres(sql)).toEqual([])
    })

    test('two connections racing 100 conditional UPDATE … RETURNING on one row: exactly one wins', async () => {
      const setup = db.connect()
      // Not the schema's refs table: a bare one of this test's own.
      await setup`create table race_rows (id integer primary key, used_at bigint, used_by text)`
      const rows = 10
      await setup`insert into race_rows (id) select generate_series(1, ${rows}::int)`
      // One connection each, so the attempts queue on two server backends that contend for the row lock.
      const connections = [db.connect({ max: 1 }), db.connect({ max: 1 })]
      for (let id = 1; id <= rows; id++) {
        const attempts = Array.from({ length: 100 }, (_, i) => {
          const sql = connections[i % 2]!
          return sql<{ usedBy: string }[]>`
            update race_rows set used_at = ${Date.now()}, used_by = ${`attempt ${i}`}
            where id = ${id} and used_at is null returning used_by as "usedBy"`
        })
        const winners = (await Promise.all(attempts)).flat()
        expect(winners, `row ${id}`).toHaveLength(1)
        const [stored] = await setup<{ usedBy: string }[]>`select used_by as "usedBy" from race_rows where id = ${id}`
        expect(stored!.usedBy).toBe(winners[0]!.usedBy)
      }
    })

    test('NOTIFY inside a transaction is delivered after COMMIT, and never after ROLLBACK', async () => {
      const received: string[] = []
      const listener = db.connect()
      await listener.listen('harness', (payload) => received.push(payload))
      const writer = db.connect({ max: 1 })

      // pg_notify through `tx`, not tx.notify(): postgres.js's notify() is the pool's, so it would run
      // outside the transaction (and wait forever for this one-connection pool).
      await writer.begin(async (tx) => {
        await tx`select pg_notify('harness', 'committed')`
        // Long enough for a delivered notification to arrive: none may while the transaction is open.
        await new Promise((resolve) => setTimeout(resolve, 200))
        expect(received).toEqual([])
      })
      await expect.poll(() => received).toEqual(['committed'])

      await expect(
        writer.begin(async (tx) => {
          await tx`select pg_notify('harness', 'rolled back')`
          throw new Error('roll back')
        }),
      ).rejects.toThrow('roll back')
      // Notifications arrive in commit order: once this later one is in, the rolled-back one never will be.
      await writer.notify('harness', 'after the rollback')
      await expect.poll(() => received).toEqual(['committed', 'after the rollback'])
    })
  })

  // Runs after the inner block's afterAll, where testDatabase() drops its database (not at all when a
  // filter ran none of that block's tests).
  afterAll(async () => {
    if (!used) return
    const left = await asAdmin(used!.socketDir, (sql) => sql`select datname from pg_database where datname = ${used!.name}`)
    expect(left).toHaveLength(0)
  })

  test('a server of its own runs as the postgres OS user under root, and stopped by PID leaves no process', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tapgate-pg-own-'))
    let server: PostgresServer | undefined
    let sql: postgres.Sql | undefined
    try {
      server = await startPostgresServer(dir, findPostgresBin()!)
      const uid = Number(/^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${server.pid}/status`, 'utf8'))![1])
      if (process.getuid?.() === 0) expect(uid).not.toBe(0)
      else expect(uid).toBe(process.getuid?.())
      sql = postgres({ ...server.clientOptions('postgres'), max: 1 })
      await sql`select 1`
      // The postmaster's children: checkpointer, walwriter… and the backend of the connection above.
      const children = fs.readFileSync(`/proc/${server.pid}/task/${server.pid}/children`, 'utf8').trim().split(/\s+/).map(Number)
      expect(children.length).toBeGreaterThan(2)

      const { killed } = await server.stop()
      expect(killed).toBe(false)
      const alive = [server.pid, ...children].filter((pid) => fs.existsSync(`/proc/${pid}`))
      expect(alive).toEqual([])
    } finally {
      await sql?.end({ timeout: 1 })
      await server?.stop()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
