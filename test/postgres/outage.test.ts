// Issue 18, several gateways on one PostgreSQL, when something dies. A private PostgreSQL server (this
// file stops and kills it, so never the run's shared one), an empty database the first gateway migrates
// on start, one anvil all gateways reach over RPC, real `tapgate serve` processes.
// (1) A gateway SIGKILLed during guestbook mints sent to both: the other takes the relayer lease (a new
// epoch) and every mint answered 2xx is on chain exactly once. (2) The postmaster killed (SIGQUIT:
// `pg_ctl stop -m immediate`) during a burst of taps, first ref queries and mints: while it is down
// the gateways answer 503 database_unavailable, never 500 and never die; after it is started again on
// the same data dir (crash recovery) they serve again by themselves, and nothing answered 2xx is lost.
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import postgres from 'postgres'
import { type Address, createPublicClient, type Hex, http, parseAbiItem } from 'viem'
import { privateKeyToAddress } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest'
import { guestbookAbi } from '../../contracts/artifacts/Guestbook.js'
import { freePort } from '../helpers/freePort.js'
import { makeTempDir, sunTapUrl } from '../helpers/gateway.js'
import { HAS_POSTGRES } from '../helpers/postgres.js'
import { findPostgresBin, startPostgresServer, type PostgresServer } from '../helpers/postgresServer.js'
import { repoRoot, signal, startServe, stopChild, type Server } from '../helpers/processes.js'
import { until } from '../helpers/until.js'

const CHAIN = 31337
const LEASE_MS = 2000
const POLL_MS = 100
const DATABASE = 'tapgate'
const REQUEST_MS = 10_000
/** A request to a gateway whose database is down: it should answer 503 at once (postgres.js: ENOENT on the socket). */
const PROBE_MS = 3_000
/** anvil's dev account 0: the relayer of every gateway here. */
const RELAYER_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
const SECRET = 'ab'.repeat(32)
/** The demo's chip under the zero-key "Factory keys (demo)" profile: taps a test can write. */
const DEMO_CHIP = '04DE5F1EACC040'
const ZERO_KEY = '00'.repeat(16)
const transferSingle = parseAbiItem('event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value)')

const root = makeTempDir('tapgate-pg-outage-')
// Not under root (mode 0700, ours): the server runs as the postgres OS user when we are root.
const pgDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tapgate-pg-outage-server-'))
const spawned: ChildProcess[] = []
let pg: PostgresServer | undefined
let anvil: ChildProcess | undefined
let rpcUrl = ''
let sql: postgres.Sql
let apiKey = ''
let guestbook: Address
let eventId = 0
/** Gateways by name; a test removes the one it killed. */
const gateways = new Map<string, Server>()

afterAll(async () => {
  for (const child of spawned.splice(0)) await stopChild(child)
  await sql?.end({ timeout: 5 })
  if (pg) await pg.stop()
  if (anvil?.pid !== undefined) signal(anvil.pid, 'SIGKILL')
  fs.rmSync(root, { recursive: true, force: true })
  fs.rmSync(pgDir, { recursive: true, force: true })
})

/** A gateway of its own data dir on the shared database and chain. */
async function serve(name: string): Promise<Server> {
  const dataDir = path.join(root, `gateway-${name}`)
  fs.mkdirSync(dataDir)
  const config = path.join(dataDir, 'config.json')
  fs.writeFileSync(
    config,
    JSON.stringify({
      // Fee replacement after 10 s, not 60: anvil can keep the transaction whose nonce is the account's
      // in "queued" when higher nonces reached it first (a killed gateway's), and only its replacement
      // moves it (src/relayer/broadcast.ts). The product recovers so at any setting; the drain waits 30 s.
      chain: { embedded: false, pollIntervalMs: POLL_MS, leaseSeconds: LEASE_MS / 1000, replaceAfterSeconds: 10 },
      chains: { [CHAIN]: { rpcUrl, relayerKeyEnv: 'RELAYER_KEY' } },
      rateLimit: { max: 100_000 },
    }),
  )
  const server = await startServe({
    cwd: dataDir,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TAPGATE_DATA_DIR: dataDir,
      TAPGATE_DATABASE_URL: `postgres://postgres@/${DATABASE}?host=${pg!.socketDir}&port=5432`,
      TAPGATE_SECRET: SECRET,
      RELAYER_KEY,
      PORT: '0',
      TAPGATE_LOG_LEVEL: 'warn',
      TAPGATE_CONFIG: config,
    },
    track: (child) => spawned.push(child),
  })
  gateways.set(name, server)
  return server
}

/** Every request is bounded: a gateway that hangs fails the test with what it was asked, not at the test's timeout. */
const ask = (server: Server, url: string, init: RequestInit = {}) => fetch(`${server.url}${url}`, { signal: AbortSignal.timeout(REQUEST_MS), ...init })
const api = (server: Server, url: string, init: RequestInit = {}) =>
  ask(server, url, { ...init, headers: { 'content-type': 'application/json', 'x-service-api-key': apiKey, ...init.headers } })
const mint = (server: Server, recipient: Address) => api(server, '/events/mint', { method: 'POST', body: JSON.stringify({ eventId, recipient }) })
/** A distinct recipient per number (the address of private key n). */
const recipient = (n: number): Address => privateKeyToAddress(`0x${n.toString(16).padStart(64, '0')}` as Hex)
const leaseRow = async () => (await sql<{ holder: string; epoch: number }[]>`SELECT holder, epoch::int AS epoch FROM relayer_leases WHERE chain_id = ${CHAIN}`)[0]
const chainClient = () => createPublicClient({ transport: http(rpcUrl) })

/** The last of what gateways printed (warn and up, and their stderr): what a failure message needs to say why. */
const logsOf = (gateways: readonly Server[]) =>
  gateways.map((g) => `--- ${g.url} stdout:\n${g.stdout().slice(-3000)}\n--- stderr:\n${g.stderr().slice(-1500)}`).join('\n')

/** Waits for the outbox to drain, then checks chain and outbox agree: one TransferSingle per mined mint, nonces neither reused nor skipped. */
async function expectOutboxOnChain(gateways: readonly Server[] = []): Promise<{ minted: number }> {
  try {
    await until('the outbox to drain', async () => ((await sql`SELECT 1 FROM chain_txs WHERE status <> 'mined' LIMIT 1`).length === 0 ? true : undefined), 30_000, 100)
  } catch (error) {
    const open = await sql`SELECT id, nonce, status, sent_by, last_error FROM chain_txs WHERE status <> 'mined' ORDER BY nonce LIMIT 5`
    const [lease] = await sql`SELECT holder, epoch, expires_at FROM relayer_leases`
    // What the relayers logged (warn and up) says why: a refused broadcast, a failed tick.
    const logs = logsOf(gateways)
    // And what the chain has: the sender's nonces, the first stuck row's versions, the row before it.
    const [first] = await sql<{ id: number; nonce: number; sender: Address; txHash: Hex; initialTxHash: Hex }[]>`
      SELECT id, nonce::int AS nonce, sender, tx_hash AS "txHash", initial_tx_hash AS "initialTxHash" FROM chain_txs WHERE status <> 'mined' ORDER BY nonce LIMIT 1`
    let chain = ''
    if (first) {
      const client = chainClient()
      const [latest, pending] = await Promise.all(['latest', 'pending'].map((tag) => client.getTransactionCount({ address: first.sender, blockTag: tag as 'latest' | 'pending' })))
      const attempts = await sql<{ txHash: Hex }[]>`SELECT tx_hash AS "txHash" FROM chain_tx_attempts WHERE chain_tx_id = ${first.id}`
      const known = await Promise.all(attempts.map(async (a) => {
        const found = (await client.request({ method: 'eth_getTransactionByHash', params: [a.txHash] }).catch(() => null)) as { blockNumber?: string; maxFeePerGas?: string } | null
        return `${a.txHash}: ${found ? `block ${found.blockNumber}, maxFeePerGas ${found.maxFeePerGas}` : 'unknown to the node'}`
      }))
      const head = await client.getBlock()
      const pool = JSON.stringify(await client.request({ method: 'txpool_status' as never }).catch((e: Error) => e.message))
      known.push(`head ${head.number} baseFeePerGas ${head.baseFeePerGas} gasUsed ${head.gasUsed}/${head.gasLimit}; txpool ${pool}`)
      const before = await sql`SELECT id, nonce, status, reverted, tx_hash, initial_tx_hash, block_number FROM chain_txs WHERE nonce = ${first.nonce - 1}`
      chain = `chain: sender nonce latest ${latest}, pending ${pending}; first stuck row ${first.id} nonce ${first.nonce}, attempts ${known.join('; ')}; row before ${JSON.stringify(before)}`
    }
    throw new Error(`${(error as Error).message}: open rows ${JSON.stringify(open)}; lease ${JSON.stringify(lease)}\n${chain}\n${logs}`)
  }
  const client = chainClient()
  const logs = await client.getLogs({ address: guestbook, event: transferSingle, fromBlock: 0n })
  const [mined] = await sql<{ minted: number }[]>`SELECT count(*)::int AS minted FROM chain_txs WHERE kind = 'guestbook_mint' AND status = 'mined' AND NOT reverted`
  const minted = mined!.minted
  expect(logs.length).toBe(minted)
  expect(new Set(logs.map((l) => l.args.to)).size).toBe(logs.length)
  const senders = await sql<{ sender: Address; rows: number }[]>`SELECT sender, count(*)::int AS rows FROM chain_txs WHERE chain_id = ${CHAIN} GROUP BY sender`
  expect(senders).toHaveLength(1)
  expect(await client.getTransactionCount({ address: senders[0]!.sender })).toBe(senders[0]!.rows)
  return { minted }
}

async function balancesOf(recipients: Address[]): Promise<bigint[]> {
  const client = chainClient()
  return Promise.all(recipients.map((r) => client.readContract({ address: guestbook, abi: guestbookAbi, functionName: 'balanceOf', args: [r, 1n] })))
}

describe.skipIf(!HAS_POSTGRES)('gateways on one PostgreSQL when a gateway or the database dies', () => {
  beforeAll(async () => {
    const bin = findPostgresBin()
    if (!bin) throw new Error('PostgreSQL binaries not found')
    pg = await startPostgresServer(pgDir, bin)
    const admin = postgres({ ...pg.clientOptions('postgres'), max: 1 })
    try {
      // Empty: the first gateway's start applies the migrations.
      await admin`CREATE DATABASE ${admin(DATABASE)}`
    } finally {
      await admin.end({ timeout: 5 })
    }
    sql = postgres({ ...pg.clientOptions(DATABASE), max: 2 })

    const port = await freePort()
    anvil = spawn(path.join(repoRoot, 'node_modules/.bin/anvil'), ['--port', String(port), '--chain-id', String(CHAIN), '--silent'], { stdio: 'ignore' })
    rpcUrl = `http://127.0.0.1:${port}`
    const client = chainClient()
    await until('anvil', () => client.getChainId().then(() => true, () => undefined), 15_000)

    const a = await serve('a')
    apiKey = await until('the demo API key', () => /^\s+(tg_[\w-]+)$/m.exec(a.stdout())?.[1])
    const [migrations] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM schema_migrations`
    expect(migrations!.n).toBeGreaterThan(0)
    guestbook = await until('the demo guestbook deploy', async () => {
      const [contract] = (await (await api(a, '/events/contracts')).json()) as { address: Address | null; status: string }[]
      return contract?.status === 'confirmed' ? contract.address! : undefined
    })
    eventId = ((await (await api(a, '/events')).json()) as { id: number }[])[0]!.id
  }, 60_000)

  test('300 mints across two gateways, one SIGKILLed: the other holds the lease in a new epoch, every 2xx mint on chain once', { timeout: 60_000 }, async () => {
    const MINTS = 300
    const KILL_AFTER = 100
    const a = gateways.get('a')!
    const before = await until('A to take the lease', leaseRow)
    const b = await serve('b')
    expect(b.stdout()).not.toMatch(/tg_/) // one demo team, seeded by A
    await new Promise((resolve) => setTimeout(resolve, 3 * POLL_MS)) // B has polled and found A's lease live
    expect(await leaseRow()).toEqual(before)

    const recipients = Array.from({ length: MINTS }, (_, i) => recipient(i + 1))
    const accepted = new Map<Address, 'a' | 'b'>()
    const conflicts = new Set<Address>()
    const refused: string[] = []
    let answered = 0
    let killNow!: () => void
    const killed = new Promise<void>((resolve) => (killNow = resolve))
    const requests = recipients.map(async (to, i) => {
      const [server, name] = i % 2 === 0 ? ([a, 'a'] as const) : ([b, 'b'] as const)
      try {
        const res = await mint(server, to)
        if (res.status === 200) accepted.set(to, name)
        // Counted apart so a failure says how many: a lost race on the nonce row (it was a third to two
        // thirds of this burst while mints queued at SERIALIZABLE).
        else if (res.status === 409 && ((await res.json()) as { error: string }).error === 'conflict') conflicts.add(to)
        else refused.push(`${name} ${res.status}: ${await res.text()}`)
      } catch {
        // A's connection died with it: this mint may or may not have been accepted.
      } finally {
        if (++answered === KILL_AFTER) killNow()
      }
    })
    await killed
    a.child.kill('SIGKILL')
    gateways.delete('a')
    const killedAt = Date.now()
    const after = await until('B to take the lease', async () => {
      const lease = await leaseRow()
      return lease && lease.holder !== before!.holder ? lease : undefined
    }, 10_000, 10)
    const takeoverMs = Date.now() - killedAt
    await Promise.all(requests)
    const byA = [...accepted.values()].filter((n) => n === 'a').length
    console.log(
      `lease takeover after SIGKILL of the holder: ${takeoverMs} ms (lease ${LEASE_MS} ms, poll ${POLL_MS} ms); ` +
        `${accepted.size} of ${MINTS} mints answered 2xx (A ${byA}, B ${accepted.size - byA}), ${conflicts.size} 409 conflict`,
    )
    expect(after.epoch).toBe(before!.epoch + 1)
    expect(takeoverMs).toBeLessThanOrEqual(LEASE_MS + POLL_MS + 1000)
    // A 500 from A was seen once in a clean-clone run (issue 24) and in none of the runs after it: the gateways' logs say why next time.
    expect(refused, refused.length > 0 ? logsOf([a, b]) : undefined).toEqual([])
    // Every mint sent to B was answered, before and after the kill.
    expect(recipients.filter((_, i) => i % 2 === 1).every((r) => accepted.has(r) || conflicts.has(r))).toBe(true)
    // Mints queue at READ COMMITTED (the nonce row's lock orders them): none is refused for a lost race.
    expect(conflicts.size).toBe(0)

    await expectOutboxOnChain()
    expect(await leaseRow()).toEqual(after) // nobody took it back: A is dead
    const senders = (await sql<{ by: string }[]>`SELECT DISTINCT sent_by AS by FROM chain_txs WHERE kind = 'guestbook_mint'`).map((r) => r.by)
    expect(senders).toContain(after.holder)
    expect(senders.every((by) => by === before!.holder || by === after.holder)).toBe(true)
    const balances = await balancesOf(recipients)
    for (const [i, to] of recipients.entries()) {
      if (accepted.has(to)) expect(balances[i], to).toBe(1n)
      else if (conflicts.has(to)) expect(balances[i], to).toBe(0n) // a 409 rolled back: nothing queued, nothing sent
      else expect([0n, 1n]).toContain(balances[i]) // A may have committed it before dying
    }
    // A mint A committed but never answered is in the outbox and on chain all the same; none beyond the rows.
    const [stored] = await sql<{ rows: number }[]>`SELECT count(*)::int AS rows FROM guestbook_mints`
    expect(balances.filter((x) => x === 1n).length).toBe(stored!.rows)
  })

  // Two things in postgres.js 3.4.9 (the newest release) failed this until src/db/pg/ dealt with them:
  // a gateway died of an uncaught `TypeError: Cannot read properties of null (reading 'write')` at
  // connection.js nextWrite (porsager/postgres#1154; driverGuard.ts lets exactly that one pass), and the
  // driver's reconnect backoff (up to 20 s, shared by the pool) held requests instead of answering 503
  // (connect.ts caps it at 1 s).
  test('the postmaster killed (immediate shutdown) during taps, first ref queries and mints: 503 database_unavailable while down, never 500, nothing answered 2xx lost, both gateways serve again by themselves', { timeout: 60_000 }, async () => {
    // B survives the first test; run alone, this test starts it.
    const b = gateways.get('b') ?? (await serve('b'))
    const c = await serve('c')
    const pair = [b, c] as const
    const nameOf = (server: Server) => (server === b ? 'b' : 'c')
    let counter = ((await sql<{ last: number | null }[]>`SELECT max(counter)::int AS last FROM refs WHERE chip_uid = ${DEMO_CHIP}`)[0]!.last ?? 0)

    type Answer = { kind: 'tap' | 'ref' | 'mint'; gateway: string; sentAt: number; answeredAt?: number; status: number; body: string; ref?: string; recipient?: Address }
    const answers: Answer[] = []
    const unqueried: string[] = []
    /** One tap at a time, with the chip's next counter: a refusal can only be the database's, never a counter race. */
    const tap = async (server: Server): Promise<Answer> => {
      const sentAt = Date.now()
      const res = await ask(server, sunTapUrl({ uid: DEMO_CHIP, counter: ++counter, metaKey: ZERO_KEY, fileKey: ZERO_KEY }), { redirect: 'manual' })
      const body = await res.text()
      const ref =
        res.status === 302 ? new URL(res.headers.get('location')!).searchParams.get('serviceRef')! : res.status === 200 ? /data-service-ref="([^"]+)"/.exec(body)?.[1] : undefined
      return { kind: 'tap', gateway: nameOf(server), sentAt, status: res.status, body, ref }
    }
    const queryRef = async (server: Server, ref: string): Promise<Answer> => {
      const sentAt = Date.now()
      const res = await ask(server, `/refs/${ref}`)
      return { kind: 'ref', gateway: nameOf(server), sentAt, status: res.status, body: await res.text(), ref }
    }
    const mintTo = async (server: Server, to: Address): Promise<Answer> => {
      const sentAt = Date.now()
      const res = await mint(server, to)
      return { kind: 'mint', gateway: nameOf(server), sentAt, status: res.status, body: await res.text(), recipient: to }
    }

    // Refs to spend in the burst, made before it (each a 200 or 302 with its serviceRef).
    for (let i = 0; i < 30; i++) {
      const made = await tap(pair[i % 2]!)
      expect([200, 302], made.body).toContain(made.status)
      unqueried.push(made.ref!)
    }

    // The burst: a tap, up to 3 ref queries and up to 3 mints in flight at any time, alternating gateways.
    let running = true
    onTestFinished(() => {
      running = false // a failed assertion must not leave the burst running
    })
    let nextMint = 1000
    let turn = 0
    const inFlight = { tap: 0, ref: 0, mint: 0 }
    const lost: string[] = []
    const pending = new Set<Promise<void>>()
    const launch = (kind: keyof typeof inFlight, send: () => Promise<Answer>) => {
      inFlight[kind]++
      const request = send()
        .then((answer) => {
          answers.push({ ...answer, answeredAt: Date.now() })
          if (answer.kind === 'tap' && answer.ref) unqueried.push(answer.ref)
        })
        .catch((error: Error) => {
          lost.push(`${kind}: ${error.message}`)
        })
        .finally(() => {
          inFlight[kind]--
          pending.delete(request)
        })
      pending.add(request)
    }
    const driver = (async () => {
      while (running) {
        const server = pair[turn++ % 2]!
        if (inFlight.tap === 0) launch('tap', () => tap(server))
        if (inFlight.ref < 3 && unqueried.length > 0) {
          const ref = unqueried.shift()!
          launch('ref', () => queryRef(server, ref))
        }
        if (inFlight.mint < 3) {
          const to = recipient(nextMint++)
          launch('mint', () => mintTo(server, to))
        }
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      await Promise.all([...pending])
    })()

    await until('the burst under way', () => (answers.length >= 30 ? true : undefined), 15_000, 10)
    const answeredBeforeKill = answers.length
    const postmaster = pg!.pid
    signal(postmaster, 'SIGQUIT') // PostgreSQL's immediate shutdown: no checkpoint, crash recovery at the next start
    await until('the postmaster to exit', () => {
      try {
        process.kill(postmaster, 0)
        return undefined
      } catch {
        return true
      }
    }, 10_000, 5)
    const downAt = Date.now()

    // While it is down, each gateway refuses every kind of request with 503, and stays up.
    const probes: { gateway: string; what: string; status: number; error?: string; ms: number }[] = []
    for (let round = 0; round < 2; round++) {
      for (const server of pair) {
        const attempts: [string, () => Promise<Response>][] = [
          ['GET /events', () => api(server, '/events', { signal: AbortSignal.timeout(PROBE_MS) })],
          ['GET /refs', () => ask(server, `/refs/${unqueried[0] ?? 'x'.repeat(21)}`, { signal: AbortSignal.timeout(PROBE_MS) })],
          ['POST /events/mint', () => api(server, '/events/mint', { method: 'POST', body: JSON.stringify({ eventId, recipient: recipient(900 + round) }), signal: AbortSignal.timeout(PROBE_MS) })],
          ['GET /tap', () => ask(server, sunTapUrl({ uid: DEMO_CHIP, counter: counter + 1_000, metaKey: ZERO_KEY, fileKey: ZERO_KEY }), { redirect: 'manual', signal: AbortSignal.timeout(PROBE_MS) })],
        ]
        for (const [what, send] of attempts) {
          const sentAt = Date.now()
          try {
            const res = await send()
            const text = await res.text()
            const error = res.status === 503 ? (JSON.parse(text) as { error: string }).error : text.slice(0, 200)
            probes.push({ gateway: nameOf(server), what, status: res.status, error, ms: Date.now() - sentAt })
          } catch (error) {
            probes.push({ gateway: nameOf(server), what, status: 0, error: `no answer: ${(error as Error).message} (${String((error as Error).cause)})`, ms: Date.now() - sentAt })
          }
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    const downMs = Date.now() - downAt
    const restartAt = Date.now()
    await pg!.restart()
    const restartMs = Date.now() - restartAt

    // Both serve again by themselves: no gateway was restarted.
    const recoveredAt = Date.now()
    const notServing: string[] = []
    for (const server of pair) {
      let last = ''
      try {
        await until(`${nameOf(server)} to serve again`, async () => {
          const res = await api(server, '/events', { signal: AbortSignal.timeout(2_000) }).catch((error: Error) => error)
          last = res instanceof Error ? `${res.message} (${String(res.cause)})` : `${res.status}`
          return last === '200' ? true : undefined
        }, 15_000, 50)
      } catch {
        notServing.push(`${nameOf(server)} (exit ${server.child.exitCode ?? server.child.signalCode}): last answer ${last}`)
      }
    }
    const servingAt = Date.now()
    const recoveryMs = servingAt - recoveredAt
    await new Promise((resolve) => setTimeout(resolve, 1000)) // the burst goes on a while after
    running = false
    await driver
    const after = answers.filter((a) => a.sentAt >= servingAt)

    const count = (pick: (a: Answer) => boolean) => answers.filter(pick).length
    console.log(
      `postmaster killed after ${answeredBeforeKill} answers; down ${downMs} ms, restart (crash recovery) ${restartMs} ms, gateways serving again ${recoveryMs} ms later; ` +
        `${answers.length} answers: ${(['tap', 'ref', 'mint'] as const).map((k) => `${k} ${count((a) => a.kind === k && a.status < 300)} ok/${count((a) => a.kind === k && a.status === 503)} 503/${count((a) => a.kind === k && a.status === 409)} 409`).join(', ')}; ${lost.length} without an answer`,
    )
    // A gateway that died says why on stderr (Node prints the uncaught error and its stack there).
    const crashes = pair.filter((s) => s.child.exitCode !== null || s.child.signalCode !== null).map((s) => `${nameOf(s)} exited ${s.child.exitCode ?? s.child.signalCode}: ${s.stderr().slice(-1500)}`)
    expect.soft(crashes).toEqual([])
    expect.soft(notServing).toEqual([])
    expect.soft(lost).toEqual([])
    expect.soft(probes.filter((p) => p.status !== 503 || p.error !== 'database_unavailable')).toEqual([])
    // Never a 500: a lost database is 503 database_unavailable; a tap is never refused (its counter is always the next).
    const odd = answers.filter((a) => !(a.status < 400 || a.status === 503 || (a.status === 409 && a.kind === 'mint')))
    expect.soft(odd.map((a) => `${a.kind} ${a.gateway} ${a.status}: ${a.body.slice(0, 300)}`)).toEqual([])
    for (const a of answers.filter((a) => a.status === 503)) expect((JSON.parse(a.body) as { error: string }).error).toBe('database_unavailable')
    expect(count((a) => a.status === 503)).toBeGreaterThan(0)
    // Nothing was answered 2xx while the server was down, and the burst after recovery succeeds.
    expect.soft(answers.filter((a) => a.status < 300 && a.answeredAt! >= downAt && a.answeredAt! < restartAt)).toEqual([])
    expect(after.length).toBeGreaterThan(0)
    expect(after.filter((a) => a.status === 503)).toEqual([])

    // Every 2xx is still there after crash recovery: the tap's ref, the first query's OTPs, the mint's row and its badge.
    const tapped = answers.filter((a) => a.kind === 'tap' && a.status < 300).map((a) => a.ref!)
    const storedRefs = new Set((await sql<{ id: string }[]>`SELECT id FROM refs WHERE id IN ${sql(tapped)}`).map((r) => r.id))
    expect(tapped.filter((ref) => !storedRefs.has(ref))).toEqual([])
    const firstQueries = answers.filter((a) => a.kind === 'ref' && a.status === 200 && (JSON.parse(a.body) as { isValidRef: boolean }).isValidRef)
    expect(firstQueries.length).toBeGreaterThan(0)
    for (const query of firstQueries) {
      const body = JSON.parse(query.body) as { otp?: string; linkedToken?: { otp?: string }; proofEvents: { otp?: string }[]; guestbookEvents: { otp?: string }[] }
      const codes = [body.otp, body.linkedToken?.otp, ...body.proofEvents.map((e) => e.otp), ...body.guestbookEvents.map((e) => e.otp)].filter((x) => x !== undefined)
      expect(codes.length).toBeGreaterThan(0)
      const stored = await sql<{ code: string }[]>`SELECT code FROM otps WHERE ref_id = ${query.ref!}`
      expect(stored.map((r) => r.code).sort()).toEqual([...codes].sort())
      const [ref] = await sql<{ consumedAt: number | null }[]>`SELECT consumed_at AS "consumedAt" FROM refs WHERE id = ${query.ref!}`
      expect(ref!.consumedAt).not.toBeNull()
    }
    const minted = answers.filter((a) => a.kind === 'mint' && a.status === 200).map((a) => a.recipient!)
    expect(minted.length).toBeGreaterThan(0)
    const rows = new Set((await sql<{ recipient: string }[]>`SELECT recipient FROM guestbook_mints WHERE event_id = ${eventId}`).map((r) => r.recipient.toLowerCase()))
    expect(minted.filter((to) => !rows.has(to.toLowerCase()))).toEqual([])
    await expectOutboxOnChain(pair)
    expect(await balancesOf(minted)).toEqual(minted.map(() => 1n))
  })
})
