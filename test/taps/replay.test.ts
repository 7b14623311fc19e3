// Issue 3 acceptance: "a replayed URL is rejected however fast it arrives, including two
// gateway processes on one data dir". Two real `tapgate serve` children, loopback HTTP, one
// store (the data dir's SQLite file, or one PostgreSQL database); the same tap URL is fired at both at once while they are paused, then released.
import type { ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ConfigSchema } from '../../src/config.js'
import type { PostgresStore, SqliteStore } from '../../src/db/store.js'
import { loadGatewaySecret } from '../../src/keys/gatewaySecret.js'
import { setChipVerification, upsertChipProfile } from '../../src/profiles/chipProfiles.js'
import { REFUSED_TAP_VERDICT } from '../../src/taps/tapPage.js'
import { backendDatabaseUrl, makeTempDir, openBackendStore, queryRows, seedTeam, sunTapUrl } from '../helpers/gateway.js'
import { startServe, stopChild, type Server } from '../helpers/processes.js'


const META = '0F1E2D3C4B5A69788796A5B4C3D2E1F0'
const FILE = 'A0B1C2D3E4F5061728394A5B6C7D8E9F'
const CHIP = { page: '04C3000000000A', redirect: '04C3000000000B' }
const REDIRECT = 'https://shop.example/landing?from=tap'
const REQUESTS = 100
const settleMs = 50

type TapResponse = { status: number; body: string; location: string | null }

let dataDir: string
/** The test's own connection to the servers' store: it seeds, then reads what they stored. */
let store: SqliteStore | PostgresStore | undefined
const servers: Server[] = []
const spawned: ChildProcess[] = []

function childEnv(): NodeJS.ProcessEnv {
  // Settings from the real environment must not reach the children; only these apply.
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(PORT|HOST|TAPGATE_)/.test(name)))
  const databaseUrl = backendDatabaseUrl()
  return {
    ...env,
    // Gateways on one PostgreSQL database must not each embed a chain (config refuses it); taps need none.
    ...(databaseUrl ? { TAPGATE_DATABASE_URL: databaseUrl, TAPGATE_EMBEDDED_CHAIN: 'false' } : {}),
    TAPGATE_DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    TAPGATE_DEMO: 'false',
    TAPGATE_RATE_LIMIT_MAX: '1000000',
    TAPGATE_LOG_LEVEL: 'warn',
  }
}

/** A real `tapgate serve` on the shared data dir. */
const startServer = (): Promise<Server> => startServe({ cwd: dataDir, env: childEnv(), track: (child) => spawned.push(child) })
const stop = stopChild

const signalServers = (signal: NodeJS.Signals) => {
  for (const { child } of servers) if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, signal)
}

async function getTap(server: Server, pathAndQuery: string): Promise<TapResponse> {
  const res = await fetch(`${server.url}${pathAndQuery}`, { redirect: 'manual' })
  return { status: res.status, body: await res.text(), location: res.headers.get('location') }
}

/** Opens keep-alive connections to both servers so a burst leaves without TCP handshakes. */
async function warmConnections(count: number) {
  await Promise.all(Array.from({ length: count }, async (_, i) => (await fetch(`${servers[i % 2]!.url}/health`)).arrayBuffer()))
}

/**
 * Sends the same tap URL `count` times, alternating servers, all in flight at once: both servers
 * are paused (SIGSTOP) while the requests reach their sockets and resumed together (SIGCONT),
 * so their first requests really race.
 */
async function burst(pathAndQuery: string, count: number): Promise<TapResponse[]> {
  signalServers('SIGSTOP')
  try {
    const pending = Promise.all(Array.from({ length: count }, (_, i) => getTap(servers[i % 2]!, pathAndQuery)))
    pending.catch(() => {}) // awaited below; this only keeps an early rejection from being reported as unhandled
    await new Promise((resolve) => setTimeout(resolve, settleMs))
    signalServers('SIGCONT')
    return await pending
  } finally {
    signalServers('SIGCONT')
  }
}

/** One winner (200 page or 302 redirect), every other response the plain refusal page; the tap log says counter_replay. */
async function expectOneWinner(responses: TapResponse[], chip: string, counter: number, winnerStatus: 200 | 302) {
  const winners = responses.filter((r) => r.status < 400)
  expect(winners.map((r) => r.status)).toEqual([winnerStatus])
  const losers = responses.filter((r) => r.status >= 400)
  expect(losers).toHaveLength(REQUESTS - 1)
  for (const loser of losers) {
    expect(loser.status).toBe(400)
    expect(loser.body).toContain(REFUSED_TAP_VERDICT)
  }
  const refId =
    winnerStatus === 302 ? new URL(winners[0]!.location!).searchParams.get('serviceRef') : /data-service-ref="([\w-]+)"/.exec(winners[0]!.body)?.[1]
  expect(refId).toMatch(/^[\w-]{21}$/)

  const rows = (await store!.tapLog.byChip(chip, 10_000)).filter((r) => r.counter === counter)
  expect(rows).toHaveLength(REQUESTS)
  expect(rows.filter((r) => r.accepted === 1).map(({ accepted, reason, refId }) => ({ accepted, reason, refId }))).toEqual([{ accepted: 1, reason: 'accepted', refId }])
  const replays = rows.filter((r) => r.reason === 'counter_replay')
  expect(replays).toHaveLength(REQUESTS - 1)
  expect([...new Set(replays.map((r) => r.detail))]).toEqual([`counter ${counter} is not above the last accepted counter ${counter}`])
  // chip and counter are this file's constants (queryRows takes no parameters).
  const refs = await queryRows(store!, `SELECT id FROM refs WHERE chip_uid = '${chip}' AND counter = ${counter}`)
  expect(refs).toEqual([{ id: refId }])
  expect((await store!.chips.get(chip))?.lastCounter).toBe(counter)
}

const url = (uid: string, counter: number) => sunTapUrl({ metaKey: META, fileKey: FILE, uid, counter })

beforeAll(async () => {
  dataDir = makeTempDir('tapgate-replay-')
  const config = ConfigSchema.parse({ dataDir, demo: false, logLevel: 'silent' })
  store = await openBackendStore(dataDir)
  // Creates <dataDir>/secret.key, which both servers then load: the profile's keys open in each.
  const secret = loadGatewaySecret({ dataDir })
  const now = Date.now()
  const { teamId } = await seedTeam(
    { store, config, clock: { now } },
    { name: 'Replay team', chips: [{ uid: CHIP.page }, { uid: CHIP.redirect, redirectUrl: REDIRECT }] },
  )
  await upsertChipProfile(store, secret, { teamId, name: 'tags', mode: 'aes', keyScheme: 'static', metaKey: META, fileKey: FILE, now })
  for (const uid of Object.values(CHIP)) await setChipVerification(store, secret, { uid, teamId, profileName: 'tags' })
  servers.push(...(await Promise.all([startServer(), startServer()])))
  await warmConnections(REQUESTS)
})

afterAll(async () => {
  await Promise.all(spawned.map(stop))
  for (const child of spawned) expect(child.exitCode !== null || child.signalCode !== null).toBe(true)
  await store?.close()
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true })
})

describe('a replayed tap URL across two server processes on one data dir', () => {
  test('two distinct processes on distinct ports', () => {
    expect(servers).toHaveLength(2)
    expect(servers[0]!.child.pid).not.toBe(servers[1]!.child.pid)
    expect(servers[0]!.url).not.toBe(servers[1]!.url)
  })

  test(`${REQUESTS} simultaneous copies of one URL: exactly one tap page, ${REQUESTS - 1} × counter_replay (several counters)`, async () => {
    for (const counter of [0, 1, 2, 77, 0xfffffe]) await expectOneWinner(await burst(url(CHIP.page, counter), REQUESTS), CHIP.page, counter, 200)
    for (const server of servers) {
      expect(server.stdout()).not.toMatch(/"level":(40|50|60)/)
      expect(server.stderr()).toBe('')
    }
  })

  test('the same for a chip that redirects: exactly one 302 with serviceRef', async () => {
    for (const counter of [5, 6, 9]) {
      const responses = await burst(url(CHIP.redirect, counter), REQUESTS)
      await expectOneWinner(responses, CHIP.redirect, counter, 302)
      expect(responses.find((r) => r.status === 302)!.location).toMatch(/^https:\/\/shop\.example\/landing\?from=tap&serviceRef=[\w-]{21}$/)
    }
  })

  test('an older counter is refused by either process once a newer one was accepted', async () => {
    const older = url(CHIP.redirect, 7)
    for (const server of servers) {
      const [{ id: before }] = (await queryRows<{ id: number }>(store!, 'SELECT max(id) AS id FROM tap_log')) as [{ id: number }]
      const res = await getTap(server, older)
      expect(res.status).toBe(400)
      const rows = (await store!.tapLog.recent(10)).filter((r) => r.id > before)
      expect(rows.map(({ reason, detail }) => ({ reason, detail }))).toEqual([{ reason: 'counter_replay', detail: 'counter 7 is not above the last accepted counter 9' }])
    }
  })
})
