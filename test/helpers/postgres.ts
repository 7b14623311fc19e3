/*
 * PostgreSQL for test files: a database of their own on the run's server (test/helpers/
 * postgresGlobalSetup.ts starts it at the first request). Without PostgreSQL installed the tests are
 * skipped (`describe.skipIf(!HAS_POSTGRES)`, one warning per run); under CI=true, where .ci/run must
 * have installed it, importing this module fails the file instead.
 */
import { randomBytes } from 'node:crypto'
import net from 'node:net'
import postgres from 'postgres'
import { afterAll, beforeAll, inject } from 'vitest'
import { TEMPLATE_DATABASE, type PostgresHarnessReply } from './postgresGlobalSetup.js'
import { clientOptions, POSTGRES_INSTALL_HINT, type ClientOptions } from './postgresServer.js'

const harness = inject('postgres')
if (!harness) throw new Error('test/helpers/postgresGlobalSetup.ts is not among the vitest globalSetup files (test/vitest.config.ts)')
if (!harness.available && process.env.CI === 'true') {
  throw new Error(`PostgreSQL is not installed: ${harness.why}. Under CI the PostgreSQL tests must run (${POSTGRES_INSTALL_HINT}; .ci/run installs it)`)
}

export const HAS_POSTGRES = harness.available

/** Bounds the wait for the server (initdb and start are bounded at 15 s each in postgresServer.ts). */
const serverWaitMs = 40_000

export type TestDatabase = {
  /** The database's name (valid from beforeAll on). */
  readonly name: string
  /** Options for a postgres.js client of this database over the server's Unix socket. */
  options(): ClientOptions
  /** The database's URL, as a gateway is given it (`TAPGATE_DATABASE_URL`): the Unix socket in `?host=`. */
  url(): string
  /** A postgres.js client of this database; ended before the database is dropped. */
  connect(options?: ClientOptions): postgres.Sql
}

/**
 * A fresh database for this test file, copied from the template (the current schema) at beforeAll
 * and dropped (with any connection still open) at afterAll. Call it at the top of the file, or of a
 * describe block. `empty`: no tables at all (template0), for tests of the migrator itself.
 */
export function testDatabase({ empty = false }: { empty?: boolean } = {}): TestDatabase {
  let name: string | undefined
  let socketDir: string | undefined
  const clients: postgres.Sql[] = []
  const options = (): ClientOptions => {
    if (!name || !socketDir) throw new Error('testDatabase(): no database yet (use it from beforeAll or a test, with PostgreSQL installed)')
    return clientOptions(socketDir, name)
  }

  beforeAll(async () => {
    if (!harness.available) return
    const reply = await askHarness(harness.control)
    if (!reply.ok) throw new Error(reply.error)
    socketDir = reply.socketDir
    const created = `t_${randomBytes(8).toString('hex')}`
    await asAdmin(socketDir, (sql) => sql`create database ${sql(created)} template ${sql(empty ? 'template0' : TEMPLATE_DATABASE)}`)
    name = created
  }, serverWaitMs + 5_000)

  afterAll(async () => {
    if (!name || !socketDir) return
    await Promise.all(clients.splice(0).map((sql) => sql.end({ timeout: 5 })))
    const dropped = name
    // WITH (FORCE): a connection a failed test left open must not keep the database alive.
    await asAdmin(socketDir, (sql) => sql`drop database ${sql(dropped)} with (force)`)
  })

  return {
    get name() {
      options()
      return name!
    },
    options,
    url() {
      const { host, port, user, database } = options()
      return `postgres://${user}@/${database}?host=${host}&port=${port}`
    },
    connect(extra = {}) {
      const sql = postgres({ ...options(), ...extra })
      clients.push(sql)
      return sql
    },
  }
}

/**
 * Empties every table but the migrations' and restarts every id sequence: the database as the template
 * made it. DELETE with the foreign-key triggers off (every table is emptied, so no reference is left
 * dangling) rather than TRUNCATE, which makes new files for each of ~40 tables: 1 ms instead of 25-40.
 */
export async function emptyTables<T extends Record<string, unknown>>(sql: postgres.Sql<T>): Promise<void> {
  const tables = await sql<{ tablename: string }[]>`
    SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations'`
  await sql.begin((tx) =>
    tx.unsafe(`
      SET LOCAL session_replication_role = replica;
      ${tables.map(({ tablename }) => `DELETE FROM "${tablename}";`).join('\n')}
      SELECT setval(oid, 1, false) FROM pg_class WHERE relkind = 'S' AND relnamespace = 'public'::regnamespace;`),
  )
}

/** Runs `fn` on a short-lived superuser connection to the `postgres` maintenance database. */
export async function asAdmin<T>(socketDir: string, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres({ ...clientOptions(socketDir, 'postgres'), max: 1 })
  try {
    return await fn(sql)
  } finally {
    await sql.end({ timeout: 5 })
  }
}

/** Asks the run's harness for the server (starting it if nobody has yet); bounded. */
function askHarness(control: string): Promise<PostgresHarnessReply> {
  return new Promise((resolve, reject) => {
    let answer = ''
    const socket = net.connect(control)
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`the PostgreSQL test server was not ready within ${serverWaitMs} ms`))
    }, serverWaitMs)
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (answer += chunk))
    socket.on('error', (error) => {
      clearTimeout(timer)
      reject(new Error(`the PostgreSQL harness's control socket ${control}: ${error.message}`))
    })
    socket.on('end', () => {
      clearTimeout(timer)
      try {
        resolve(JSON.parse(answer) as PostgresHarnessReply)
      } catch {
        reject(new Error(`the PostgreSQL harness answered ${JSON.stringify(answer)}`))
      }
    })
  })
}
