/*
 * Several gateways on one PostgreSQL database (issue 18), as an operator runs them: real `tapgate
 * serve` processes (the bin), one anvil, the same secret and database, a data dir each; the CLI on
 * the same database. Call it at the top of a describe block (it registers the hooks, like
 * testDatabase()).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, expect } from 'vitest'
import { freePort } from './freePort.js'
import { makeTempDir } from './gateway.js'
import type { TestDatabase } from './postgres.js'
import { cliPath, collectOutput, repoRoot, signal, startServe, stopChild, type Server } from './processes.js'
import { until } from './until.js'

export const CHAIN = 31337
/** anvil's dev key 0: the relayer of every gateway. */
export const RELAYER_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
/** Both gateways paused while a burst reaches their sockets, then resumed together: the requests really race. */
const SETTLE_MS = 50

export type PgDeployment = {
  /** The first gateway: it seeded the demo team. */
  a: Server
  b: Server
  /** The demo team's API key (printed once by A) and id. */
  apiKey: string
  teamId: number
  rpcUrl: string
  /** The bin's CLI on the same database (a data dir of its own): its stdout, or a throw with its output. */
  cli(...args: string[]): Promise<string>
  cliJson<T>(...args: string[]): Promise<T>
  /** A JSON request with the demo key. */
  api(server: Server, url: string, init?: RequestInit): Promise<Response>
  /** Sends what `send` sends while both gateways are paused and releases them together: what it sent really races. */
  together<T>(send: () => Promise<T>): Promise<T>
  /** `count` requests made by `request(server, i)`, alternating gateways (even i on A), all in flight at once (together). */
  burst<T>(count: number, request: (server: Server, i: number) => Promise<T>): Promise<T[]>
}

/**
 * Two gateways on `db` and one anvil, started in beforeAll: A alone first (it seeds the demo team and
 * deploys its contracts), then B; ready once every queued chain transaction is mined. `config` is
 * merged over the shared config file (chain: embedded false, poll 100 ms, lease 2 s; rateLimit.max
 * 100,000). `env` is added to the gateways' environment (not the CLI's). Every process is stopped by PID
 * in afterAll.
 */
export function twoGatewaysOnPostgres(db: TestDatabase, p: { config?: Record<string, unknown>; env?: NodeJS.ProcessEnv } = {}): PgDeployment {
  const secret = randomBytes(32).toString('hex')
  const root = makeTempDir('tapgate-pg-')
  const spawned: ChildProcess[] = []
  let anvil: ChildProcess | undefined
  let configFile = ''

  /** What every process of this deployment gets: the database, the secret, the chain; a data dir of its own. */
  function env(name: string): NodeJS.ProcessEnv {
    const dataDir = path.join(root, name)
    fs.mkdirSync(dataDir, { recursive: true })
    return {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TAPGATE_DATA_DIR: dataDir,
      TAPGATE_DATABASE_URL: db.url(),
      TAPGATE_SECRET: secret,
      TAPGATE_CONFIG: configFile,
      TAPGATE_LOG_LEVEL: 'warn',
      TAPGATE_STATION: 'false',
      RELAYER_KEY,
      PORT: '0',
    }
  }
  const serve = (name: string): Promise<Server> => startServe({ cwd: root, env: { ...env(name), ...p.env }, track: (child) => spawned.push(child) })

  const signalGateways = (name: NodeJS.Signals) => {
    for (const { child } of [d.a, d.b]) if (child.pid !== undefined && child.exitCode === null) signal(child.pid, name)
  }

  const d: PgDeployment = {
    a: undefined as unknown as Server,
    b: undefined as unknown as Server,
    apiKey: '',
    teamId: 0,
    rpcUrl: '',
    async cli(...args) {
      const child = spawn(process.execPath, [cliPath, ...args], { cwd: root, env: env('cli'), stdio: ['ignore', 'pipe', 'pipe'] })
      spawned.push(child)
      const output = collectOutput(child)
      const { code } = await output.exited
      if (code !== 0) throw new Error(`tapgate ${args.join(' ')} exited ${code}\nstdout: ${output.stdout()}\nstderr: ${output.stderr()}`)
      return output.stdout()
    },
    async cliJson<T>(...args: string[]) {
      return JSON.parse(await d.cli(...args)) as T
    },
    api: (server, url, init = {}) =>
      fetch(`${server.url}${url}`, { ...init, headers: { 'content-type': 'application/json', 'x-service-api-key': d.apiKey, ...init.headers } }),
    async together(send) {
      signalGateways('SIGSTOP')
      try {
        const pending = send()
        pending.catch(() => {}) // awaited below; this only keeps an early rejection from being reported as unhandled
        await new Promise((resolve) => setTimeout(resolve, SETTLE_MS))
        signalGateways('SIGCONT')
        return await pending
      } finally {
        signalGateways('SIGCONT')
      }
    },
    async burst(count, request) {
      // Keep-alive connections to both first, so the burst leaves without TCP handshakes.
      await Promise.all(Array.from({ length: Math.min(count, 64) }, async (_, i) => (await fetch(`${(i % 2 === 0 ? d.a : d.b).url}/health`)).arrayBuffer()))
      return d.together(() => Promise.all(Array.from({ length: count }, (_, i) => request(i % 2 === 0 ? d.a : d.b, i))))
    },
  }

  beforeAll(async () => {
    const port = await freePort()
    d.rpcUrl = `http://127.0.0.1:${port}`
    anvil = spawn(path.join(repoRoot, 'node_modules/.bin/anvil'), ['--port', String(port), '--chain-id', String(CHAIN), '--silent'], { stdio: 'ignore' })
    await until('anvil to answer', async () => {
      const res = await fetch(d.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }) }).catch(() => null)
      return res?.ok ? true : undefined
    })
    configFile = path.join(root, 'config.json')
    const config = {
      chain: { embedded: false, pollIntervalMs: 100, leaseSeconds: 2 },
      chains: { [CHAIN]: { rpcUrl: d.rpcUrl, relayerKeyEnv: 'RELAYER_KEY' } },
      rateLimit: { max: 100_000 },
      ...p.config,
    }
    fs.writeFileSync(configFile, JSON.stringify(config))
    // A first, alone: it seeds the demo team (and prints its key, once); B finds it there.
    d.a = await serve('a')
    d.apiKey = await until('the demo API key', () => /^\s+(tg_[\w-]+)$/m.exec(d.a.stdout())?.[1])
    d.b = await serve('b')
    expect(d.b.stdout()).not.toMatch(/tg_/)
    const sql = db.connect()
    d.teamId = (await sql<{ id: number }[]>`SELECT id::int AS id FROM teams`)[0]!.id
    await until('the demo contracts\' deploys to be mined', async () => {
      const [open] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM chain_txs WHERE status <> 'mined'`
      return open!.n === 0 ? true : undefined
    }, 30_000, 100)
  }, 60_000)

  afterAll(async () => {
    for (const child of spawned.splice(0)) await stopChild(child)
    if (anvil) await stopChild(anvil)
    fs.rmSync(root, { recursive: true, force: true })
  })

  return d
}
