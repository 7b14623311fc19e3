import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, test } from 'vitest'
import { loadMigrations } from '../../src/db/migrations.js'
import { testDir } from '../helpers/gateway.js'
import { HAS_POSTGRES, testDatabase } from '../helpers/postgres.js'
import { cliPath, collectOutput, repoRoot } from '../helpers/processes.js'

type Run = { code: number | null; stdout: string; stderr: string }

// Settings from the real environment (TAPGATE_*) must not reach the child.
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('TAPGATE_')))

/** The real bin, as an operator runs it, on `dataDir` (and `extraEnv`); killed if still running after 20 s. */
async function tapgate(args: string[], dataDir: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<Run> {
  const child = spawn(process.execPath, [cliPath, ...args, '--data-dir', dataDir], { cwd: repoRoot, env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] })
  const out = collectOutput(child)
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
  const { code } = await out.exited
  clearTimeout(timer)
  return { code, stdout: out.stdout(), stderr: out.stderr() }
}

const latest = loadMigrations().at(-1)!.version
const dbFile = (dataDir: string) => path.join(dataDir, 'tapgate.sqlite')

type StatusJson = {
  backend: string
  location: string
  sizeBytes: number
  schemaVersion: number
  latestVersion: number
  pendingMigrations: string[]
  schema: string
  tables: { name: string; rows: number }[]
  totalRows: number
}

/** A data dir as `tapgate team create` leaves it: one team, its API key. */
async function teamDataDir(): Promise<string> {
  const dataDir = path.join(testDir('tapgate-db-status-'), 'data')
  expect((await tapgate(['team', 'create', '--name', 'Booth'], dataDir)).code).toBe(0)
  return dataDir
}

/** Everything status could change: the data dir's files with their sizes and mtimes, and the schema version. */
function snapshot(dataDir: string) {
  const files = fs.readdirSync(dataDir).map((name) => {
    const stat = fs.statSync(path.join(dataDir, name))
    return { name, size: stat.size, mtimeMs: stat.mtimeMs }
  })
  const db = new Database(dbFile(dataDir), { readonly: true })
  try {
    return { files, userVersion: db.pragma('user_version', { simple: true }) as number }
  } finally {
    db.close()
  }
}

/** Sets the schema version back (or forward), as an older (or newer) tapgate would have left it. */
function setUserVersion(dataDir: string, version: number): void {
  const db = new Database(dbFile(dataDir))
  db.pragma(`user_version = ${version}`)
  db.close()
}

describe('tapgate db status', () => {
  test('a fresh data dir after team create: sqlite, the file and its size, version = latest, teams 1 and api_keys 1 in a sorted aligned table, exit 0', async () => {
    const dataDir = await teamDataDir()
    const r = await tapgate(['db', 'status'], dataDir)
    expect(r).toMatchObject({ code: 0, stderr: '' })
    const file = path.resolve(dbFile(dataDir))
    expect(r.stdout).toMatch(/^backend +sqlite$/m)
    expect(r.stdout).toContain(`location  ${file}\n`)
    expect(r.stdout).toContain(`size      ${fs.statSync(file).size} bytes`)
    expect(r.stdout).toMatch(new RegExp(`^schema +${latest} \\(up to date: this tapgate knows ${latest}\\)$`, 'm'))
    const rows = r.stdout.slice(r.stdout.indexOf('\n\n') + 2).trimEnd().split('\n')
    expect(rows[0]).toMatch(/^table +rows$/)
    const tableRows = rows.slice(1, -2).map((line) => /^(\S+) +(\d+)$/.exec(line)!.slice(1))
    expect(tableRows).toContainEqual(['teams', '1'])
    expect(tableRows).toContainEqual(['api_keys', '1'])
    expect(tableRows.map(([name]) => name)).toEqual(tableRows.map(([name]) => name).sort())
    expect(tableRows.map(([name]) => name)).not.toContain('sqlite_sequence')
    expect(rows.at(-1)).toMatch(new RegExp(`^total +${tableRows.reduce((sum, [, n]) => sum + Number(n), 0)}$`))
    // Aligned: every count ends in one column.
    expect(new Set(rows.map((line) => line.length)).size).toBe(1)
  })

  test('--json: one object with the same facts; every table of the schema, sorted, counted, sqlite_sequence left out', async () => {
    const dataDir = await teamDataDir()
    const r = await tapgate(['db', 'status', '--json'], dataDir)
    expect(r).toMatchObject({ code: 0, stderr: '' })
    const status = JSON.parse(r.stdout) as StatusJson
    const file = path.resolve(dbFile(dataDir))
    expect(status).toMatchObject({
      backend: 'sqlite',
      location: file,
      sizeBytes: fs.statSync(file).size,
      schemaVersion: latest,
      latestVersion: latest,
      pendingMigrations: [],
      schema: 'current',
    })
    const db = new Database(file, { readonly: true })
    const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'sqlite_sequence'").pluck().all() as string[]
    db.close()
    expect(status.tables.map((t) => t.name)).toEqual([...names].sort())
    expect(status.tables.find((t) => t.name === 'teams')).toEqual({ name: 'teams', rows: 1 })
    expect(status.tables.find((t) => t.name === 'api_keys')).toEqual({ name: 'api_keys', rows: 1 })
    expect(status.totalRows).toBe(status.tables.reduce((sum, t) => sum + t.rows, 0))
  })

  test('status changes nothing: the same files, sizes, mtimes and user_version after it, plain and --json', async () => {
    const dataDir = await teamDataDir()
    const before = snapshot(dataDir)
    expect((await tapgate(['db', 'status'], dataDir)).code).toBe(0)
    expect((await tapgate(['db', 'status', '--json'], dataDir)).code).toBe(0)
    expect(snapshot(dataDir)).toEqual(before)
  })

  test('beside a running gateway (another connection open): counts the rows still in its WAL', async () => {
    const dataDir = await teamDataDir()
    const gateway = new Database(dbFile(dataDir))
    try {
      gateway.pragma('user_version') // holds the WAL open, as a running gateway does: the next team stays in it
      expect((await tapgate(['team', 'create', '--name', 'Second'], dataDir)).code).toBe(0)
      expect(fs.statSync(`${dbFile(dataDir)}-wal`).size).toBeGreaterThan(0)
      const status = JSON.parse((await tapgate(['db', 'status', '--json'], dataDir)).stdout) as StatusJson
      expect(status.tables.find((t) => t.name === 'teams')).toEqual({ name: 'teams', rows: 2 })
    } finally {
      gateway.close()
    }
  })

  test('a data dir set back with PRAGMA user_version: status reports the pending migrations and applies none', async () => {
    const dataDir = await teamDataDir()
    setUserVersion(dataDir, latest - 2)
    const before = snapshot(dataDir)
    const plain = await tapgate(['db', 'status'], dataDir)
    expect(plain.code).toBe(0)
    expect(plain.stdout).toMatch(new RegExp(`^schema +${latest - 2} \\(this tapgate knows ${latest}: 2 migrations pending, `, 'm'))
    const status = JSON.parse((await tapgate(['db', 'status', '--json'], dataDir)).stdout) as StatusJson
    expect(status).toMatchObject({ schemaVersion: latest - 2, latestVersion: latest, schema: 'pending' })
    expect(status.pendingMigrations).toEqual(loadMigrations().slice(-2).map((m) => m.name))
    expect(snapshot(dataDir)).toEqual(before)
  })

  test('a data dir newer than this tapgate: status says so and changes nothing', async () => {
    const dataDir = await teamDataDir()
    setUserVersion(dataDir, latest + 1)
    const plain = await tapgate(['db', 'status'], dataDir)
    expect(plain.code).toBe(0)
    expect(plain.stdout).toMatch(new RegExp(`^schema +${latest + 1} \\(this tapgate knows ${latest}: the data dir is newer than this tapgate`, 'm'))
    const status = JSON.parse((await tapgate(['db', 'status', '--json'], dataDir)).stdout) as StatusJson
    expect(status).toMatchObject({ schemaVersion: latest + 1, latestVersion: latest, pendingMigrations: [], schema: 'newer' })
    expect(snapshot(dataDir).userVersion).toBe(latest + 1)
  })

  test('a missing data dir, or a data dir without a database: exit 1 naming the path, nothing created', async () => {
    const parent = testDir('tapgate-db-status-')
    const missing = path.join(parent, 'nowhere')
    const r = await tapgate(['db', 'status'], missing)
    expect(r).toMatchObject({ code: 1, stdout: '' })
    expect(r.stderr.trim()).toBe(`tapgate: no data dir at ${missing}`)
    expect(fs.existsSync(missing)).toBe(false)

    const empty = path.join(parent, 'empty')
    fs.mkdirSync(empty)
    const e = await tapgate(['db', 'status', '--json'], empty)
    expect(e).toMatchObject({ code: 1, stdout: '' })
    expect(e.stderr.trim()).toBe(`tapgate: no database in the data dir: ${dbFile(empty)} does not exist`)
    expect(fs.readdirSync(empty)).toEqual([])
  })

  test('a file that is not a tapgate database (garbage bytes; a SQLite file without our tables): exit 1, a clear message, no stack trace, the file untouched', async () => {
    const parent = testDir('tapgate-db-status-')
    const garbage = path.join(parent, 'garbage')
    fs.mkdirSync(garbage)
    fs.writeFileSync(dbFile(garbage), Buffer.alloc(8192, 'not a database, just bytes '))
    const g = await tapgate(['db', 'status'], garbage)
    expect(g).toMatchObject({ code: 1, stdout: '' })
    expect(g.stderr.trim()).toBe(`tapgate: cannot read ${dbFile(garbage)} as a tapgate database: file is not a database (SQLITE_NOTADB)`)
    expect(fs.readdirSync(garbage)).toEqual(['tapgate.sqlite'])
    expect(fs.readFileSync(dbFile(garbage))).toEqual(Buffer.alloc(8192, 'not a database, just bytes '))

    const foreign = path.join(parent, 'foreign')
    fs.mkdirSync(foreign)
    const db = new Database(dbFile(foreign))
    db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)')
    db.close()
    const f = await tapgate(['db', 'status'], foreign)
    expect(f).toMatchObject({ code: 1, stdout: '' })
    expect(f.stderr.trim()).toBe(
      `tapgate: ${dbFile(foreign)} is a SQLite database but not a tapgate one: no teams or api_keys table (schema version 0, 1 tables)`,
    )
    expect(f.stderr).not.toMatch(/\n\s+at /)
  })

  test('an unknown action is exit 2, like the other commands', async () => {
    const r = await tapgate(['db', 'vacuum'], testDir('tapgate-db-status-'))
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('unknown action "db vacuum" (status, copy)')
  })
})

// Issue 24, point 4: what the bin prints about a bad setting or a database never holds a password or the secret.
describe('secrets stay out of what db status prints', () => {
  const password = 'hunter2-Pa55'

  test('a database URL that fails validation: exit 1, the setting named, the password masked', async () => {
    for (const [url, shown] of [
      [`mysql://tapgate:${password}@db.lan/tapgate`, 'mysql://tapgate:****@db.lan/tapgate'],
      [`tapgate:${password}@db.lan/tapgate?password=${password}`, 'tapgate:****@db.lan/tapgate?password=****'],
    ]) {
      const r = await tapgate(['db', 'status'], testDir('tapgate-db-status-'), { TAPGATE_DATABASE_URL: url })
      expect(r).toMatchObject({ code: 1, stdout: '' })
      expect(r.stderr).toContain(`- TAPGATE_DATABASE_URL: Must be a postgres:// URL (a Unix socket directory goes in ?host=/path) (got "${shown}")`)
      expect(r.stderr).not.toContain(password)
    }
  })

  test('a postgres:// URL the driver cannot parse (port out of range): exit 1, one line, the password masked, no stack', async () => {
    const r = await tapgate(['db', 'status'], testDir('tapgate-db-status-'), { TAPGATE_DATABASE_URL: `postgres://tapgate:${password}@db.lan:99999/tapgate` })
    expect(r).toMatchObject({ code: 1, stdout: '' })
    expect(r.stderr.trim()).toBe('tapgate: cannot use the PostgreSQL URL postgres://tapgate:****@db.lan:99999/tapgate: Invalid URL')
  })

  test('a malformed TAPGATE_SECRET: exit 1, what is wrong with it (length, not hex), none of it printed', async () => {
    const secret = `9f${'3b71c0de'.repeat(7)}4a5e${'x'}`
    const r = await tapgate(['db', 'status'], await teamDataDir(), { TAPGATE_SECRET: secret })
    expect(r).toMatchObject({ code: 1, stdout: '' })
    expect(r.stderr.trim()).toBe(
      'tapgate: Invalid configuration:\n  - TAPGATE_SECRET: Must be 64 hex characters (32 bytes) (got 63 characters (64 wanted), 1 of them not hex digits)',
    )
    expect(r.stderr).not.toContain('3b71c0de')
  })
})

describe.skipIf(!HAS_POSTGRES)('tapgate db status on PostgreSQL', () => {
  const db = testDatabase()
  const password = 'hunter2-Pa55'

  test('TAPGATE_DATABASE_URL and no chain settings: db status reads it (a read-only command needs no chain), exit 0', async () => {
    const r = await tapgate(['db', 'status', '--json'], testDir('tapgate-db-status-'), { TAPGATE_DATABASE_URL: db.url() })
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const status = JSON.parse(r.stdout) as StatusJson
    expect(status).toMatchObject({ backend: 'postgres', schemaVersion: status.latestVersion, schema: 'current', totalRows: 0 })
    expect(status.tables.map((t) => t.name)).toContain('teams')
  })

  test('serve on the same settings still refuses the embedded chain: exit 1 before it starts anything', async () => {
    const dataDir = testDir('tapgate-db-status-')
    const r = await tapgate(['serve', '--port', '0'], dataDir, { TAPGATE_DATABASE_URL: db.url() })
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/chain\.embedded: With database\.url every gateway must reach the same chain: set chain\.embedded to false/)
    expect(fs.readdirSync(dataDir)).toEqual([])
  })

  test('a URL with a password (user:…@ and ?password=…): the location shows ****, plain and --json, never the password', async () => {
    const url = db.url().replace(/^postgres:\/\/([^@]+)@/, `postgres://$1:${password}@`) + `&password=${password}`
    expect(url).toContain(`:${password}@`)
    const plain = await tapgate(['db', 'status'], testDir('tapgate-db-status-'), { TAPGATE_DATABASE_URL: url })
    expect(plain).toMatchObject({ code: 0, stderr: '' })
    const location = /^location +(.+)$/m.exec(plain.stdout)![1]!
    expect(location).toMatch(/^postgres:\/\/\w+:\*\*\*\*@\/\w+\?host=.+&password=\*\*\*\*$/)
    const json = await tapgate(['db', 'status', '--json'], testDir('tapgate-db-status-'), { TAPGATE_DATABASE_URL: url })
    expect(json.code).toBe(0)
    expect((JSON.parse(json.stdout) as StatusJson).location).toBe(location)
    expect(plain.stdout + json.stdout).not.toContain(password)
  })

  test('a database that cannot be reached: exit 1, the URL in the message without its password', async () => {
    const url = db.url().replace(/^postgres:\/\/([^@]+)@\/\w+/, `postgres://$1:${password}@/no_such_database`) + `&password=${password}`
    const r = await tapgate(['db', 'status'], testDir('tapgate-db-status-'), { TAPGATE_DATABASE_URL: url })
    expect(r).toMatchObject({ code: 1, stdout: '' })
    expect(r.stderr).toMatch(/^tapgate: cannot read the PostgreSQL database postgres:\/\/\w+:\*\*\*\*@\/no_such_database\?.*password=\*\*\*\*: .*no_such_database/)
    expect(r.stderr).not.toContain(password)
  })
})

