/**
 * Load over loopback for the benches: the real gateway and a bare Fastify route run in a
 * child process (bench/apiServer.ts) so autocannon's CPU never shares their event loop;
 * routes are driven in alternating rounds and each route's best round is kept, so a burst
 * of noise from elsewhere hits every route alike.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
const startTimeoutMs = 20_000
/** A directory: the server process runs with --cpu-prof and writes its profile there. */
const PROFILE_DIR = process.env.BENCH_PROFILE

// autocannon ships no type declarations; this is the part of its programmatic API used here.
export type RequestParams = { method: string; path: string; headers: Record<string, string> }
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

export type Route = {
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

export type Round = { reqPerSec: number; p99: number; requests: number; problems: string[] }

const root = fileURLToPath(new URL('..', import.meta.url))
let child: ChildProcess | undefined

/** The pid of the running server process, if any. */
export const serverPid = (): number | undefined => child?.pid

/** Starts bench/apiServer.ts and waits (bounded) for the JSON line with its two ports. */
export function startServers(dir: string): Promise<{ gateway: number; bare: number }> {
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

export async function stopServers(): Promise<void> {
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

export async function load(route: Route, seconds: number): Promise<Round> {
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

/**
 * Warm-up, then `rounds` alternating rounds over `routes`; the best round of each route.
 * A route whose pool is used up is skipped (and reported through `onSkip`).
 */
export async function runRounds(
  routes: Route[],
  { seconds, rounds, warmupSeconds, onSkip }: { seconds: number; rounds: number; warmupSeconds: number; onSkip: (route: Route) => void },
): Promise<{ best: Map<Route, Round>; problems: Map<Route, string[]> }> {
  const best = new Map<Route, Round>()
  const problems = new Map<Route, string[]>()
  const runnable = (route: Route) => {
    if (!route.remaining || route.remaining() >= CONNECTIONS) return true
    onSkip(route)
    return false
  }
  for (const route of routes) if (runnable(route)) await load(route, warmupSeconds)
  for (let round = 0; round < rounds; round++)
    for (const route of routes) {
      if (!runnable(route)) continue
      const r = await load(route, seconds / rounds)
      problems.set(route, [...(problems.get(route) ?? []), ...r.problems])
      if (r.reqPerSec > (best.get(route)?.reqPerSec ?? -1)) best.set(route, r)
      console.log(`  round ${round + 1} ${route.name}: ${fmt(r.reqPerSec)} req/s, p99 ${r.p99 === 0 ? '<1' : r.p99} ms${r.problems.length ? ` (${r.problems.join(', ')})` : ''}`)
    }
  return { best, problems }
}

/** Table rows for routes measured beside the first (bare) route; ratio and target as in targets.md. */
export function ratioRows(routes: Route[], best: Map<Route, Round>): string[][] {
  const bare = best.get(routes[0]!)!
  const rows = [['route', 'req/s', 'p99 ms', 'ratio to bare', 'target', 'result']]
  for (const route of routes) {
    const r = best.get(route)
    const target = route.target === undefined ? '' : `≥ ${route.target.toFixed(2)}`
    if (!r) {
      rows.push([route.name, '-', '-', '-', target, 'NOT RUN'])
      continue
    }
    const ratio = r.reqPerSec / bare.reqPerSec
    rows.push([
      route.name,
      fmt(r.reqPerSec),
      r.p99 === 0 ? '<1' : String(r.p99), // autocannon's latency histogram has 1 ms steps
      route.target === undefined ? '1.00' : ratio.toFixed(2),
      target,
      route.target === undefined ? '' : ratio >= route.target ? 'PASS' : 'FAIL',
    ])
  }
  return rows
}

export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })

export function printTable(rows: string[][]) {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)))
  for (const [i, row] of rows.entries()) {
    console.log(row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '))
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '))
  }
}

