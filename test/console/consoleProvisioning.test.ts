/*
 * The console's provisioning run on the gateway's own readers (issue 28, part 3), end to end over the
 * real PC/SC stack:
 *
 *   blank virtual NTAG 424 DNA --TCP--> vsmartcard-vpcd --> pcscd --> nfc-pcsc --> the in-process
 *     station of `tapgate serve` --(lent)--> the console's run --> provisionChip (the CLI's) --> SQLite
 *
 * and, once the run has ended, the same reader reads taps again. Two gateways through the bin: one
 * with its in-process station (TAPGATE_STATION=true), one without (503). Needs pcscd, vsmartcard-vpcd
 * and nfc-pcsc; under CI=true a missing part fails, elsewhere the file skips. The cards go into vpcd
 * slot 0 (port 35963), as test/provisioning/pcscProvision.test.ts's: the PC/SC files take turns on
 * pcscd (test/helpers/pcscLock.ts), and this one holds the lock for the whole file (its gateway's
 * station opens every reader, the other files' slots too).
 */
import type { ChildProcess } from 'node:child_process'
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { z } from 'zod'
import type { ConsoleProvisioningResponse } from '../../src/schemas/consoleProvisioning.js'
import { type PcscdProcess, usePcscd } from '../../station/pcsc/pcscdProcess.js'
import { VirtualNtag424 } from '../../station/virtual-card/ntag424.js'
import { insertCard } from '../../station/virtual-card/vpcd.js'
import { lockPcsc } from '../helpers/pcscLock.js'
import { missingForVirtualCards, requireUnderCi } from '../helpers/pcscStack.js'
import { cliPath, collectOutput, type Server, startServe, stopChild } from '../helpers/processes.js'
import { until } from '../helpers/until.js'

const SLOT = { port: 35963, reader: 'Virtual PCD 00 00', other: 'Virtual PCD 00 01' }
const META_KEY = '5ACE7E50AB65D5D51FD5BF5A16B8205B'
const TEMPLATE = 'https://tap.example.com/tap?e={picc}&c={mac}'

const missing = await missingForVirtualCards()
requireUnderCi(missing, "the console's provisioning over PC/SC")

// Fresh UIDs per run: a card someone else leaves in slot 0 cannot pass for ours.
const newUid = () => `04${randomBytes(6).toString('hex').toUpperCase()}`

/** A console answer: the provisioning view, a run, or the API's error shape. */
type Body = Partial<z.infer<typeof ConsoleProvisioningResponse>> & { success: boolean; error?: string; message?: string; errors?: Record<string, string> }
type Answer = { status: number; body: Body }
/** No kept-alive connection: one left idle holds a stopping gateway for its keep-alive timeout (5 s). */
const CLOSE = { connection: 'close' }
type Gateway = { server: Server; dataDir: string; url: string; cookie: string }

describe.skipIf(missing.length > 0)("provisioning from the console on the gateway's own reader (tapgate serve, pcscd, vpcd)", () => {
  const children: ChildProcess[] = []
  const dirs: string[] = []
  let pcscd: PcscdProcess | undefined
  let releasePcsc: (() => void) | undefined
  let a: Gateway
  let off: Gateway
  let teamB: string
  const t0 = performance.now()

  /** `tapgate ARGS --data-dir DIR` through the bin, to its end: its stdout. */
  async function tapgate(args: string[], dataDir: string): Promise<string> {
    const child = spawn(process.execPath, [cliPath, ...args, '--data-dir', dataDir], { cwd: dataDir, env: { PATH: process.env.PATH, TAPGATE_DATA_DIR: dataDir } })
    children.push(child)
    const output = collectOutput(child)
    expect(await output.exited, `tapgate ${args.join(' ')}\n${output.stderr()}`).toEqual({ code: 0, signal: null })
    return output.stdout().trim()
  }

  /** A request as the console's page makes it: the session cookie, and the page's Origin on what changes something. */
  async function api(gw: Pick<Gateway, 'url' | 'cookie'>, method: string, body?: unknown): Promise<Answer> {
    const res = await fetch(`${gw.url}/console/api/provisioning`, {
      method,
      headers: { ...CLOSE, cookie: `tapgate_console=${gw.cookie}`, ...(method === 'GET' ? {} : { origin: gw.url }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    return { status: res.status, body: (await res.json()) as Body }
  }

  /** Signs in with a one-time link (the start banner's, or `tapgate console-link`): the session cookie. */
  async function signIn(url: string, link: string): Promise<string> {
    const res = await fetch(`${url}/console/api/session`, { method: 'POST', headers: { ...CLOSE, origin: url, 'content-type': 'application/json' }, body: JSON.stringify({ link: link.split('#')[1] }) })
    expect(res.status, await res.clone().text()).toBe(200)
    return /^tapgate_console=([^;]*)/.exec(res.headers.getSetCookie()[0]!)![1]!
  }

  /** `tapgate serve` on a fresh data dir (the demo team), signed in to the demo team's console. */
  async function serve(station: boolean): Promise<Gateway> {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tapgate-console-prov-'))
    dirs.push(dataDir)
    const server = await startServe({
      cwd: dataDir,
      env: { PATH: process.env.PATH, TAPGATE_DATA_DIR: dataDir, PORT: '0', TAPGATE_STATION: String(station) },
      track: (child) => children.push(child),
    })
    const link = /Console[^\n]*?:\s+(\S+\/console\/sign-in#\S+)/.exec(server.stdout())![1]!
    return { server, dataDir, url: server.url, cookie: await signIn(server.url, link) }
  }

  /**
   * One placement: the card is inserted into slot 0 until `done` holds, then taken away, and the
   * station has seen it leave (pcscd polls every 400 ms: a card put in again sooner is no new card).
   */
  async function place<T>(card: VirtualNtag424, what: string, done: () => Promise<T | undefined>): Promise<T> {
    const inserted = await insertCard(card, { port: SLOT.port })
    try {
      return await until(what, done, 15_000, 100)
    } finally {
      await inserted.remove()
      await until('the card gone from the reader', async () => {
        const { body } = await api(a, 'GET')
        return body.readers?.some((r) => r.name === SLOT.reader && !r.cardPresent) ? true : undefined
      }, 5_000, 50)
    }
  }

  /** The run's card list once it holds `n` cards. */
  const cardsOn = (n: number) => async () => {
    const { body } = await api(a, 'GET')
    return body.run && body.run.cards.length >= n ? body.run : undefined
  }

  beforeAll(async () => {
    // pcscProvision takes ~60 s, pcscE2e ~30 s: wait for them at worst.
    releasePcsc = await lockPcsc(150_000)
    pcscd = await usePcscd()
    ;[a, off] = await Promise.all([serve(true), serve(false)])
    // A chip profile for the demo team, with its template, and a second team's console.
    const profile = tapgate(['profile', 'create', '--team', '1', '--name', 'tags', '--scheme', 'per_chip', '--meta-key', META_KEY, '--url', TEMPLATE], a.dataDir)
    await tapgate(['team', 'create', '--name', 'Other team'], a.dataDir)
    teamB = await signIn(a.url, await tapgate(['console-link', '--team', '2', '--base-url', a.url], a.dataDir))
    await profile
  }, 180_000)

  afterAll(async () => {
    // Side by side: each gateway's stop takes seconds (its embedded chain's anvil is stopped and saved).
    await Promise.all(children.map(stopChild))
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
    // After the gateways: pcscd (when this file started it) waits for its clients to leave.
    await pcscd?.stop()
    releasePcsc?.()
    console.log(`console provisioning over PC/SC: ${((performance.now() - t0) / 1000).toFixed(1)} s in all`)
  })

  test("the readers are the in-process station's; a run provisions blank cards placed on them, each verified, and ends on Stop; then the reader reads taps again", async () => {
    // The station starts in the background, after the gateway listens.
    const readers = await until('the in-process station\'s readers', async () => (await api(a, 'GET')).body.readers ?? undefined, 15_000, 100)
    expect(readers).toEqual(expect.arrayContaining([{ name: SLOT.reader, cardPresent: false }, { name: SLOT.other, cardPresent: false }]))
    expect((await api(a, 'GET')).body).toMatchObject({ success: true, unavailable: null, run: null })

    // The plan is checked before any card, the CLI's way.
    expect(await api(a, 'POST', { profile: 'nope' })).toMatchObject({ status: 404, body: { error: 'chip_profile_not_found', errors: { profile: expect.any(String) } } })
    expect(await api(a, 'POST', { profile: 'tags', urlTemplate: 'https://tap.example.com/tap' })).toMatchObject({
      status: 400,
      body: { error: 'provisioning_plan_invalid', errors: { urlTemplate: expect.any(String) } },
    })

    const started = await api(a, 'POST', { profile: 'tags', allowUnverified: true })
    expect(started).toMatchObject({ status: 201, body: { run: { profile: 'tags', urlTemplate: TEMPLATE, endedAt: null, cards: [], summary: { provisioned: 0, resumed: 0, refused: 0 } } } })
    const runId = started.body.run!.id
    // One run per gateway; another team sees none of it.
    expect(await api(a, 'POST', { profile: 'tags' })).toMatchObject({ status: 409, body: { error: 'provisioning_busy' } })
    const b = { url: a.url, cookie: teamB }
    expect((await api(b, 'GET')).body).toMatchObject({ readers: null, unavailable: expect.stringContaining("another team's station"), run: null })
    expect(await api(b, 'POST', { profile: 'tags' })).toMatchObject({ status: 409, body: { error: 'provisioning_busy' } })
    expect(await api(b, 'DELETE')).toMatchObject({ status: 404, body: { error: 'provisioning_not_running' } })

    const first = new VirtualNtag424({ uid: newUid(), blank: true })
    const second = new VirtualNtag424({ uid: newUid(), blank: true })
    const t = performance.now()
    await place(first, 'the first card in the run', cardsOn(1))
    await place(second, 'the second card in the run', cardsOn(2))
    const perCard = (performance.now() - t) / 2
    const { body } = await api(a, 'GET')
    expect(body.run).toMatchObject({
      id: runId,
      cards: [
        { uid: first.uid, outcome: 'provisioned', reason: null, message: expect.stringMatching(new RegExp(`^${first.uid} provisioned \\(run \\d+, key version 1, first tap verified at counter 1\\)$`)) },
        { uid: second.uid, outcome: 'provisioned', reason: null, message: expect.stringMatching(/first tap verified at counter 1/) },
      ],
      summary: { provisioned: 2, resumed: 0, refused: 0 },
    })

    const stopped = await api(a, 'DELETE')
    expect(stopped).toMatchObject({ status: 200, body: { run: { id: runId, endedAt: expect.any(String), summary: { provisioned: 2 } } } })
    expect(await api(a, 'DELETE')).toMatchObject({ status: 404, body: { error: 'provisioning_not_running' } })
    // The ended run stays readable for its summary.
    expect((await api(a, 'GET')).body.run).toMatchObject({ id: runId, endedAt: stopped.body.run!.endedAt })

    // The reader is the station's again: the first chip, tapped, is the team's and verifies at counter 2 (the run's
    // own read, as a phone reads it, was 1 and is in the tap log too).
    type Tap = { source: string; accepted: boolean; counter: number | null; stationId: number | null }
    const taps = async () => {
      const res = await fetch(`${a.url}/console/api/taps?uid=${first.uid}`, { headers: { ...CLOSE, cookie: `tapgate_console=${a.cookie}` } })
      const list = ((await res.json()) as { taps: Tap[] }).taps
      return list.some((t) => t.source === 'station') ? list : undefined
    }
    const tapped = await place(first, 'the tap after the run in the tap log', taps)
    expect(tapped).toEqual([
      expect.objectContaining({ source: 'station', accepted: true, counter: 2, stationId: expect.any(Number) }),
      expect.objectContaining({ source: 'phone', accepted: true, counter: 1, stationId: null }),
    ])
    // No key in any answer, nor in a log line of the run.
    expect(JSON.stringify(body) + JSON.stringify(stopped.body)).not.toMatch(/[0-9A-F]{32}/)
    const runLines = a.server.stdout().split('\n').filter((line) => line.includes('provisioning'))
    expect(runLines.length).toBeGreaterThan(3)
    expect(runLines.join('\n')).not.toMatch(/[0-9A-F]{32}/)
    console.log(`console provisioning: ${perCard.toFixed(0)} ms per card (insert → listed provisioned → removed)`)
  }, 60_000)

  test('a gateway without its in-process station (TAPGATE_STATION=false) has no readers: GET says why, POST is 503', async () => {
    expect((await api(off, 'GET')).body).toEqual({
      success: true,
      readers: null,
      unavailable: 'This gateway has no PC/SC readers to provision on: the in-process station is off: station.enabled is false (TAPGATE_STATION)',
      run: null,
    })
    expect(await api(off, 'POST', { profile: 'tags' })).toMatchObject({ status: 503, body: { error: 'readers_unavailable' } })
    expect(await api(off, 'DELETE')).toMatchObject({ status: 404, body: { error: 'provisioning_not_running' } })
    // The Origin check of every console change.
    const res = await fetch(`${off.url}/console/api/provisioning`, { method: 'POST', headers: { ...CLOSE, cookie: `tapgate_console=${off.cookie}`, origin: 'https://evil.example', 'content-type': 'application/json' }, body: '{"profile":"tags"}' })
    expect(res.status).toBe(403)
  })
})
