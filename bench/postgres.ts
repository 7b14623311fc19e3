/**
 * The store on PostgreSQL next to SQLite, in one run (issue 18's measurements):
 *
 *   npm run bench:postgres            BENCH_SECONDS=10 BENCH_WORKERS=32 npm run bench:postgres
 *
 * 1. Statements (= round trips: each is awaited before the next, BEGIN and COMMIT included) per
 *    accepted tap, per first ref query and per OTP use, counted with postgres.js's debug hook on
 *    the real domain functions.
 * 2. GET /tap per second through real gateways (the bin, loopback): SQLite with one gateway, then
 *    PostgreSQL with one and with two gateways on one database. BENCH_WORKERS clients each own one
 *    chip and tap it with a rising counter, one request at a time, spread over the gateways.
 *
 * PostgreSQL is a private server this bench starts (initdb into a temp dir, a Unix socket only) with
 * fsync and full_page_writes turned back on (the test harness turns them off), stopped by PID at the
 * end. SQLite runs as shipped (WAL, synchronous=NORMAL: no fsync per commit). Compare within a run.
 * A bench reports; it never fails the build (exit code 0 unless it could not run).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import postgres from 'postgres'
import { ConfigSchema } from '../src/config.js'
import { connectPostgres } from '../src/db/pg/connect.js'
import { migratePostgres } from '../src/db/pg/migrate.js'
import { createPostgresStore } from '../src/db/pg/store.js'
import { importData, parseImportFile } from '../src/importer/importData.js'
import { queryRef } from '../src/refs/queryRef.js'
import { spendOtp } from '../src/otps/spendOtp.js'
import { recordTap } from '../src/taps/recordTap.js'
import { generateSunMessage } from '../src/sun/generateSunMessage.js'
import { findPostgresBin, startPostgresServer } from '../test/helpers/postgresServer.js'
import { startServe, stopChild, type Server } from '../test/helpers/processes.js'
import { createCleanups } from './cleanups.js'
import { positiveEnv } from './env.js'
import { fmt, printTable } from './loopback.js'

const SECONDS = positiveEnv('BENCH_SECONDS', 5)
const WORKERS = positiveEnv('BENCH_WORKERS', 16)
const ZERO_KEY = '00000000000000000000000000000000'
const SECRET = 'ab'.repeat(32)
const chipUid = (i: number) => `04${(0xb0_00_00 + i).toString(16).toUpperCase().padStart(6, '0')}AA0180`.slice(0, 14)

const { onCleanup, cleanup } = createCleanups('bench/postgres.ts')

/** One team, one static-key profile (NXP's all-zero keys), WORKERS chips; chip 0 linked to a token (for its OTP). */
function importFile() {
  return {
    teams: [
      {
        name: 'Bench',
        chipProfiles: [{ name: 'zero', mode: 'aes', keyScheme: 'static', metaKey: ZERO_KEY, fileKey: ZERO_KEY }],
        chips: Array.from({ length: WORKERS }, (_, i) => ({ uid: chipUid(i), kind: 'ntag424', profile: 'zero' })),
        tokens: [{ chainId: 31337, contractAddress: '0x5FbDB2315678afecb367f032d93F642f64180aa3', tokenId: '1', chips: [chipUid(0)] }],
      },
    ],
  }
}

async function main() {
  const bin = findPostgresBin()
  if (!bin) throw new Error('PostgreSQL is not installed (apt-get install postgresql)')
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tapgate-bench-pg-'))
  // As root, the server runs as the postgres user, which must reach its directory inside.
  fs.chmodSync(root, 0o711)
  onCleanup('remove the temp dir', () => fs.rmSync(root, { recursive: true, force: true }))
  const server = await startPostgresServer(path.join(root, 'pg'), bin)
  onCleanup('stop PostgreSQL', () => server.stop())
  const admin = postgres({ ...server.clientOptions('postgres'), max: 1 })
  await admin`ALTER SYSTEM SET fsync = on`
  await admin`ALTER SYSTEM SET full_page_writes = on`
  await admin`SELECT pg_reload_conf()`
  await admin`CREATE DATABASE counts`
  await admin`CREATE DATABASE taps`
  await admin.end()
  const { host, port, user } = server.clientOptions('postgres')
  const urlOf = (database: string) => `postgres://${user}@/${database}?host=${host}&port=${port}`

  await countStatements(urlOf('counts'))
  await tapsPerSecond(root, urlOf('taps'))
}

/** Statements per operation, through the real domain functions on a PostgreSQL store. */
async function countStatements(url: string) {
  let statements = 0
  let sent: string[] = []
  const connect = () =>
    connectPostgres({
      url,
      max: 1,
      onQuery: (query) => {
        statements++
        sent.push(query.replace(/\s+/g, ' ').slice(0, 60))
      },
    })
  const store = createPostgresStore(connect)
  try {
    await migratePostgres(store.sql)
    const config = ConfigSchema.parse({ demo: false, logLevel: 'silent', chain: { embedded: false } })
    await importData(store, parseImportFile(importFile()), { config, now: Date.now(), secret: Buffer.from(SECRET, 'hex'), signers: new Map() })
    const measure = async (fn: () => Promise<unknown>) => {
      statements = 0
      sent = []
      await fn()
      if (process.env.BENCH_VERBOSE) console.log(sent)
      return statements
    }
    const now = Date.now()
    let refId = ''
    const tap = await measure(async () => {
      refId = (await recordTap(store, { uid: chipUid(0), source: 'station', authenticated: true, counter: 1, freshCounter: true, now })).refId
    })
    const batchedTap = await measure(() => store.batch(async (tx) => tx.refs.get(refId)))
    let otp = ''
    const firstQuery = await measure(async () => {
      const answer = await queryRef(store, { refId, callerTeamId: null, includeMetadata: false, now, otpTtlMs: 1_800_000 })
      otp = answer.linkedToken?.otp ?? ''
    })
    const otpUse = await measure(() => store.tx((tx) => spendOtp(tx, { code: otp, type: 'PHYGITAL_CLAIM', usedFor: 'bench', now })))
    // One at a time, so the time is round trips and server work, not queueing.
    const median = async (n: number, fn: (i: number) => Promise<unknown>) => {
      const times: number[] = []
      for (let i = 0; i < n; i++) {
        const started = performance.now()
        await fn(i)
        times.push(performance.now() - started)
      }
      return times.sort((a, b) => a - b)[Math.floor(n / 2)]!
    }
    const refs: string[] = []
    const tapMs = await median(200, async (i) => {
      refs.push((await recordTap(store, { uid: chipUid(0), source: 'station', authenticated: true, counter: 2 + i, freshCounter: true, now })).refId)
    })
    const queryMs = await median(200, (i) => queryRef(store, { refId: refs[i]!, callerTeamId: null, includeMetadata: false, now, otpTtlMs: 1_800_000 }))
    console.log('\nPostgreSQL statements per operation (each one round trip; BEGIN and COMMIT included):')
    printTable([
      ['operation', 'statements'],
      ['accepted tap (recordTap: chip, counter forward, ref, tap log)', `${tap} (median ${tapMs.toFixed(2)} ms one at a time)`],
      ['first ref query (consume, issue the OTPs)', `${firstQuery} (median ${queryMs.toFixed(2)} ms one at a time)`],
      ['OTP use (spendOtp in a transaction)', String(otpUse)],
      ['an empty batch job (BEGIN, one read, COMMIT)', String(batchedTap)],
    ])
  } finally {
    await store.close()
  }
}

type Backend = { name: string; env: NodeJS.ProcessEnv; gateways: number }

/** GET /tap per second: SQLite with one gateway, PostgreSQL with one and two. */
async function tapsPerSecond(root: string, url: string) {
  const file = path.join(root, 'import.json')
  fs.writeFileSync(file, JSON.stringify(importFile()))
  const configFile = path.join(root, 'config.json')
  fs.writeFileSync(configFile, JSON.stringify({ rateLimit: { max: 10_000_000 }, demo: false, chain: { embedded: false } }))
  const base = { PATH: process.env.PATH, HOME: process.env.HOME, TAPGATE_SECRET: SECRET, TAPGATE_CONFIG: configFile, TAPGATE_LOG_LEVEL: 'warn', PORT: '0' }
  const sqliteDir = path.join(root, 'sqlite')
  const backends: Backend[] = [
    { name: 'SQLite, 1 gateway', env: { ...base, TAPGATE_DATA_DIR: sqliteDir }, gateways: 1 },
    { name: 'PostgreSQL, 1 gateway', env: { ...base, TAPGATE_DATABASE_URL: url }, gateways: 1 },
    { name: 'PostgreSQL, 2 gateways', env: { ...base, TAPGATE_DATABASE_URL: url }, gateways: 2 },
  ]
  await cli(['import', file], backends[0]!.env, root)
  await cli(['import', file], backends[1]!.env, root)
  // Counters carry on across runs on one database: each run starts above the last one's.
  let counter = 1
  const rows: string[][] = [['backend', 'taps/s', 'p99 ms', 'refused', 'ratio to SQLite']]
  let sqlite = 0
  for (const backend of backends) {
    const gateways: Server[] = []
    const children: ChildProcess[] = []
    for (let i = 0; i < backend.gateways; i++) {
      const dataDir = backend.env.TAPGATE_DATA_DIR ?? path.join(root, `gateway-${backend.name.length}-${i}`)
      gateways.push(await startServe({ cwd: root, env: { ...backend.env, TAPGATE_DATA_DIR: dataDir }, track: (child) => children.push(child) }))
    }
    try {
      const result = await load(gateways, counter)
      counter = result.nextCounter
      if (backend.name.startsWith('SQLite')) sqlite = result.perSecond
      rows.push([backend.name, fmt(result.perSecond), fmt(result.p99, 1), String(result.refused), (result.perSecond / sqlite).toFixed(2)])
      console.log(`  ${backend.name}: ${fmt(result.perSecond)} taps/s`)
    } finally {
      for (const child of children) await stopChild(child)
    }
  }
  console.log(`\nGET /tap, ${WORKERS} clients each tapping its own chip, ${SECONDS} s per backend:`)
  printTable(rows)
}

/** WORKERS clients, one request at a time each, for SECONDS; client i uses gateway i mod n. */
async function load(gateways: Server[], firstCounter: number) {
  const deadline = Date.now() + SECONDS * 1000
  const latencies: number[] = []
  let refused = 0
  let highest = firstCounter
  await Promise.all(
    Array.from({ length: WORKERS }, async (_, i) => {
      const gateway = gateways[i % gateways.length]!
      for (let counter = firstCounter; Date.now() < deadline; counter++) {
        const msg = generateSunMessage({ metaKey: ZERO_KEY, fileKey: ZERO_KEY, uid: chipUid(i), counter })
        const started = performance.now()
        const res = await fetch(`${gateway.url}/tap?e=${msg.piccData}&c=${msg.sdmmac}`, { redirect: 'manual' })
        await res.arrayBuffer()
        latencies.push(performance.now() - started)
        if (res.status >= 400) refused++
        highest = Math.max(highest, counter + 1)
      }
    }),
  )
  latencies.sort((a, b) => a - b)
  return {
    perSecond: (latencies.length - refused) / SECONDS,
    p99: latencies[Math.floor(latencies.length * 0.99)] ?? 0,
    refused,
    nextCounter: highest + 1,
  }
}

function cli(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(import.meta.dirname, '../src/cli/tapgate.js'), ...args], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`tapgate ${args.join(' ')} exited ${code}: ${stderr}`))))
  })
}

main()
  .catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(() => cleanup())
