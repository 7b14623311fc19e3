// Issue 18, moving to PostgreSQL: `tapgate db copy --to postgres://…` takes a SQLite data dir's every
// row into an empty database. A real gateway on SQLite (the bin, its embedded chain) makes the rows a
// running event has: the demo team and its deploys, taps, a first ref query and its OTPs, an unused ref,
// a guestbook mint mined, a station with its mode events, a kiosk token and a check-in (with its claim). Stopped, its data dir is copied;
// a second copy is refused and changes nothing; a gateway on the PostgreSQL database then answers the
// API as the SQLite one did, and the unused ref is still spendable there, once.
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { freePort } from '../helpers/freePort.js'
import { makeTempDir, sunTapUrl } from '../helpers/gateway.js'
import { HAS_POSTGRES, testDatabase } from '../helpers/postgres.js'
import { cliPath, collectOutput, startServe, stopChild, type Server } from '../helpers/processes.js'
import { until } from '../helpers/until.js'

const DEMO_CHIP = '04DE5F1EACC040'
const ZERO_KEY = '00'.repeat(16)
const RELAYER_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
const RECIPIENT = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
/** The read-only answers compared between the two engines (and the token's chips, added once its contract is known). */
const compared = ['/events', '/events/contracts', '/chip-groups']

type TableRows = { name: string; rows: number }
type Status = { backend: string; schemaVersion: number; tables: TableRows[] }
type RefBody = { isValidRef: boolean; otp?: string; linkedToken?: { otp?: string }; proofEvents: { otp?: string }[]; guestbookEvents: { otp?: string }[] }

const root = makeTempDir('tapgate-db-copy-')
const sqliteDir = path.join(root, 'sqlite')
const spawned: ChildProcess[] = []

afterAll(async () => {
  for (const child of spawned.splice(0)) await stopChild(child)
  fs.rmSync(root, { recursive: true, force: true })
})

function writeConfig(name: string, config: Record<string, unknown>): string {
  const file = path.join(root, `${name}.json`)
  fs.writeFileSync(file, JSON.stringify({ rateLimit: { max: 100_000 }, ...config }))
  return file
}

const baseEnv = (dataDir: string, config: string): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  TAPGATE_DATA_DIR: dataDir,
  TAPGATE_CONFIG: config,
  TAPGATE_LOG_LEVEL: 'warn',
  PORT: '0',
})

/** The bin's CLI, run to completion (bounded). */
async function cli(env: NodeJS.ProcessEnv, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [cliPath, ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  spawned.push(child)
  const output = collectOutput(child)
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
  const { code } = await output.exited
  clearTimeout(timer)
  return { code, stdout: output.stdout(), stderr: output.stderr() }
}

async function cliJson<T>(env: NodeJS.ProcessEnv, ...args: string[]): Promise<T> {
  const r = await cli(env, ...args)
  if (r.code !== 0) throw new Error(`tapgate ${args.join(' ')} exited ${r.code}\n${r.stdout}\n${r.stderr}`)
  return JSON.parse(r.stdout) as T
}

const counts = (s: Status) => Object.fromEntries(s.tables.map((t) => [t.name, t.rows]))
const otpCodes = (body: RefBody) =>
  [body.otp, body.linkedToken?.otp, ...body.proofEvents.map((e) => e.otp), ...body.guestbookEvents.map((e) => e.otp)].filter((c): c is string => c !== undefined)

describe.skipIf(!HAS_POSTGRES)('tapgate db copy: a SQLite data dir into PostgreSQL', () => {
  // Empty (template0): the copy applies the migrations itself.
  const db = testDatabase({ empty: true })
  const sqliteEnv = () => baseEnv(sqliteDir, writeConfig('sqlite', { chain: { pollIntervalMs: 100 } }))
  let apiKey = ''
  let usedRef = ''
  let unusedRef = ''
  let usedOtps: string[] = []
  /** What the SQLite gateway answered, by path. */
  const answers = new Map<string, { status: number; body: unknown }>()
  let sqliteStatus: Status

  beforeAll(async () => {
    fs.mkdirSync(sqliteDir)
    const gateway = await startServe({ cwd: root, env: sqliteEnv(), track: (child) => spawned.push(child) })
    apiKey = await until('the demo API key', () => /^\s+(tg_[\w-]+)$/m.exec(gateway.stdout())?.[1])
    const api = (url: string, init: RequestInit = {}) =>
      fetch(`${gateway.url}${url}`, { ...init, headers: { 'content-type': 'application/json', 'x-service-api-key': apiKey, ...init.headers } })
    await until('the demo contracts deployed', async () => {
      const contracts = (await (await api('/events/contracts')).json()) as { status: string }[]
      return contracts.length > 0 && contracts.every((c) => c.status === 'confirmed') ? true : undefined
    }, 30_000)
    const [event] = (await (await api('/events')).json()) as { id: number }[]

    // Phone taps: one ref spent by its first query (its OTPs stored), one left unused.
    const tap = async (counter: number) => {
      const res = await fetch(`${gateway.url}${sunTapUrl({ uid: DEMO_CHIP, counter, metaKey: ZERO_KEY, fileKey: ZERO_KEY })}`, { redirect: 'manual' })
      const body = await res.text()
      const ref = res.status === 302 ? new URL(res.headers.get('location')!).searchParams.get('serviceRef') : /data-service-ref="([^"]+)"/.exec(body)?.[1]
      if (!ref) throw new Error(`tap ${counter}: ${res.status} ${body.slice(0, 300)}`)
      return ref
    }
    usedRef = await tap(1)
    unusedRef = await tap(2)
    const first = (await (await fetch(`${gateway.url}/refs/${usedRef}`)).json()) as RefBody
    expect(first.isValidRef).toBe(true)
    usedOtps = otpCodes(first)
    expect(usedOtps.length).toBeGreaterThan(0)

    // A guestbook mint, mined on the embedded chain.
    const mint = await api('/events/mint', { method: 'POST', body: JSON.stringify({ eventId: event!.id, recipient: RECIPIENT }) })
    expect(mint.status, await mint.clone().text()).toBe(200)

    // A station in check-in mode for the event (its mode events), and a reader's tap there (a check-in).
    const cliEnv = sqliteEnv()
    const station = await cliJson<{ stationId: number; token: string }>(cliEnv, 'station', 'create', '--team', '1', '--name', 'Door')
    await cliJson(cliEnv, 'station', 'set', '--station', String(station.stationId), '--mode', 'checkin', '--event', String(event!.id))
    const stationTap = await fetch(`${gateway.url}/station/taps`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-station-token': station.token },
      body: JSON.stringify({ rfUid: DEMO_CHIP, url: `${gateway.url}${sunTapUrl({ uid: DEMO_CHIP, counter: 3, metaKey: ZERO_KEY, fileKey: ZERO_KEY })}` }),
    })
    expect(stationTap.status, await stationTap.clone().text()).toBe(200)
    const kioskUrl = await cli(cliEnv, 'station', 'kiosk-url', '--station', String(station.stationId), '--base-url', gateway.url)
    expect(kioskUrl.code, kioskUrl.stderr).toBe(0)

    const sqlite = new Database(path.join(sqliteDir, 'tapgate.sqlite'), { readonly: true, fileMustExist: true })
    await until('the outbox mined (the mint and the check-in\'s)', () =>
      sqlite.prepare("SELECT count(*) FROM chain_txs WHERE status <> 'mined'").pluck().get() === 0 ? true : undefined,
    )
    // The team's chips: the chips linked to its first token (the phygital contract the demo deployed).
    const contract = sqlite.prepare('SELECT address FROM phygital_contracts').pluck().get() as string
    sqlite.close()
    compared.push(`/phygitals/chip?chainId=31337&contractAddress=${contract}&tokenId=1`)
    for (const url of compared) {
      const res = await api(url)
      answers.set(url, { status: res.status, body: await res.json() })
    }
    // Answers worth comparing: each a 200 with something in it.
    for (const url of compared) expect([answers.get(url)!.status, JSON.stringify(answers.get(url)!.body).length > 20], url).toEqual([200, true])
    const again = await fetch(`${gateway.url}/refs/${usedRef}`)
    answers.set('/refs/used', { status: again.status, body: await again.json() })
    await stopChild(gateway.child)
    expect(gateway.child.exitCode ?? gateway.child.signalCode).not.toBeNull()
    sqliteStatus = await cliJson<Status>(cliEnv, 'db', 'status', '--json')
  }, 90_000)

  test('db copy: equal row counts per table, a second copy refused and nothing changed, a gateway on PostgreSQL answers as the SQLite one did', { timeout: 60_000 }, async () => {
    const rows = counts(sqliteStatus)
    // The rows a running event has, each kind present in what is copied.
    const kinds = ['teams', 'api_keys', 'chips', 'chip_profiles', 'tokens', 'refs', 'otps', 'tap_log', 'chain_txs', 'guestbook_mints', 'stations', 'station_events', 'kiosk_tokens', 'check_ins', 'claims']
    expect(kinds.filter((name) => !(rows[name]! > 0))).toEqual([])
    console.log(`SQLite rows: ${Object.entries(rows).filter(([, n]) => n > 0).map(([name, n]) => `${name} ${n}`).join(', ')}; empty: ${Object.entries(rows).filter(([, n]) => n === 0).map(([name]) => name).join(', ')}`)

    const cliEnv = baseEnv(sqliteDir, writeConfig('copy', {}))
    // What an operator reads: one line per table, its SQLite and PostgreSQL counts.
    const copy = await cli(cliEnv, 'db', 'copy', '--to', db.url())
    expect(copy.code, copy.stderr).toBe(0)
    const printed = [...copy.stdout.matchAll(/^(\w+)\s+(\d+)\s+(\d+)$/gm)].map(([, table, sqlite, postgres]) => ({ table: table!, sqlite: Number(sqlite), postgres: Number(postgres) }))
    expect(printed.filter((t) => t.sqlite !== t.postgres)).toEqual([])
    expect(Object.fromEntries(printed.map((t) => [t.table, t.postgres]))).toEqual(rows)

    const pgEnv = { ...baseEnv(path.join(root, 'pg-cli'), writeConfig('pg-cli', { chain: { embedded: false } })), TAPGATE_DATABASE_URL: db.url() }
    fs.mkdirSync(path.join(root, 'pg-cli'))
    const pgStatus = await cliJson<Status>(pgEnv, 'db', 'status', '--json')
    expect(pgStatus.backend).not.toBe(sqliteStatus.backend)
    expect(pgStatus.schemaVersion).toBe(sqliteStatus.schemaVersion)
    expect(counts(pgStatus)).toEqual(rows)

    // Again into the same database: refused, exit ≠ 0, and not one row more.
    const second = await cli(cliEnv, 'db', 'copy', '--to', db.url())
    expect(second.code).not.toBe(0)
    expect(second.stderr).toMatch(/refused.*not empty/)
    expect(counts(await cliJson<Status>(pgEnv, 'db', 'status', '--json'))).toEqual(rows)

    // A gateway on the copy: the SQLite data dir's secret opens the sealed chip keys; the chain is not
    // needed for these reads (an RPC nothing listens on).
    const secret = fs.readFileSync(path.join(sqliteDir, 'secret.key'), 'utf8').trim()
    const pgDir = path.join(root, 'pg-gateway')
    fs.mkdirSync(pgDir)
    const config = writeConfig('pg-gateway', {
      chain: { embedded: false, pollIntervalMs: 100 },
      chains: { 31337: { rpcUrl: `http://127.0.0.1:${await freePort()}`, relayerKeyEnv: 'RELAYER_KEY' } },
    })
    const gateway: Server = await startServe({
      cwd: root,
      env: { ...baseEnv(pgDir, config), TAPGATE_DATABASE_URL: db.url(), TAPGATE_SECRET: secret, RELAYER_KEY },
      track: (child) => spawned.push(child),
    })
    expect(gateway.stdout()).not.toMatch(/tg_/) // the copied team is there: no new demo team
    const api = (url: string) => fetch(`${gateway.url}${url}`, { headers: { 'x-service-api-key': apiKey } })
    for (const url of compared) {
      const res = await api(url)
      expect({ status: res.status, body: await res.json() }, url).toEqual(answers.get(url))
    }
    const used = await fetch(`${gateway.url}/refs/${usedRef}`)
    expect({ status: used.status, body: await used.json() }).toEqual(answers.get('/refs/used'))
    expect((answers.get('/refs/used')!.body as RefBody).isValidRef).toBe(false)
    // The copied OTPs of the spent ref are the stored ones.
    const sql = db.connect()
    expect((await sql<{ code: string }[]>`SELECT code FROM otps WHERE ref_id = ${usedRef} ORDER BY code`).map((r) => r.code)).toEqual([...usedOtps].sort())
    // The unused ref is spendable on PostgreSQL, once: its first query there issues its OTPs.
    const first = await fetch(`${gateway.url}/refs/${unusedRef}`)
    const body = (await first.json()) as RefBody
    expect(first.status).toBe(200)
    expect(body.isValidRef).toBe(true)
    expect(otpCodes(body).length).toBeGreaterThan(0)
    expect(((await (await fetch(`${gateway.url}/refs/${unusedRef}`)).json()) as RefBody).isValidRef).toBe(false)
    // New rows take ids past the copied ones (the sequences were moved): the new OTPs' ids are fresh.
    const [ids] = await sql<{ fresh: number; copied: number }[]>`
      SELECT count(*) FILTER (WHERE ref_id = ${unusedRef})::int AS fresh, count(*) FILTER (WHERE ref_id <> ${unusedRef})::int AS copied FROM otps`
    expect(ids!.copied).toBe(rows.otps)
    expect(ids!.fresh).toBe(otpCodes(body).length)
  })
})

// Issue 24: a refused copy created tapgate's tables in the target first (the migrations ran before the
// check). The target is checked before anything is created; on refusal it keeps exactly what it had.
describe.skipIf(!HAS_POSTGRES)('tapgate db copy refuses before it creates anything', () => {
  const foreign = testDatabase({ empty: true })
  const partial = testDatabase({ empty: true })
  const used = testDatabase({ empty: true })
  const teamDir = path.join(root, 'team-only')
  const env = () => baseEnv(teamDir, writeConfig('team-only', {}))

  /** Every table of the target's schema (schema_migrations too) with its row count. */
  async function tablesOf(sql: ReturnType<typeof foreign.connect>): Promise<Record<string, number>> {
    const names = (await sql<{ tablename: string }[]>`SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`).map((r) => r.tablename)
    const out: Record<string, number> = {}
    for (const name of names) out[name] = (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM ${sql(name)}`)[0]!.n
    return out
  }

  beforeAll(async () => {
    // A data dir with one team: no chain needed to make it.
    const made = await cli(env(), 'team', 'create', '--name', 'Booth')
    expect(made.code, made.stderr).toBe(0)
  })

  test("a target with a table of its own (someone else's database): refused, still just that table", async () => {
    const sql = foreign.connect()
    await sql`CREATE TABLE guests (id int PRIMARY KEY, name text)`
    await sql`INSERT INTO guests VALUES (1, 'Ada')`
    const r = await cli(env(), 'db', 'copy', '--to', foreign.url())
    expect(r.code).toBe(1)
    expect(r.stderr.trim()).toBe('tapgate: db copy refused: the target database is not empty: it has a table tapgate does not know (guests); copy into a new database')
    expect(await tablesOf(sql)).toEqual({ guests: 1 })
    // Empty, the foreign table still makes it someone else's database.
    await sql`DELETE FROM guests`
    expect((await cli(env(), 'db', 'copy', '--to', foreign.url())).stderr).toMatch(/refused: .*tapgate does not know \(guests\)/)
    expect(await tablesOf(sql)).toEqual({ guests: 0 })
  })

  test('a target with tapgate rows and none of the schema besides (a teams table): refused, no table created', async () => {
    const sql = partial.connect()
    await sql`CREATE TABLE teams (id bigint PRIMARY KEY, name text NOT NULL)`
    await sql`INSERT INTO teams VALUES (7, 'Elsewhere')`
    const r = await cli(env(), 'db', 'copy', '--to', partial.url())
    expect(r.code).toBe(1)
    expect(r.stderr.trim()).toBe('tapgate: db copy refused: the target database is not empty: teams has 1 rows; copy into a new database')
    expect(await tablesOf(sql)).toEqual({ teams: 1 })
  })

  test('a target a copy already filled: refused, the same tables, rows and schema_migrations', async () => {
    const first = await cli(env(), 'db', 'copy', '--to', used.url())
    expect(first.code, first.stderr).toBe(0)
    const sql = used.connect()
    const before = await tablesOf(sql)
    expect(before).toMatchObject({ teams: 1, api_keys: 1 })
    const versions = await sql`SELECT * FROM schema_migrations ORDER BY version`
    const again = await cli(env(), 'db', 'copy', '--to', used.url())
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/^tapgate: db copy refused: the target database is not empty: \w+ has \d+ rows; copy into a new database$/m)
    expect(await tablesOf(sql)).toEqual(before)
    expect(await sql`SELECT * FROM schema_migrations ORDER BY version`).toEqual(versions)
  })
})
