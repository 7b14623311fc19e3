/**
 * API throughput over loopback, against a bare Fastify route measured in the same run.
 *
 *   npm run bench:api            BENCH_SECONDS=10 BENCH_CONNECTIONS=10 npm run bench:api
 *   BENCH_ROUTES=refs BENCH_PROFILE=/tmp/prof npm run bench:api   (only the bare route and refs;
 *   a V8 CPU profile of the server process lands in /tmp/prof, open it in Chrome DevTools)
 *
 * - GET /refs/:id, the write path: every request is the first query of a fresh ref, so it
 *   runs the BEGIN IMMEDIATE transaction that consumes the ref and issues an OTP.
 * - GET /otps/:id, the read path: rotates over pre-issued OTP codes.
 * - GET /bare on a plain `Fastify()` with one route: the baseline.
 *
 * The servers run in a child process (bench/apiServer.ts) so autocannon's own CPU does not
 * share their event loop. Each route gets a short warm-up, then BENCH_SECONDS of load split
 * into alternating rounds (bare, otps, refs, bare, …); each route's best round is reported,
 * so a burst of noise from elsewhere hits every route alike. Compare the ratios, not the
 * absolute numbers across machines or runs. Targets: ../shared/notes/targets.md.
 * A bench reports; it never fails the build (exit code 0 unless it could not run).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import { ConfigSchema } from '../src/config.js'
import { openStore } from '../src/db/store.js'
import { newPublicId } from '../src/ids.js'
import { importData, parseImportFile } from '../src/importer/importData.js'
import { queryRef } from '../src/refs/queryRef.js'
import { recordTap } from '../src/refs/recordTap.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
const ROUNDS = 2
const WARMUP_SECONDS = 1
/** Refs for the write path; the run stops a refs phase early (and says so) rather than reuse one. */
const REF_POOL = Number(process.env.BENCH_REFS ?? 200_000)
const OTP_POOL = 1000
const CHIP = '04BE4C4000AA01'
const startTimeoutMs = 20_000
/** Comma-separated subset of `otps,refs` (the bare route always runs). */
const ONLY = process.env.BENCH_ROUTES?.split(',').map((r) => r.trim())
/** A directory: the server process runs with --cpu-prof and writes its profile there. */
const PROFILE_DIR = process.env.BENCH_PROFILE

// autocannon ships no type declarations; this is the part of its programmatic API used here.
type RequestParams = { method: string; path: string; headers: Record<string, string> }
type AutocannonOptions = {
  url: string
  connections: number
  duration: number
  /** Stop after this many requests (autocannon then ignores duration; we stop it on time ourselves). */
  amount?: number
  verifyBody?: (body: string) => boolean
  requests?: { setupRequest: (request: RequestParams) => RequestParams }[]
}
type AutocannonResult = {
  requests: { average: number; total: number }
  latency: { p99: number; average: number }
  errors: number
  timeouts: number
  mismatches: number
  non2xx: number
  duration: number
}
type AutocannonInstance = PromiseLike<AutocannonResult> & { stop: () => void }
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: AutocannonOptions) => AutocannonInstance

type Route = {
  key: string
  name: string
  /** Minimum req/s as a fraction of the bare route's, from targets.md. */
  target?: number
  url: string
  verifyBody: (body: string) => boolean
  setupRequest?: (request: RequestParams) => RequestParams
  /** For a route that uses up a pool: how many requests it can still make. */
  remaining?: () => number
}

type Round = { reqPerSec: number; p99: number; requests: number; problems: string[] }

const root = fileURLToPath(new URL('..', import.meta.url))
let child: ChildProcess | undefined
let dataDir: string | undefined

async function seed(dir: string): Promise<{ refs: string[]; otps: string[] }> {
  const config = ConfigSchema.parse({ dataDir: dir, demo: false, logLevel: 'silent' })
  const store = openStore({ dataDir: dir })
  try {
    const now = Date.now()
    importData(
      store,
      parseImportFile({
        teams: [
          {
            name: 'Bench',
            chips: [{ uid: CHIP }],
            tokens: [
              {
                chainId: 31337,
                contractAddress: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
                tokenId: '1',
                chips: [CHIP],
                twoTapClaim: true,
                metadata: {
                  name: 'Bench token',
                  collection: 'Bench',
                  description: 'A token for the API bench',
                  image: 'https://example.com/bench.png',
                  attributes: [{ trait_type: 'Size', value: 'M' }],
                  media_gallery: [],
                },
              },
            ],
          },
        ],
      }),
      { config, now },
    )
    const teamId = store.teams.getByName('Bench')!.id
    // The write path's refs go straight in through the refs repository: one transaction, no tap log.
    const refs = store.tx(() =>
      Array.from({ length: REF_POOL }, () => {
        const id = newPublicId()
        store.refs.insert({ id, chipUid: CHIP, teamId, source: 'operator', authenticated: false, linksModule: false, counter: null, now })
        return id
      }),
    )
    const otpRefs = store.tx(() =>
      Array.from({ length: OTP_POOL }, () => recordTap(store, { uid: CHIP, source: 'operator', authenticated: false, now }).refId),
    )
    // OTPs to read: issued the real way, by the first query of a ref. A day's lifetime outlasts any run.
    const otps = await Promise.all(
      otpRefs.map(async (refId) => {
        const view = await queryRef(store, { refId, callerTeamId: null, includeMetadata: false, now, otpTtlMs: 86_400_000 })
        const code = view.linkedToken?.otp
        if (!code) throw new Error('seeding: the first query of a ref issued no OTP')
        return code
      }),
    )
    return { refs, otps }
  } finally {
    store.close()
  }
}

/** Starts bench/apiServer.ts and waits (bounded) for the JSON line with its two ports. */
function startServers(dir: string): Promise<{ gateway: number; bare: number }> {
  const profile = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(PROFILE_DIR)}`] : []
  const proc = spawn(process.execPath, [...profile, '--import', 'tsx', path.join(root, 'bench/apiServer.ts'), dir], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  child = proc
  let out = ''
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer)
      reject(new Error(`bench/apiServer.ts ${why}${out ? `; it printed: ${out}` : ''}`))
    }
    const timer = setTimeout(() => fail(`did not report its ports within ${startTimeoutMs} ms`), startTimeoutMs)
    proc.once('error', (error) => fail(`could not be spawned: ${error.message}`))
    proc.once('exit', (code, signal) => fail(`exited early (code ${code}, signal ${signal})`))
    proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk
      const line = out.split('\n').find((l) => l.startsWith('{'))
      if (!line) return
      clearTimeout(timer)
      proc.removeAllListeners('exit')
      resolve(JSON.parse(line) as { gateway: number; bare: number })
    })
  })
}

async function stopServers(): Promise<void> {
  const proc = child
  child = undefined
  if (!proc || proc.pid === undefined || proc.exitCode !== null || proc.signalCode !== null) return
  const exited = (ms: number) =>
    new Promise<boolean>((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return resolve(true)
      const timer = setTimeout(() => resolve(false), ms)
      proc.once('exit', () => {
        clearTimeout(timer)
        resolve(true)
      })
    })
  process.kill(proc.pid, 'SIGTERM')
  if (!(await exited(5000))) {
    process.kill(proc.pid, 'SIGKILL')
    await exited(5000)
  }
}

async function load(route: Route, seconds: number): Promise<Round> {
  // A pool-bound route gets `amount` = what is left, so it can never send more requests than
  // there are fresh refs, and a timer for the time bound (autocannon ignores duration with amount).
  const amount = route.remaining?.()
  const instance = autocannon({
    url: route.url,
    connections: CONNECTIONS,
    duration: seconds,
    ...(amount === undefined ? {} : { amount }),
    verifyBody: route.verifyBody,
    ...(route.setupRequest ? { requests: [{ setupRequest: route.setupRequest }] } : {}),
  })
  const timer = amount === undefined ? undefined : setTimeout(() => instance.stop(), seconds * 1000)
  const r = await instance
  clearTimeout(timer)
  const problems = [
    r.errors && `${r.errors} errors`,
    r.timeouts && `${r.timeouts} timeouts`,
    r.non2xx && `${r.non2xx} non-2xx`,
    r.mismatches && `${r.mismatches} unexpected bodies`,
  ].filter((p): p is string => typeof p === 'string')
  return { reqPerSec: r.requests.average, p99: r.latency.p99, requests: r.requests.total, problems }
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })

function printTable(rows: string[][]) {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)))
  for (const [i, row] of rows.entries()) {
    console.log(row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '))
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '))
  }
}

async function main() {
  console.log(`bench/api.ts: node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim() ?? 'unknown'}), ${os.platform()} ${os.arch()}`)
  console.log(`${CONNECTIONS} connections, ${SECONDS} s per route in ${ROUNDS} rounds after a ${WARMUP_SECONDS} s warm-up each; best round reported`)

  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tapgate-bench-api-'))
  let t = performance.now()
  const pool = await seed(dataDir)
  console.log(`seeded ${fmt(pool.refs.length)} refs and ${fmt(pool.otps.length)} OTPs in ${fmt(performance.now() - t)} ms`)

  t = performance.now()
  const ports = await startServers(dataDir)
  console.log(`servers up in ${fmt(performance.now() - t)} ms (gateway :${ports.gateway}, bare :${ports.bare}, pid ${child?.pid})`)

  let nextRef = 0
  let refsRanOut = false
  let nextOtp = 0
  const gateway = `http://127.0.0.1:${ports.gateway}`
  const allRoutes: Route[] = [
    { key: 'bare', name: 'GET /bare (bare Fastify)', url: `http://127.0.0.1:${ports.bare}/bare`, verifyBody: (b) => b === '{"ok":true}' },
    {
      key: 'otps',
      name: 'GET /otps/:id (read)',
      target: 0.7,
      url: gateway,
      verifyBody: (b) => b.includes('"isExpired":false'),
      setupRequest: (request) => {
        request.path = `/otps/${pool.otps[nextOtp++ % pool.otps.length]}`
        return request
      },
    },
    {
      key: 'refs',
      name: 'GET /refs/:id (write)',
      target: 0.5,
      url: gateway,
      verifyBody: (b) => b.includes('"isValidRef":true'),
      remaining: () => pool.refs.length - nextRef,
      setupRequest: (request) => {
        // `amount` keeps this from happening; if it ever did, the reused ref would show as unexpected bodies.
        if (nextRef >= pool.refs.length) refsRanOut = true
        request.path = `/refs/${pool.refs[Math.min(nextRef++, pool.refs.length - 1)]}`
        return request
      },
    },
  ]

  const routes = allRoutes.filter((r) => r.key === 'bare' || !ONLY || ONLY.includes(r.key))
  const best = new Map<Route, Round>()
  const problems = new Map<Route, string[]>()
  const runnable = (route: Route) => {
    if (!route.remaining || route.remaining() >= CONNECTIONS) return true
    refsRanOut = true
    console.log(`  ${route.name}: skipped, its pool is used up (raise BENCH_REFS)`)
    return false
  }
  for (const route of routes) if (runnable(route)) await load(route, WARMUP_SECONDS)
  for (let round = 0; round < ROUNDS; round++)
    for (const route of routes) {
      if (!runnable(route)) continue
      const r = await load(route, SECONDS / ROUNDS)
      problems.set(route, [...(problems.get(route) ?? []), ...r.problems])
      if (r.reqPerSec > (best.get(route)?.reqPerSec ?? -1)) best.set(route, r)
      console.log(`  round ${round + 1} ${route.name}: ${fmt(r.reqPerSec)} req/s, p99 ${r.p99 === 0 ? '<1' : r.p99} ms${r.problems.length ? ` (${r.problems.join(', ')})` : ''}`)
    }
  await stopServers()

  // Every write-path request must have hit a fresh ref: count what the database consumed.
  const db = new Database(path.join(dataDir, 'tapgate.sqlite'), { readonly: true, fileMustExist: true })
  const consumed = (db.prepare('SELECT count(*) AS n FROM refs WHERE consumed_at IS NOT NULL').get() as { n: number }).n - OTP_POOL
  const issued = (db.prepare('SELECT count(*) AS n FROM otps').get() as { n: number }).n - OTP_POOL
  db.close()

  const bare = best.get(routes[0]!)!
  const rows = [['route', 'req/s', 'p99 ms', 'ratio to bare', 'target', 'result']]
  for (const route of routes) {
    const r = best.get(route)
    if (!r) {
      rows.push([route.name, '-', '-', '-', route.target === undefined ? '' : `≥ ${route.target.toFixed(2)}`, 'NOT RUN'])
      continue
    }
    const ratio = r.reqPerSec / bare.reqPerSec
    rows.push([
      route.name,
      fmt(r.reqPerSec),
      r.p99 === 0 ? '<1' : String(r.p99), // autocannon's latency histogram has 1 ms steps
      route.target === undefined ? '1.00' : ratio.toFixed(2),
      route.target === undefined ? '' : `≥ ${route.target.toFixed(2)}`,
      route.target === undefined ? '' : ratio >= route.target ? 'PASS' : 'FAIL',
    ])
  }
  console.log('')
  printTable(rows)
  console.log('')
  console.log(`write path: ${fmt(nextRef)} fresh refs sent, ${fmt(consumed)} consumed and ${fmt(issued)} OTPs issued in the database` +
    (refsRanOut ? ` — RAN OUT of refs (BENCH_REFS=${REF_POOL}): the refs figure covers less than ${SECONDS} s` : ` (pool ${fmt(REF_POOL)}, never exhausted)`))
  for (const [route, list] of problems) if (list.length) console.log(`WARNING ${route.name}: ${list.join(', ')}`)
}

// Ctrl-C: take the server process down too before leaving.
process.once('SIGINT', () => {
  void stopServers().finally(() => {
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true })
    process.exit(130)
  })
})

try {
  await main()
} catch (error) {
  console.error(`bench/api.ts failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  process.exitCode = 1
} finally {
  await stopServers()
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true })
}
