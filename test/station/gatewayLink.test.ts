import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import type { AddressInfo, Socket } from 'node:net'
import path from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, test } from 'vitest'
import WebSocket from 'ws'
import { buildApp } from '../../src/app.js'
import { ConfigSchema } from '../../src/config.js'
import { openStore, type Store } from '../../src/db/store.js'
import { MAX_IN_FLIGHT_TAPS } from '../../src/routes/stationSocket.js'
import { createStation, revokeStation } from '../../src/stations/stations.js'
import { GatewayLink, LinkUnauthorizedError, type LinkStatus } from '../../station/link/gatewayLink.js'
import { Station, type StationEvents } from '../../station/station.js'
import type { StationTap, TapVerdict } from '../../station/tap.js'
import { VirtualNtag424 } from '../../station/virtual-card/ntag424.js'
import { createVirtualReader, type VirtualReader } from '../../station/virtual-card/virtualReader.js'
import { seedTeam, testDir, type TeamSeed } from '../helpers/gateway.js'
import { cliPath, collectOutput, repoRoot, stopChild } from '../helpers/processes.js'

const seed = JSON.parse(fs.readFileSync(path.join(repoRoot, 'fixtures/taps/seed.json'), 'utf8')) as {
  teams: [TeamSeed & { chipProfiles: { mode: string; metaKey: string; fileKey: string }[] }]
}
const aes = seed.teams[0].chipProfiles.find((p) => p.mode === 'aes')!
const UID_A = '04A1B2C3D4E501'
const UID_B = '04A1B2C3D4E502'
const card = (uid: string) => new VirtualNtag424({ uid, metaKey: aes.metaKey, fileKey: aes.fileKey })

type Gateway = { app: FastifyInstance; store: Store; port: number; url: string; close: () => Promise<void> }

/** A real gateway (the app as `tapgate serve` builds it, without the chain) listening on 127.0.0.1. */
async function startGateway(dataDir: string, port = 0): Promise<Gateway> {
  const config = ConfigSchema.parse({ dataDir, demo: false, logLevel: 'silent', chain: { embedded: false } })
  const store = openStore({ dataDir })
  const app = await buildApp({ config, store })
  await app.listen({ host: '127.0.0.1', port })
  const bound = (app.server.address() as AddressInfo).port
  let closed = false
  return {
    app,
    store,
    port: bound,
    url: `http://127.0.0.1:${bound}`,
    close: async () => {
      if (closed) return
      closed = true
      await app.close()
      await store.close()
    },
  }
}

/** Seeds fixtures/taps/seed.json and creates a station token. */
async function seedGateway(gw: Gateway, dataDir: string): Promise<{ teamId: number; token: string; stationId: number }> {
  const config = ConfigSchema.parse({ dataDir, demo: false, logLevel: 'silent' })
  const { teamId } = await seedTeam({ store: gw.store, config, clock: { now: Date.now() } }, seed.teams[0])
  const { token, stationId } = await gw.store.tx((tx) => createStation(tx, { teamId, name: 'link test', now: Date.now() }))
  return { teamId, token, stationId }
}

/** A seeded gateway on a fresh data dir, closed after the test, and an empty station queue dir. */
async function seededGateway(): Promise<{ dataDir: string; queueDir: string; gw: Gateway; token: string; stationId: number }> {
  const dataDir = testDir()
  const queueDir = path.join(testDir(), 'queue')
  const gw = await startGateway(dataDir)
  cleanups.push(() => gw.close())
  const { token, stationId } = await seedGateway(gw, dataDir)
  return { dataDir, queueDir, gw, token, stationId }
}

function collectingLog() {
  const lines: string[] = []
  const push = (line: string) => void lines.push(line)
  return { lines, log: { info: push, warn: push, error: push } }
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** Places a card and lifts it once the station has read it (its verdict may come much later). */
async function tap(station: Station, reader: VirtualReader, chip: VirtualNtag424): Promise<StationTap> {
  const read = new Promise<StationTap>((resolve, reject) => {
    station.once('read', resolve)
    station.once('failed', ({ error }) => reject(error))
  })
  reader.place(chip)
  const tapRead = await read
  reader.remove()
  return tapRead
}

const queueFiles = (dir: string) => fs.readdirSync(dir).filter((name) => name.endsWith('.json')).sort()

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe('station ↔ gateway over WebSocket', () => {
  test('verdicts come back; taps read while the gateway is down are queued on disk and drain in order once it is back', async () => {
    const seeded = await seededGateway()
    const { dataDir, queueDir, token } = seeded
    let gw = seeded.gw
    const port = gw.port

    const { lines, log } = collectingLog()
    const link = new GatewayLink({ gateway: gw.url, token, queueDir, log, initialBackoffMs: 20, maxBackoffMs: 200 })
    const statuses: LinkStatus[] = []
    link.on('status', (status) => statuses.push(status))
    const reader = createVirtualReader('Virtual NTAG 424 reader')
    const station = new Station({ source: reader, sink: link, log })
    cleanups.push(() => station.close())
    const verdicts: StationEvents['verdict'][0][] = []
    station.on('verdict', (event) => verdicts.push(event))

    const a = card(UID_A)
    const b = card(UID_B)
    // Up: each tap's verdict comes back.
    await tap(station, reader, a)
    await tap(station, reader, a)
    await until('two verdicts', () => verdicts.length === 2)
    expect(verdicts.map((v) => v.verdict)).toEqual([
      { accepted: true, refId: expect.stringMatching(/^[\w-]{21}$/), uid: UID_A, counter: 1, mode: 'aes' },
      { accepted: true, refId: expect.stringMatching(/^[\w-]{21}$/), uid: UID_A, counter: 2, mode: 'aes' },
    ])
    // The console shows the ref's first characters only: a ref is a bearer secret until its first query.
    const refId = (verdicts[1]!.verdict as { refId: string }).refId
    expect(lines).toContain(`Virtual NTAG 424 reader: accepted ${UID_A} counter 2 ref ${refId.slice(0, 4)}…`)
    expect(lines.join('\n')).not.toContain(refId)
    expect(queueFiles(queueDir)).toEqual([])

    // The gateway stops: the link goes down and keeps trying.
    await gw.close()
    await until('the link to go down', () => link.status === 'down')
    const whileDown = [await tap(station, reader, a), await tap(station, reader, b), await tap(station, reader, a)]
    // A duplicate of a queued tap (as if a tap was sent twice): the gateway's counter check must refuse the second.
    const duplicate = link.submit(whileDown[2]!)
    duplicate.catch(() => {}) // awaited below; not unhandled if the test fails first

    // On disk, in order, one file per tap.
    const files = queueFiles(queueDir)
    expect(files).toHaveLength(4)
    const queued = files.map((name) => JSON.parse(fs.readFileSync(path.join(queueDir, name), 'utf8')) as { id: string; tap: StationTap })
    expect(queued.map((q) => q.tap)).toEqual([...whileDown, whileDown[2]])
    expect(queued.map((q) => Number(q.id))).toEqual([3, 4, 5, 6])
    expect(verdicts).toHaveLength(2)
    expect(lines.some((l) => l.includes('gateway link down') && l.includes(queueDir))).toBe(true)

    // Back on the same data dir and port: the queue drains in order.
    gw = await startGateway(dataDir, port)
    const restarted = gw
    cleanups.push(() => restarted.close())
    await until('the queue to drain', () => queueFiles(queueDir).length === 0 && verdicts.length === 5)
    expect(verdicts.slice(2).map((v) => [v.tap.rfUid, v.verdict.accepted && v.verdict.counter])).toEqual([
      [UID_A, 3],
      [UID_B, 1],
      [UID_A, 4],
    ])
    expect(await duplicate).toMatchObject({ accepted: false, reason: 'counter_replay', detail: 'counter 4 is not above the last accepted counter 4' })
    // The gateway saw them in that order (its tap log, oldest first).
    const log2 = (await gw.store.tapLog.recent(10)).reverse()
    expect(log2.map((r) => [r.chipUid, r.counter, r.reason])).toEqual([
      [UID_A, 1, 'accepted'],
      [UID_A, 2, 'accepted'],
      [UID_A, 3, 'accepted'],
      [UID_B, 1, 'accepted'],
      [UID_A, 4, 'accepted'],
      [UID_A, 4, 'counter_replay'],
    ])
    expect(statuses).toEqual(expect.arrayContaining(['up', 'down', 'connecting']))
    expect(lines.some((l) => l.startsWith('gateway link up') && l.includes('sending 4 queued taps'))).toBe(true)
  })

  test('taps still queued when the station stops are sent by the next run', async () => {
    const { queueDir, gw, token } = await seededGateway()
    const reader = createVirtualReader()
    const { log } = collectingLog()
    // A gateway nobody listens on: the tap stays queued.
    const down = new GatewayLink({ gateway: 'http://127.0.0.1:9', token, queueDir, log, initialBackoffMs: 1000 })
    const station = new Station({ source: reader, sink: down, log })
    const read = await tap(station, reader, card(UID_B))
    await station.close()
    expect(queueFiles(queueDir)).toHaveLength(1)

    const next = collectingLog()
    const link = new GatewayLink({ gateway: gw.url, token, queueDir, log: next.log })
    cleanups.push(() => link.close())
    const earlier = await new Promise<{ tap: StationTap; verdict: TapVerdict; earlierRun: boolean }>((resolve) => link.once('verdict', resolve))
    expect(earlier).toMatchObject({ tap: read, earlierRun: true, verdict: { accepted: true, uid: UID_B, counter: 1 } })
    expect(queueFiles(queueDir)).toEqual([])
    expect(next.lines[0]).toContain('1 taps queued by an earlier run')
  })

  test('a bad token: the link reports 401 clearly, stops trying, and keeps the tap', async () => {
    const { queueDir, gw } = await seededGateway()
    let upgrades = 0
    gw.app.server.on('upgrade', () => upgrades++)

    const { lines, log } = collectingLog()
    const link = new GatewayLink({ gateway: gw.url, token: 'tgs_not-a-real-token', queueDir, log, initialBackoffMs: 10, maxBackoffMs: 50 })
    cleanups.push(() => link.close())
    await until('unauthorized', () => link.status === 'unauthorized')
    const errors = lines.filter((l) => l.includes('401'))
    expect(errors).toHaveLength(1)
    expect(errors[0]).toContain('the gateway refused the station token (401 invalid_station_token: The station token is unknown or has been revoked)')
    expect(errors[0]).toContain('Not retrying')

    const tapRead: StationTap = { rfUid: UID_A, url: 'http://127.0.0.1/tap?e=00&c=00', chip: 'ntag424', readerName: 'r', readAt: new Date().toISOString() }
    await expect(link.submit(tapRead)).rejects.toBeInstanceOf(LinkUnauthorizedError)
    // Far longer than the backoff: no second attempt.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(upgrades).toBe(1)
    expect(link.status).toBe('unauthorized')
    expect(queueFiles(queueDir)).toHaveLength(1)
    expect(await gw.store.tapLog.recent()).toEqual([])
  })

  test('a station token revoked while connected closes the socket (4401) before the next tap is verified', async () => {
    const { queueDir, gw, token } = await seededGateway()
    const { lines, log } = collectingLog()
    const link = new GatewayLink({ gateway: gw.url, token, queueDir, log, initialBackoffMs: 10 })
    cleanups.push(() => link.close())
    await until('up', () => link.status === 'up')
    await revokeStation(gw.store, { tokenOrPrefix: token, now: Date.now() })
    const tapRead: StationTap = { rfUid: UID_A, url: card(UID_A).urlAt(1), chip: 'ntag424', readerName: 'r', readAt: new Date().toISOString() }
    await expect(link.submit(tapRead)).rejects.toThrow('the gateway refused the station token (401 invalid_station_token')
    expect(link.status).toBe('unauthorized')
    expect(lines.filter((l) => l.includes('Not retrying'))).toHaveLength(1)
    expect(await gw.store.tapLog.recent()).toEqual([])
  })
})

describe('GET /station/ws', () => {
  async function open(gw: Gateway, headers: Record<string, string>) {
    const ws = new WebSocket(`ws://127.0.0.1:${gw.port}/station/ws`, { headers })
    cleanups.push(async () => ws.terminate())
    return ws
  }

  test('refuses a missing or unknown token with 401 and the API error body, before upgrading', async () => {
    const dataDir = testDir()
    const gw = await startGateway(dataDir)
    cleanups.push(() => gw.close())
    for (const [headers, error] of [
      [{}, 'station_token_missing'],
      [{ 'x-station-token': 'tgs_nope' }, 'invalid_station_token'],
    ] as const) {
      const ws = await open(gw, headers)
      const response = await new Promise<{ status: number; body: string }>((resolve) =>
        ws.on('unexpected-response', (_req, res) => {
          let body = ''
          res.on('data', (c: Buffer) => (body += c.toString()))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
        }),
      )
      ws.on('error', () => {})
      expect(response.status).toBe(401)
      expect(JSON.parse(response.body)).toMatchObject({ success: false, error })
    }
    const other = new WebSocket(`ws://127.0.0.1:${gw.port}/elsewhere`)
    const status = await new Promise<number>((resolve) => other.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)))
    other.on('error', () => {})
    other.terminate()
    expect(status).toBe(404)
  })

  test('is a Fastify route (@fastify/websocket): the app hooks see the upgrade, refused (401) or accepted, and no hand-written upgrade listener remains', async () => {
    const dataDir = testDir()
    const config = ConfigSchema.parse({ dataDir, demo: false, logLevel: 'silent', chain: { embedded: false } })
    const store = openStore({ dataDir })
    const app = await buildApp({ config, store })
    const seen: { url: string; status: number }[] = []
    app.addHook('onResponse', async (request, reply) => void seen.push({ url: request.url, status: reply.statusCode }))
    await app.listen({ host: '127.0.0.1', port: 0 })
    const gw: Gateway = { app, store, port: (app.server.address() as AddressInfo).port, url: '', close: async () => (await app.close(), await store.close()) }
    cleanups.push(() => gw.close())
    const { token } = await seedGateway(gw, dataDir)
    expect(app.hasRoute({ method: 'GET', url: '/station/ws' })).toBe(true)
    // One upgrade listener for the whole app: the plugin's (the kiosk socket shares it).
    expect(app.server.listenerCount('upgrade')).toBe(1)

    const refused = await open(gw, { 'x-station-token': 'tgs_nope' })
    refused.on('error', () => {})
    const status = await new Promise<number>((resolve) => refused.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)))
    expect(status).toBe(401)
    await until('the refusal to reach onResponse', () => seen.length === 1)
    expect(seen[0]).toEqual({ url: '/station/ws', status: 401 })

    const ws = await open(gw, { 'x-station-token': token })
    await new Promise((resolve) => ws.once('open', resolve))
    const answer = new Promise<unknown>((resolve) => ws.once('message', (data: Buffer) => resolve(JSON.parse(data.toString()))))
    ws.send(JSON.stringify({ id: 'one', tap: { rfUid: UID_A, url: card(UID_A).urlAt(1), readerName: 'r' } }))
    expect(await answer).toMatchObject({ id: 'one', verdict: { accepted: true, uid: UID_A, counter: 1 } })
  })

  test('answers { id, verdict } per tap, in order; a bad tap gets validation_failed, a non-JSON frame invalid_message', async () => {
    const { gw, token } = await seededGateway()
    const ws = await open(gw, { 'x-station-token': token })
    await new Promise((resolve) => ws.once('open', resolve))
    const answers: unknown[] = []
    ws.on('message', (data: Buffer) => answers.push(JSON.parse(data.toString())))
    const a = card(UID_A)
    const url1 = a.urlAt(1)
    const base = { rfUid: UID_A, chip: 'ntag424', readerName: 'r', readAt: new Date().toISOString() }
    // Pipelined: verified one after another, in the order sent.
    ws.send(JSON.stringify({ id: 'one', tap: { ...base, url: url1 } }))
    ws.send(JSON.stringify({ id: 'two', tap: { ...base, url: url1 } }))
    ws.send(JSON.stringify({ id: 3, tap: { ...base, rfUid: 'nope', url: url1 } }))
    ws.send('not json')
    await until('four answers', () => answers.length === 4)
    expect(answers).toEqual([
      { id: 'one', verdict: { accepted: true, refId: expect.any(String), uid: UID_A, counter: 1, mode: 'aes' } },
      { id: 'two', verdict: { accepted: false, reason: 'counter_replay', message: expect.any(String), detail: 'counter 1 is not above the last accepted counter 1' } },
      { id: 3, verdict: { accepted: false, reason: 'validation_failed', message: expect.stringContaining('rfUid'), detail: expect.any(String) } },
      { error: 'invalid_message', message: expect.any(String) },
    ])
  })
})

describe('GET /station/ws backpressure', () => {
  test('a station that sends without reading: the gateway stops reading its socket at the in-flight bound, holds at most that many answers, and answers every tap once it reads', async () => {
    const { gw, token } = await seededGateway()
    // The gateway's end of the connection: what it buffers and whether it reads.
    const serverSockets: Socket[] = []
    gw.app.server.on('connection', (socket: Socket) => serverSockets.push(socket))
    const ws = new WebSocket(`ws://127.0.0.1:${gw.port}/station/ws`, { headers: { 'x-station-token': token } })
    cleanups.push(async () => ws.terminate())
    await new Promise((resolve) => ws.once('open', resolve))
    const server = serverSockets.at(-1)!
    const answers: { id: string; verdict: { reason: string } }[] = []
    ws.on('message', (data: Buffer) => answers.push(JSON.parse(data.toString()) as (typeof answers)[number]))
    // The station reads nothing: its socket is not read, so the kernel's buffers fill up (a few MB on loopback).
    ws.pause()

    // Refused taps (an rfUid that is no UID) cost the gateway little, so answers pile up fast; each is ~300 bytes.
    // Sent in batches until the gateway stops reading, however large this machine's socket buffers are.
    const idOf = (i: number) => `tap-${String(i).padStart(6, '0')}-${'x'.repeat(80)}`
    const url = card(UID_A).urlAt(1)
    const answerBytes = 1024 // an answer here is ~300 bytes; generous
    let sent = 0
    let maxBuffered = 0
    // Without a bound the gateway reads on and buffers every answer (megabytes); with one it stops reading.
    const paused = () => {
      maxBuffered = Math.max(maxBuffered, server.writableLength)
      if (maxBuffered > MAX_IN_FLIGHT_TAPS * answerBytes) throw new Error(`the gateway buffered ${maxBuffered} bytes of answers`)
      return server.isPaused() && server.writableLength > 0
    }
    while (!paused() && sent < 400_000) {
      for (const end = sent + 2_000; sent < end; sent++) ws.send(JSON.stringify({ id: idOf(sent), tap: { rfUid: 'not-a-uid', url } }))
      await until('the batch to be sent', () => ws.bufferedAmount === 0 || paused(), 60_000)
    }
    await until('the gateway to stop reading the socket with answers unsent', paused, 60_000)
    expect(server.writableLength).toBeLessThanOrEqual(MAX_IN_FLIGHT_TAPS * answerBytes)
    expect(answers).toHaveLength(0)

    // The station reads again: every tap is answered, in order, and the gateway reads the rest.
    ws.resume()
    await until('every answer', () => answers.length === sent, 60_000)
    expect(answers.map((a) => a.id)).toEqual(Array.from({ length: sent }, (_, i) => idOf(i)))
    expect(new Set(answers.map((a) => a.verdict.reason))).toEqual(new Set(['validation_failed']))
    expect(server.isPaused()).toBe(false)
  }, 150_000)
})

describe('tapgate station (run mode)', () => {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(PORT|HOST|TAPGATE_)/.test(name)))

  function station(args: string[], cwd: string) {
    const child: ChildProcess = spawn(process.execPath, [cliPath, 'station', ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    cleanups.push(() => stopChild(child))
    return { child, ...collectOutput(child) }
  }
  const fixture = (name: string) => path.join(repoRoot, 'fixtures/taps', name)

  test('--replay without a gateway prints each tap as a JSON line and exits 0', async () => {
    const run = station(['--replay', fixture('valid-ntag424.jsonl')], testDir())
    expect(await run.exited).toEqual({ code: 0, signal: null })
    const taps = run.stdout().trim().split('\n').map((line) => JSON.parse(line) as StationTap)
    expect(taps.map((t) => t.rfUid)).toEqual([UID_A, UID_A, UID_B, '04A1B2C3D4E503', UID_A])
    expect(taps[0]).toMatchObject({ chip: 'ntag424', readerName: 'Virtual NTAG 424 reader', url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:8787\/tap\?e=/) })
    expect(run.stderr()).toContain('Virtual NTAG 424 reader: read ntag424 04A1B2C3D4E501')
  })

  test('--replay --gateway --token sends the taps over the WebSocket, logs each verdict, and exits 0; a bad token exits 1', async () => {
    const dataDir = testDir()
    const gw = await startGateway(dataDir)
    cleanups.push(() => gw.close())
    const { token } = await seedGateway(gw, dataDir)
    const cwd = testDir()
    // --no-check: fed like a live station's taps, through the data dir's queue (test/cli/replay.test.ts checks replays).
    const run = station(['--replay', fixture('replayed-tap.jsonl'), '--gateway', gw.url, '--token', token, '--data-dir', cwd, '--no-check'], cwd)
    expect(await run.exited).toEqual({ code: 0, signal: null })
    const lines = run.stdout().split('\n')
    expect(lines.filter((l) => / accepted 04A1B2C3D4E501 counter \d ref /.test(l))).toHaveLength(2)
    expect(lines.filter((l) => l.includes('refused counter_replay (04A1B2C3D4E501): counter 1 is not above the last accepted counter 1'))).toHaveLength(1)
    // The default queue dir is in the data dir, and it is empty again.
    expect(queueFiles(path.join(cwd, 'station-queue'))).toEqual([])

    const bad = station(['--replay', fixture('unknown-chip.jsonl'), '--gateway', gw.url, '--token', 'tgs_wrong', '--queue-dir', path.join(cwd, 'q')], cwd)
    expect(await bad.exited).toEqual({ code: 1, signal: null })
    expect(bad.stdout()).toContain('the gateway refused the station token (401 invalid_station_token')
    expect(queueFiles(path.join(cwd, 'q'))).toHaveLength(1)
  })

  test('SIGINT while taps wait for an unreachable gateway: exits 0 and leaves them queued', async () => {
    const cwd = testDir()
    const queue = path.join(cwd, 'q')
    const run = station(['--replay', fixture('ntag21x.jsonl'), '--gateway', 'http://127.0.0.1:9', '--token', 'tgs_x', '--queue-dir', queue, '--no-check'], cwd)
    await until('three queued taps', () => fs.existsSync(queue) && queueFiles(queue).length === 3)
    run.child.kill('SIGINT')
    expect(await run.exited).toEqual({ code: 0, signal: null })
    expect(queueFiles(queue)).toHaveLength(3)
    expect(run.stdout()).toContain('3 taps wait in the queue dir for the next run')
  })

  test('usage errors exit 2', async () => {
    const cwd = testDir()
    const noGateway = station([], cwd)
    expect(await noGateway.exited).toMatchObject({ code: 2 })
    expect(noGateway.stderr()).toContain('needs --gateway URL and --token')
    const noToken = station(['--gateway', 'http://127.0.0.1:1'], cwd)
    expect(await noToken.exited).toMatchObject({ code: 2 })
    expect(noToken.stderr()).toContain('--gateway needs --token')
  })
})

describe('reader status over the link (issue 10)', () => {
  const READER = 'Virtual NTAG 424 reader'
  const readerRows = async (gw: Gateway, stationId: number) =>
    (await gw.store.stationEvents.after(stationId, 0)).filter((e) => e.kind === 'reader').map((e) => e.data)

  test('sent on connect and on every change, one feed row per change; a card pulled mid-read is a retry tap; after a gateway restart the latest status is sent again, and a change made meanwhile lands', async () => {
    const seeded = await seededGateway()
    const { dataDir, queueDir, token, stationId } = seeded
    let gw = seeded.gw
    const { log } = collectingLog()
    const link = new GatewayLink({ gateway: gw.url, token, queueDir, log, initialBackoffMs: 20, maxBackoffMs: 200 })
    const reader = createVirtualReader(READER)
    const station = new Station({ source: reader, sink: link, log })
    cleanups.push(() => station.close())

    const idle = { readers: [READER], cardPresent: false, pcscd: true }
    await until('the status on connect', async () => (await readerRows(gw, stationId)).length === 1)
    expect(await readerRows(gw, stationId)).toEqual([idle])

    const verdict = new Promise((resolve) => station.once('verdict', resolve))
    await tap(station, reader, card(UID_A))
    await verdict
    await until('card present, then gone', async () => (await readerRows(gw, stationId)).length === 3)
    expect(await readerRows(gw, stationId)).toEqual([idle, { ...idle, cardPresent: true }, idle])

    // Pulled mid-read: nothing submitted, a `retry` tap in the feed with the reader's name.
    const pulledChip = card(UID_A)
    pulledChip.removeAfter(0)
    const removed = new Promise((resolve) => station.once('removed', resolve))
    reader.place(pulledChip)
    await removed
    await until('the pulled card', async () => (await gw.store.stationEvents.after(stationId, 0)).some((e) => e.kind === 'tap' && e.data.state === 'retry'))
    const pulled = (await gw.store.stationEvents.after(stationId, 0)).filter((e) => e.kind === 'tap' && e.data.state === 'retry')
    expect(pulled.map((e) => e.data)).toEqual([{ state: 'retry', uid: null, readerName: READER }])
    expect(await gw.store.tapLog.recent(10)).toHaveLength(1)
    await until('the card gone again', async () => JSON.stringify((await readerRows(gw, stationId)).at(-1)) === JSON.stringify(idle))
    const rowsBefore = (await readerRows(gw, stationId)).length

    // The gateway restarts: the station sends its (unchanged) status again; nothing new is recorded.
    const port = gw.port
    await gw.close()
    await until('down', () => link.status === 'down')
    gw = await startGateway(dataDir, port)
    const second = gw
    cleanups.push(() => second.close())
    await until('up again', () => link.status === 'up')
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(await readerRows(gw, stationId)).toHaveLength(rowsBefore)

    // A change while the gateway is away (the reader unplugged) is sent when it is back; status never goes to the disk queue.
    await gw.close()
    await until('down', () => link.status === 'down')
    await reader.close()
    expect(queueFiles(queueDir)).toEqual([])
    gw = await startGateway(dataDir, port)
    const third = gw
    cleanups.push(() => third.close())
    await until('the reader gone', async () => (await readerRows(gw, stationId)).length === rowsBefore + 1)
    expect((await readerRows(gw, stationId)).at(-1)).toEqual({ readers: [], cardPresent: false, pcscd: true })
  })

  test('an older gateway (no reader-status header on its 101) is never sent status or pulled messages', async () => {
    const { WebSocketServer } = await import('ws')
    const older = new WebSocketServer({ host: '127.0.0.1', port: 0 })
    cleanups.push(() => new Promise<void>((resolve) => older.close(() => resolve())))
    const received: unknown[] = []
    older.on('connection', (ws) => ws.on('message', (data: Buffer) => received.push(JSON.parse(data.toString()))))
    await new Promise((resolve) => older.once('listening', resolve))
    const { log } = collectingLog()
    const link = new GatewayLink({ gateway: `http://127.0.0.1:${(older.address() as AddressInfo).port}`, token: 'tgs_x', queueDir: path.join(testDir(), 'q'), log })
    const reader = createVirtualReader(READER)
    const station = new Station({ source: reader, sink: link, log })
    cleanups.push(() => station.close())
    await until('up', () => link.status === 'up')
    const chip = card(UID_A)
    chip.removeAfter(0)
    const removed = new Promise((resolve) => station.once('removed', resolve))
    reader.place(chip)
    await removed
    await tap(station, reader, card(UID_B))
    await until('the tap', () => received.length >= 1)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(received).toEqual([{ id: expect.any(String), tap: expect.objectContaining({ rfUid: UID_B }) }])
  })
})
