// Issue 2 acceptance: "exactly one winner" must hold across two real server
// processes sharing one data dir, and while the CLI writes to the same store.
// Everything here is real: two `tapgate serve` children, loopback HTTP, one store: the data dir's
// SQLite file, or on PostgreSQL's run (TAPGATE_TEST_BACKEND) one database given to every process.
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ConfigSchema } from '../src/config.js'
import { openPostgresStore, openStore, type PostgresStore, type SqliteStore } from '../src/db/store.js'
import { ALICE, CONTRACT, GUESTBOOK, makeTempDir, metadata, queryRows, seedTeam, tapChip, TEST_BACKEND } from './helpers/gateway.js'
import { cliPath, startServe, stopChild, type Server } from './helpers/processes.js'


const CLI_TIMEOUT_MS = 15_000
const CHIP = '04C0FFEE000001'
const TOKEN_ID = '42'
const REFS_PER_RACE = 10
const LOAD_REFS = 300
const settleMs = 50

type RefBody = {
  uid: string
  isValidRef: boolean
  otp?: string
  linkedToken?: { otp?: string; tokenId: string }
  proofEvents: { otp?: string }[]
  guestbookEvents: { otp?: string }[]
}


// On PostgreSQL's run a database of this file's own (imported only then: the module asks for the run's server).
const database = TEST_BACKEND === 'postgres' ? (await import('./helpers/postgres.js')).testDatabase() : undefined

let dataDir: string
let tokenRowId: number
let raceRefs: string[]
let claimRef: string
let loadRefs: string[]
const servers: Server[] = []
const spawned: ChildProcess[] = []

function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TAPGATE_DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    TAPGATE_DEMO: 'false',
    TAPGATE_RATE_LIMIT_MAX: '100000',
    TAPGATE_LOG_LEVEL: 'warn',
    // Nothing here needs a chain (with no keys for the token's chain, a 2-tap registration reads no
    // nonce: decisions.md, issue 24 point 1), and with a database URL each gateway's embedded anvil
    // would be a chain of its own: refused.
    TAPGATE_EMBEDDED_CHAIN: 'false',
    ...(database ? { TAPGATE_DATABASE_URL: database.url() } : {}),
  }
  // Only the settings above apply; the children run in the data dir, so no ./tapgate.config.json either.
  delete env.TAPGATE_CONFIG
  return env
}

/** A real `tapgate serve` on the shared data dir. */
const startServer = (): Promise<Server> => startServe({ cwd: dataDir, env: childEnv(), track: (child) => spawned.push(child) })
const stop = stopChild

/** Runs a CLI command to completion (bounded), returning its output. */
function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [cliPath, ...args], { cwd: dataDir, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
  spawned.push(child)
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL')
      reject(new Error(`tapgate ${args.join(' ')} did not finish within ${CLI_TIMEOUT_MS} ms\nstderr: ${stderr}`))
    }, CLI_TIMEOUT_MS)
    child.once('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

async function getRef(server: Server, refId: string): Promise<{ status: number; body: RefBody }> {
  const res = await fetch(`${server.url}/refs/${refId}`)
  return { status: res.status, body: (await res.json()) as RefBody }
}

/** Opens `count` keep-alive connections (alternating servers) so bursts leave without TCP handshakes. */
async function warmConnections(count: number) {
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const res = await fetch(`${servers[i % 2]!.url}/health`)
      await res.arrayBuffer()
    }),
  )
}

const signalServers = (signal: NodeJS.Signals) => {
  for (const { child } of servers) if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, signal)
}

/**
 * Sends `count` requests, alternating between the two servers, all in flight at once. Both
 * servers are paused (SIGSTOP) while the burst is written to their sockets and resumed together,
 * so both start on their queue at the same instant and their first requests really race,
 * instead of one server finishing its first request before the other is even scheduled.
 */
async function burst<T>(count: number, send: (server: Server, i: number) => Promise<T>): Promise<T[]> {
  const pausable = process.platform !== 'win32'
  if (pausable) signalServers('SIGSTOP')
  try {
    const pending = Promise.all(Array.from({ length: count }, (_, i) => send(servers[i % 2]!, i)))
    pending.catch(() => {}) // awaited below; this only keeps an early rejection from being reported as unhandled
    // Time for every request to reach the kernel's socket buffers; if it is too short the race is milder, never wrong.
    if (pausable) await new Promise((resolve) => setTimeout(resolve, settleMs))
    if (pausable) signalServers('SIGCONT')
    return await pending
  } finally {
    if (pausable) signalServers('SIGCONT')
  }
}

/** `count` concurrent queries of one ref across both servers. */
const raceRef = (refId: string, count: number) => burst(count, (server) => getRef(server, refId))

const codesOf = (body: RefBody): string[] =>
  [body.otp, body.linkedToken?.otp, ...body.proofEvents.map((e) => e.otp), ...body.guestbookEvents.map((e) => e.otp)].filter(
    (code): code is string => code !== undefined,
  )

/** The store every process here shares: the data dir's SQLite file, or this file's PostgreSQL database. */
const openSharedStore = (): SqliteStore | Promise<PostgresStore> => (database ? openPostgresStore(database.url()) : openStore({ dataDir }))

/** Opens the shared store for one look at it, as a third process would. */
async function withStore<T>(fn: (store: SqliteStore | PostgresStore) => Promise<T>): Promise<T> {
  const store = await openSharedStore()
  try {
    return await fn(store)
  } finally {
    await store.close()
  }
}

// Constant SQL (queryRows), filtered here: no repository lists a ref's codes.
const otpCodesOfRef = (refId: string) =>
  withStore(async (store) =>
    (await queryRows<{ code: string; ref: string }>(store, 'SELECT code, ref_id AS ref FROM otps'))
      .filter((r) => r.ref === refId)
      .map((r) => r.code)
      .sort(),
  )

/** Exactly one 200 response carries isValidRef: true and its codes are exactly the stored ones. */
async function expectOneWinner(refId: string, responses: { status: number; body: RefBody }[]) {
  expect(responses.map((r) => r.status)).toEqual(responses.map(() => 200))
  const winners = responses.filter((r) => r.body.isValidRef)
  expect(winners).toHaveLength(1)
  const winnerCodes = codesOf(winners[0]!.body)
  // A linked token, one active proof event and one guestbook event: three codes.
  expect(winnerCodes).toHaveLength(3)
  for (const loser of responses.filter((r) => !r.body.isValidRef)) {
    expect(loser.body.uid).toBe(CHIP)
    expect(codesOf(loser.body)).toEqual([])
  }
  expect(await otpCodesOfRef(refId)).toEqual([...winnerCodes].sort())
  const consumedAt = await withStore(async (store) => (await store.refs.get(refId))?.consumedAt)
  expect(consumedAt).toEqual(expect.any(Number))
}

beforeAll(async () => {
  dataDir = makeTempDir('tapgate-concurrency-')
  const config = ConfigSchema.parse({ dataDir, demo: false, logLevel: 'silent' })
  const store = await openSharedStore()
  try {
    const seed = { store, config, clock: { now: Date.now() } }
    await seedTeam(seed, {
      name: 'Race team',
      chips: [{ uid: CHIP }],
      tokens: [{ chainId: 31337, contractAddress: CONTRACT, tokenId: TOKEN_ID, chips: [CHIP], metadata: metadata(), twoTapClaim: true }],
      proofEvents: [{ proofEventId: 7, name: 'Launch', chips: [CHIP] }],
      guestbookContracts: [
        {
          name: 'Guests',
          symbol: 'GST',
          chainId: 31337,
          address: GUESTBOOK,
          events: [{ name: 'Opening', tokenId: '1', metadata: metadata(), chips: [CHIP] }],
        },
      ],
    })
    tokenRowId = (await store.tokens.findByChip(CHIP))!.id
    // One tap after another, as the refs' order (race refs, then the claim's, then the load's) is part of the setup.
    const taps = async (n: number) => {
      const refs: string[] = []
      for (let i = 0; i < n; i++) refs.push(await tapChip(seed, CHIP))
      return refs
    }
    raceRefs = await taps(REFS_PER_RACE)
    claimRef = await tapChip(seed, CHIP)
    loadRefs = await taps(LOAD_REFS)
  } finally {
    await store.close()
  }
  servers.push(...(await Promise.all([startServer(), startServer()])))
  // Bursts reuse these sockets; any that closed meanwhile are re-opened by the kernel's backlog even while paused.
  await warmConnections(200)
})

afterAll(async () => {
  await Promise.all(spawned.map(stop))
  for (const child of spawned) expect(child.exitCode !== null || child.signalCode !== null).toBe(true)
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true })
})

describe('two server processes on one data dir', () => {
  test('the two servers are distinct processes on distinct ports', () => {
    expect(servers).toHaveLength(2)
    expect(servers[0]!.child.pid).not.toBe(servers[1]!.child.pid)
    expect(servers[0]!.url).not.toBe(servers[1]!.url)
  })

  test(`200 concurrent first queries of one ref yield exactly one isValidRef: true (${REFS_PER_RACE} refs)`, async () => {
    for (const refId of raceRefs) await expectOneWinner(refId, await raceRef(refId, 200))
    // Neither process logged a warning or an error (pino levels 40+, on stdout) or wrote to stderr.
    for (const server of servers) {
      expect(server.stdout()).not.toMatch(/"level":(40|50|60)/)
      expect(server.stderr()).toBe('')
    }
  })

  test('200 concurrent uses of one PHYGITAL_CLAIM OTP yield exactly one claim registration', async () => {
    const first = await getRef(servers[0]!, claimRef)
    expect(first.body.isValidRef).toBe(true)
    const code = first.body.linkedToken?.otp
    expect(code).toMatch(/^[\w-]{21}$/)

    const responses = await burst(200, async (server) => {
      const res = await fetch(`${server.url}/phygitals/claim-registration/pullable`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-code': code! },
        body: JSON.stringify({ recipient: ALICE }),
      })
      return { status: res.status, body: (await res.json()) as Record<string, unknown> }
    })
    const wins = responses.filter((r) => r.status === 200)
    expect(wins).toHaveLength(1)
    expect(wins[0]!.body).toMatchObject({ recipient: ALICE, linkedToken: { contractAddress: CONTRACT, tokenId: TOKEN_ID, chainId: '31337' } })
    const losers = responses.filter((r) => r.status !== 200)
    expect(losers).toHaveLength(199)
    for (const loser of losers) {
      expect(loser.status).toBe(409)
      expect(loser.body).toMatchObject({ success: false, error: 'otp_used' })
    }

    const rows = await withStore((store) => queryRows(store, 'SELECT token_id AS token, recipient FROM claim_registrations'))
    expect(rows).toEqual([{ token: tokenRowId, recipient: ALICE }])
    const otp = await withStore((store) => store.otps.get(code!))
    expect(otp).toMatchObject({ usedAt: expect.any(Number), usedFor: 'claim-registration' })
  })

  test('a CLI tap while both servers write succeeds, and its ref is valid exactly once across both', async () => {
    // Keep both servers writing (first queries of fresh refs) for as long as the CLI runs.
    let cliDone = false
    const loaded: string[] = []
    const load = (async () => {
      for (const refId of loadRefs) {
        if (cliDone) break
        const pair = await Promise.all([getRef(servers[0]!, refId), getRef(servers[1]!, refId)])
        expect(pair.map((r) => r.status)).toEqual([200, 200])
        expect(pair.filter((r) => r.body.isValidRef)).toHaveLength(1)
        loaded.push(refId)
      }
    })()
    const tap = await runCli(['tap', '--uid', '04:c0:ff:ee:00:00:01']).finally(() => (cliDone = true))
    await load

    expect(tap.stderr).toBe('')
    expect(tap.code).toBe(0)
    const refId = tap.stdout.trim()
    expect(refId).toMatch(/^[\w-]{21}$/)
    expect(loaded.length).toBeGreaterThan(0)

    // The CLI's is the chip's newest tap.
    const logged = (await withStore((store) => store.tapLog.byChip(CHIP))).filter((row) => row.refId === refId)
    expect(logged).toMatchObject([{ chipUid: CHIP, source: 'operator', accepted: 1, authenticated: 0 }])

    await expectOneWinner(refId, await raceRef(refId, 200))
  })
})
