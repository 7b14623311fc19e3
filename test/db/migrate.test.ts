import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, test } from 'vitest'
import { loadMigrations } from '../../src/db/migrations.js'
import { migrate } from '../../src/db/sqlite/migrate.js'
import { openDatabase, type Db } from '../../src/db/sqlite/openDatabase.js'
import { makeTempDir } from '../helpers/gateway.js'

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))

const dirs: string[] = []
const dbs: Db[] = []
const children = new Set<ChildProcess>()

afterEach(() => {
  for (const child of children)
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(child.pid, 'SIGKILL')
      } catch {
        // already gone
      }
    }
  children.clear()
  for (const db of dbs.splice(0)) if (db.open) db.close()
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

function tempDir(): string {
  const dir = makeTempDir('tapgate-migrate-')
  dirs.push(dir)
  return dir
}

function track(db: Db): Db {
  dbs.push(db)
  return db
}

/** A plain database file in a temp dir, no pragmas, no migrations. */
function rawDb(): Db {
  return track(new Database(path.join(tempDir(), 'test.sqlite')))
}

/** A migrations dir holding `files` (name → SQL). */
function migrationsDir(files: Record<string, string>): string {
  const dir = tempDir()
  for (const [name, sql] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), sql)
  return dir
}

const userVersion = (db: Db) => db.pragma('user_version', { simple: true }) as number
const schemaOf = (db: Db) =>
  db
    .prepare<[], { type: string; name: string; sql: string | null }>(
      "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name",
    )
    .all()

describe('openDatabase', () => {
  test('a fresh data dir (created when missing) gets WAL, foreign keys and every migration', () => {
    const dataDir = path.join(tempDir(), 'nested', 'data')
    const db = track(openDatabase({ dataDir }))
    expect(fs.existsSync(path.join(dataDir, 'tapgate.sqlite'))).toBe(true)
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1)
    const migrations = loadMigrations()
    expect(migrations.length).toBeGreaterThan(0)
    expect(userVersion(db)).toBe(migrations.at(-1)!.version)
    expect(userVersion(db)).toBe(migrations.length)
    const tables = schemaOf(db).filter((o) => o.type === 'table').map((o) => o.name)
    expect(tables).toEqual(
      expect.arrayContaining(['teams', 'api_keys', 'chip_groups', 'chips', 'tokens', 'token_chips', 'proof_events', 'refs', 'otps', 'tap_log']),
    )
    // 010: a profile holds the URL template chip provision writes.
    const profileColumns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('chip_profiles')").all().map((c) => c.name)
    expect(profileColumns).toContain('url_template')
  })

  test('reopening applies nothing; migrate() a second time returns no versions', () => {
    const dataDir = tempDir()
    const first = track(openDatabase({ dataDir }))
    const schema = schemaOf(first)
    expect(migrate(first)).toEqual([])
    first.close()
    const second = track(openDatabase({ dataDir }))
    expect(migrate(second)).toEqual([])
    expect(schemaOf(second)).toEqual(schema)
  })

  test('foreign keys are enforced', () => {
    const db = track(openDatabase({ dataDir: tempDir() }))
    const insertChip = db.prepare(
      "INSERT INTO chips (uid, team_id, group_id, kind, created_at) VALUES ('04AABBCCDDEE01', ?, NULL, 'ntag424', 0)",
    )
    expect(() => insertChip.run(999)).toThrow(expect.objectContaining({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' }))
    db.prepare("INSERT INTO teams (id, name, created_at) VALUES (999, 'T', 0)").run()
    expect(insertChip.run(999).changes).toBe(1)
  })
})

describe('migrate', () => {
  test('loadMigrations keeps NNN-name.sql files only, in number order', () => {
    const dir = migrationsDir({
      '010-third.sql': 'SELECT 1;',
      '002-second.sql': 'SELECT 1;',
      '001-first.sql': 'SELECT 1;',
      'README.md': 'not a migration',
      '3-short.sql': 'SELECT 1;',
      '004-draft.sql.bak': 'SELECT 1;',
    })
    expect(loadMigrations(dir).map((m) => [m.version, m.name])).toEqual([
      [1, '001-first.sql'],
      [2, '002-second.sql'],
      [10, '010-third.sql'],
    ])
  })

  test('migrations run in number order and set user_version to the last one', () => {
    // Each migration needs the one before it, so any other order fails.
    const dir = migrationsDir({
      '010-c.sql': "INSERT INTO log (step) VALUES ('c');",
      '002-b.sql': "INSERT INTO log (step) VALUES ('b'); ALTER TABLE log ADD COLUMN extra TEXT;",
      '001-a.sql': "CREATE TABLE log (id INTEGER PRIMARY KEY, step TEXT NOT NULL); INSERT INTO log (step) VALUES ('a');",
    })
    const db = rawDb()
    expect(migrate(db, loadMigrations(dir))).toEqual([1, 2, 10])
    expect(userVersion(db)).toBe(10)
    expect(db.prepare<[], { step: string }>('SELECT step FROM log ORDER BY id').all().map((r) => r.step)).toEqual(['a', 'b', 'c'])
    expect(migrate(db, loadMigrations(dir))).toEqual([])
  })

  test('only migrations newer than user_version are applied', () => {
    const db = rawDb()
    const dir = migrationsDir({ '001-a.sql': 'CREATE TABLE a (x);' })
    expect(migrate(db, loadMigrations(dir))).toEqual([1])
    fs.writeFileSync(path.join(dir, '002-b.sql'), 'CREATE TABLE b (x);')
    expect(migrate(db, loadMigrations(dir))).toEqual([2])
    expect(userVersion(db)).toBe(2)
  })

  test('a failing migration rolls back the whole run: user_version and schema unchanged', () => {
    const dir = migrationsDir({
      '001-a.sql': 'CREATE TABLE a (x);',
      '002-b.sql': 'CREATE TABLE b (x); INSERT INTO a (x) VALUES (1);',
      '003-broken.sql': 'CREATE TABLE c (x); CREATE TABLEE oops (x);',
    })
    const fresh = rawDb()
    expect(() => migrate(fresh, loadMigrations(dir))).toThrow(/syntax error/)
    expect(userVersion(fresh)).toBe(0)
    expect(schemaOf(fresh)).toEqual([])
    expect(fresh.inTransaction).toBe(false)

    // On a database already at version 1, a run of 2 and 3 leaves version 1 as it was.
    const partial = rawDb()
    expect(migrate(partial, loadMigrations(dir).slice(0, 1))).toEqual([1])
    const before = schemaOf(partial)
    expect(() => migrate(partial, loadMigrations(dir))).toThrow(/syntax error/)
    expect(userVersion(partial)).toBe(1)
    expect(schemaOf(partial)).toEqual(before)
    expect(partial.prepare('SELECT COUNT(*) AS n FROM a').get()).toEqual({ n: 0 })
  })
})

describe('two processes on one fresh data dir', () => {
  type ChildResult = { code: number | null; stdout: string; stderr: string }

  /** `node --import tsx` running `code` (an ES module) in the repo root; argv[1] is the data dir. */
  function runNode(code: string, dataDir: string, startAt: number): Promise<ChildResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code, dataDir, String(startAt)], {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      children.add(child)
      let stdout = ''
      let stderr = ''
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
      child.once('error', reject)
      child.once('close', (code) => resolve({ code, stdout, stderr }))
    })
  }

  // Both children load their modules first, then wait for the same instant before touching the data dir.
  const barrier = 'const startAt = Number(process.argv[2]); while (Date.now() < startAt) {}'

  test('both succeed through openDatabase and the schema exists once', async () => {
    const dataDir = path.join(tempDir(), 'data')
    const code = `
      const { openDatabase } = await import('./src/db/sqlite/openDatabase.ts')
      ${barrier}
      const db = openDatabase({ dataDir: process.argv[1] })
      console.log(JSON.stringify({ version: db.pragma('user_version', { simple: true }) }))
      db.close()`
    const startAt = Date.now() + 1500
    const results = await Promise.all([runNode(code, dataDir, startAt), runNode(code, dataDir, startAt)])
    for (const r of results) {
      expect(r.stderr).toBe('')
      expect(r.code).toBe(0)
      expect(JSON.parse(r.stdout)).toEqual({ version: loadMigrations().at(-1)!.version })
    }
    const db = track(openDatabase({ dataDir }))
    const reference = track(openDatabase({ dataDir: tempDir() }))
    expect(schemaOf(db)).toEqual(schemaOf(reference))
  })

  test('exactly one of two concurrent migrate() calls applies the migrations', async () => {
    const dataDir = tempDir()
    const code = `
      const { default: Database } = await import('better-sqlite3')
      const { migrate } = await import('./src/db/sqlite/migrate.ts')
      ${barrier}
      const db = new Database(process.argv[1] + '/tapgate.sqlite', { timeout: 10000 })
      db.pragma('journal_mode = WAL')
      console.log(JSON.stringify(migrate(db)))
      db.close()`
    // The file exists in WAL mode before the race: this test is about migrate(), not the WAL switch.
    const setup = new Database(path.join(dataDir, 'tapgate.sqlite'))
    setup.pragma('journal_mode = WAL')
    setup.close()
    const startAt = Date.now() + 1500
    const results = await Promise.all([runNode(code, dataDir, startAt), runNode(code, dataDir, startAt)])
    for (const r of results) {
      expect(r.stderr).toBe('')
      expect(r.code).toBe(0)
    }
    const applied = results.map((r) => JSON.parse(r.stdout) as number[]).sort((a, b) => b.length - a.length)
    expect(applied).toEqual([loadMigrations().map((m) => m.version), []])
  })
})
