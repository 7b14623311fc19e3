/*
 * End to end over the real PC/SC stack, no mock in the chain:
 *
 *   virtual NTAG 424 DNA --TCP--> vsmartcard-vpcd --> pcscd --> libpcsclite --> nfc-pcsc
 *     --> openPcscReaders --> readTap --> POST /station/taps on a real gateway (SQLite, SUN keys)
 *
 * Needs pcscd and vsmartcard-vpcd (apt) and the optional nfc-pcsc. Under CI=true a missing
 * piece fails the run; elsewhere the suite skips with a message.
 *
 * pcscd is one per machine (fixed socket and pid file): a running one is reused (.ci/run starts
 * one and exports TAPGATE_PCSCD=running); otherwise this file starts one as root and stops it by
 * PID, after the other clients (another test file may share it) have gone, within a bound.
 * The cards go into vpcd slot 0 (port 35963, "Virtual PCD 00 00"); test/station/vpcd.test.ts uses slot 1. The two
 * files take turns on pcscd (test/helpers/pcscLock.ts): a station opening every reader opens the other's slot too.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createStation } from '../../src/stations/stations.js'
import { startInProcessStation } from '../../station/inProcessStation.js'
import { pcscdClients } from '../../station/pcsc/pcscdClients.js'
import { PCSCD_BINARY, PCSCD_SOCKET as SOCKET, usePcscd, type PcscdProcess } from '../../station/pcsc/pcscdProcess.js'
import { openPcscReaders, PcscUnavailableError } from '../../station/pcsc/pcscReaders.js'
import { pcscdReachable } from '../../station/pcscdReachable.js'
import { readTap, type ReadTapReturnType } from '../../station/readTap.js'
import { CardRemovedError, type CardSession } from '../../src/card/cardSession.js'
import type { Reader, ReaderSource } from '../../station/reader.js'
import { VirtualNtag424, type CardExchange, type VirtualNtag424Options } from '../../station/virtual-card/ntag424.js'
import { insertCard, type InsertedCard } from '../../station/virtual-card/vpcd.js'
import { call, createTestGateway, makeTempDir, seedSunChip, seedSunProfile, seedTeam, type TestGateway } from '../helpers/gateway.js'
import { lockPcsc } from '../helpers/pcscLock.js'
import { CI, nfcPcscProblem } from '../helpers/pcscStack.js'
import { exited, repoRoot, stopChild } from '../helpers/processes.js'

const SLOT = { port: 35963, reader: 'Virtual PCD 00 00', other: 'Virtual PCD 00 01' }
const META = '5ACE7E50AB65D5D51FD5BF5A16B8205B'
const FILE = '97D1F3FCC8A6B3A4F1AE6F1E3B4BD5A0'
const TEMPLATE = 'https://tap.example.com/tap?e={picc}&c={mac}'
const TAPS = 20
const isRoot = process.getuid?.() === 0
const hasSs = spawnSync('ss', ['-V']).status === 0
/** A pcscd of the test's own needs a mount namespace (root, CAP_SYS_ADMIN): pcscd's socket and pid file are fixed paths. */
const canUnshare = isRoot && spawnSync('unshare', ['--mount', '--net', '--propagation', 'private', 'true']).status === 0

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const newUid = () => `04${randomBytes(6).toString('hex').toUpperCase()}`

const socketAccepts = async (socket = SOCKET) => (await pcscdReachable({ PCSCLITE_CSOCK_NAME: socket })).ok

const pcscdRunning = await socketAccepts()
const nfcPcsc = await nfcPcscProblem()
const missing = [
  PCSCD_BINARY ? null : 'pcscd (apt-get install pcscd)',
  existsSync('/etc/reader.conf.d/vpcd') ? null : 'vsmartcard-vpcd (apt-get install vsmartcard-vpcd)',
  nfcPcsc,
  pcscdRunning || isRoot ? null : 'a running pcscd (or root, to start one)',
  process.env.TAPGATE_PCSCD === 'running' && !pcscdRunning ? `the pcscd .ci/run started (${SOCKET} does not answer)` : null,
].filter((m) => m !== null)

test('the PC/SC stack for the end-to-end tests is available (required under CI=true)', () => {
  if (!CI && missing.length > 0) {
    console.warn(`skipping the PC/SC end-to-end tests: missing ${missing.join('; ')}`)
    return
  }
  expect(missing).toEqual([])
})

test.skipIf(nfcPcsc !== null)('without pcscd, openPcscReaders says how to start it, and never reaches the pcsclite busy loop', async () => {
  // A socket nobody listens on: pcsclite's constructor would spin on the main thread here, so the adapter must not call it.
  const saved = process.env.PCSCLITE_CSOCK_NAME
  const dir = makeTempDir('tapgate-nopcscd-')
  process.env.PCSCLITE_CSOCK_NAME = path.join(dir, 'pcscd.comm')
  try {
    const error = (await openPcscReaders({ log: console }).catch((e: unknown) => e)) as Error
    expect(error).toBeInstanceOf(PcscUnavailableError)
    expect(error.message).toBe(
      `pcscd is not running (nothing answers at ${dir}/pcscd.comm): start it with \`sudo systemctl enable --now pcscd.socket\` or \`sudo pcscd\`, ` +
        'or install the PC/SC stack: `apt-get install pcscd libpcsclite-dev`, then `npm install` (it builds nfc-pcsc)',
    )
    // What a user sees, whoever prints it: the message, no trace.
    expect(error.stack).toBe(`PcscUnavailableError: ${error.message}`)
  } finally {
    if (saved === undefined) delete process.env.PCSCLITE_CSOCK_NAME
    else process.env.PCSCLITE_CSOCK_NAME = saved
    rmSync(dir, { recursive: true, force: true })
  }
})


/** Stats of a list of milliseconds, for the log. */
function stats(ms: number[]): string {
  const sorted = [...ms].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(0)
  return `median ${at(0.5)} ms, p95 ${at(0.95)} ms, max ${sorted[sorted.length - 1]!.toFixed(0)} ms`
}

/** A chip with another RF UID (FF CA answers `fakeRfUid`) whose NDEF file is what `options` would serve: a copied URL. */
class CopiedChip extends VirtualNtag424 {
  constructor(
    options: VirtualNtag424Options,
    private readonly fakeRfUid: string,
  ) {
    super(options)
  }

  override exchange(command: Uint8Array): CardExchange {
    if (Buffer.from(command).toString('hex').toUpperCase() === 'FFCA000000') return { response: Buffer.from(`${this.fakeRfUid}9000`, 'hex'), leaves: false }
    return super.exchange(command)
  }
}

describe.skipIf(missing.length > 0)('PC/SC end to end: virtual card → vpcd → pcscd → nfc-pcsc → readTap → gateway', () => {
  let pcscd: PcscdProcess | undefined
  let releasePcsc: (() => void) | undefined
  let gw: TestGateway
  let token: string
  let source: ReaderSource
  const logs: string[] = []
  const log = { info: (m: string) => void logs.push(m), warn: (m: string) => void logs.push(`warn: ${m}`) }
  const readers = new Map<string, Reader>()
  const ended = new Set<string>()
  let slot: Reader

  // Fresh UIDs per run: every read is checked against them, so a card someone else puts into slot 0 fails loudly, never passes.
  const UID = newUid()
  const OTHER_UID = newUid()
  // Fixed chip randomness: a copy made with the same options and counter serves the very same URL bytes.
  const random = (n: number) => Buffer.alloc(n, 0x5a)
  const chipOptions = { uid: UID, metaKey: META, fileKey: FILE, url: TEMPLATE, random } satisfies VirtualNtag424Options
  const chip = new VirtualNtag424(chipOptions)

  // Card events of the slot reader, queued until a test takes them.
  const cardQueue: { session: CardSession; at: number }[] = []
  let cardWaiter: (() => void) | null = null
  let cardEvents = 0
  let removedEvents = 0
  let removedWaiter: (() => void) | null = null

  beforeAll(async () => {
    // Waits for the other PC/SC test file, if it runs now (pcscE2e's part takes ~30 s).
    releasePcsc = await lockPcsc(90_000)
    pcscd = await usePcscd()

    gw = await createTestGateway()
    const { teamId } = await seedTeam(gw, { name: 'Kiosk team', chips: [{ uid: UID }, { uid: OTHER_UID }] })
    await seedSunProfile(gw, { teamId, name: 'aes', metaKey: META, fileKey: FILE })
    await seedSunChip(gw, { teamId, uid: UID, profileName: 'aes' })
    await seedSunChip(gw, { teamId, uid: OTHER_UID, profileName: 'aes' })
    token = (await gw.store.tx((tx) => createStation(tx, { teamId, name: 'pcsc e2e', now: gw.clock.now }))).token

    source = await openPcscReaders({ log })
    source.on('error', (e) => logs.push(`source error: ${e.message}`))
    slot = await new Promise<Reader>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no reader "${SLOT.reader}" within 5 s: is vsmartcard-vpcd configured?\n${logs.join('\n')}`)), 5000)
      source.on('reader', (reader) => {
        readers.set(reader.name, reader)
        reader.on('error', (e) => logs.push(`reader error: ${e.message}`))
        reader.on('end', () => ended.add(reader.name))
        if (reader.name !== SLOT.reader) return
        clearTimeout(timer)
        resolve(reader)
      })
    })
    slot.on('card', (session) => {
      cardEvents++
      cardQueue.push({ session, at: performance.now() })
      cardWaiter?.()
    })
    slot.on('cardRemoved', () => {
      removedEvents++
      removedWaiter?.()
    })
  }, 120_000)

  afterAll(async () => {
    await source?.close()
    await gw?.close()
    await pcscd?.stop()
    releasePcsc?.()
  })

  /** The next card event of the slot (within 5 s). */
  async function nextCard(): Promise<{ session: CardSession; at: number }> {
    const until = Date.now() + 5000
    while (cardQueue.length === 0) {
      if (Date.now() > until) throw new Error(`no card event on ${SLOT.reader} within 5 s\n${logs.join('\n')}`)
      await new Promise<void>((resolve) => {
        cardWaiter = resolve
        setTimeout(resolve, 100)
      })
      cardWaiter = null
    }
    return cardQueue.shift()!
  }

  async function cardRemoved(before: number): Promise<void> {
    const until = Date.now() + 5000
    while (removedEvents === before) {
      if (Date.now() > until) throw new Error(`no cardRemoved on ${SLOT.reader} within 5 s`)
      await new Promise<void>((resolve) => {
        removedWaiter = resolve
        setTimeout(resolve, 100)
      })
      removedWaiter = null
    }
  }

  /** One tap as a station does it: insert, the card event, readTap, the gateway; then the card leaves. */
  async function tapWith(card: VirtualNtag424, submit?: (tap: ReadTapReturnType) => Promise<unknown>) {
    const t0 = performance.now()
    const removedBefore = removedEvents
    const inserted: InsertedCard = await insertCard(card, { port: SLOT.port, trace: process.env.DEBUG_APDU === '1' ? console.error : undefined })
    const readAndSubmit = async () => {
      const { session, at } = await nextCard()
      const read: ReadTapReturnType | Error = await readTap(session).catch((error: Error) => error)
      const tUrl = performance.now()
      const verdict = submit && !(read instanceof Error) ? await submit(read) : undefined
      return { read, verdict, insertToCard: at - t0, insertToUrl: tUrl - t0, submitMs: performance.now() - tUrl }
    }
    const outcome = await readAndSubmit().finally(async () => {
      await inserted.remove()
      await cardRemoved(removedBefore)
    })
    return { ...outcome, perTap: performance.now() - t0 }
  }

  const submit = (tap: ReadTapReturnType) =>
    call(gw, {
      method: 'POST',
      url: '/station/taps',
      headers: { 'x-station-token': token },
      payload: { rfUid: tap.rfUid, url: tap.url, readerName: SLOT.reader, readAt: new Date().toISOString() },
    })
  const refCount = () => (gw.store.db.prepare('SELECT COUNT(*) AS n FROM refs').get() as { n: number }).n

  const accepted: { counter: number; url: string; rfUid: string }[] = []

  test('every reader is opened; a card resting on the reader is one card event, not a stream', async () => {
    expect([...readers.keys()]).toEqual(expect.arrayContaining([SLOT.reader, SLOT.other]))
    expect(logs).toEqual(expect.arrayContaining([`reader attached: ${SLOT.reader}`, `reader attached: ${SLOT.other}`]))
    const before = cardEvents
    const removedBefore = removedEvents
    const resting = new VirtualNtag424({ ...chipOptions, uid: OTHER_UID })
    const inserted = await insertCard(resting, { port: SLOT.port })
    const { session } = await nextCard()
    expect(session.atr).toBe('3B8180018080')
    // Several pcscd polls (every 400 ms) while the card rests.
    await sleep(1600)
    expect(cardEvents - before).toBe(1)
    await inserted.remove()
    await cardRemoved(removedBefore)
    await sleep(500)
    expect(removedEvents - removedBefore).toBe(1)
    expect(cardEvents - before).toBe(1)
    // The session of a card that left refuses to talk to the next one.
    await expect(session.transmit(Buffer.from('FFCA000000', 'hex'))).rejects.toBeInstanceOf(CardRemovedError)
  })

  test(`${TAPS} taps: each is read over PC/SC and verified by the gateway into its own ref`, async () => {
    const insertToCard: number[] = []
    const insertToUrl: number[] = []
    const submitMs: number[] = []
    const perTap: number[] = []
    for (let i = 1; i <= TAPS; i++) {
      const tap = await tapWith(chip, submit)
      if (tap.read instanceof Error) throw tap.read
      expect(tap.read).toEqual({ rfUid: UID, url: chip.lastUrl!.url, chip: 'ntag424' })
      expect(tap.verdict).toMatchObject({ status: 200, body: { success: true, uid: UID, counter: chip.lastUrl!.counter, mode: 'aes', authenticated: true } })
      accepted.push({ counter: chip.lastUrl!.counter, url: tap.read.url, rfUid: tap.read.rfUid })
      insertToCard.push(tap.insertToCard)
      insertToUrl.push(tap.insertToUrl)
      submitMs.push(tap.submitMs)
      perTap.push(tap.perTap)
    }
    expect(accepted.map((a) => a.counter)).toEqual(Array.from({ length: TAPS }, (_, i) => i + 1))
    expect(refCount()).toBe(TAPS)
    expect((await gw.store.chips.get(UID))!.lastCounter).toBe(TAPS)
    console.log(
      [
        `PC/SC e2e, ${TAPS} taps through vpcd/pcscd/nfc-pcsc:`,
        `  insert → card event: ${stats(insertToCard)}`,
        `  insert → URL read:   ${stats(insertToUrl)}`,
        `  gateway verdict:     ${stats(submitMs)}`,
        `  per tap (insert → verdict → card removed seen): ${stats(perTap)}`,
      ].join('\n'),
    )
  }, 120_000)

  test('a replayed tap is refused (counter_replay): the same tap re-sent, and a clone serving a recorded URL', async () => {
    const last = accepted.at(-1)!
    const again = await submit({ rfUid: last.rfUid, url: last.url, chip: 'ntag424' })
    expect(again).toMatchObject({ status: 409, body: { success: false, error: 'counter_replay' } })
    // A clone with the same UID whose NDEF file is the one read at tap 5: identical bytes over PC/SC.
    const recorded = accepted[4]!
    const clone = new VirtualNtag424({ ...chipOptions, counter: recorded.counter - 1 })
    const tap = await tapWith(clone, submit)
    expect(tap.read).toEqual({ rfUid: UID, url: recorded.url, chip: 'ntag424' })
    expect(tap.verdict).toMatchObject({ status: 409, body: { success: false, error: 'counter_replay' } })
    expect(refCount()).toBe(TAPS)
  })

  test('a copied URL on a chip with another RF UID is refused (uid_mismatch)', async () => {
    const recorded = accepted.at(-1)!
    const copy = new CopiedChip({ ...chipOptions, counter: recorded.counter - 1 }, OTHER_UID)
    const tap = await tapWith(copy, submit)
    expect(tap.read).toEqual({ rfUid: OTHER_UID, url: recorded.url, chip: 'ntag424' })
    expect(tap.verdict).toMatchObject({ status: 403, body: { success: false, error: 'uid_mismatch' } })
    expect(refCount()).toBe(TAPS)
  })

  test('a card removed mid-read: CardRemovedError at the station, no ref; the next tap verifies', async () => {
    const logBefore = (await gw.store.tapLog.recent()).length
    for (const answered of [1, 2]) {
      chip.removeAfter(answered) // NLEN only, or NLEN and the first chunk
      let submitted = false
      const tap = await tapWith(chip, async () => (submitted = true))
      expect(tap.read).toBeInstanceOf(CardRemovedError)
      expect((tap.read as Error).message).toBe('card removed during read, tap again')
      expect(submitted).toBe(false)
    }
    expect(refCount()).toBe(TAPS)
    expect((await gw.store.tapLog.recent()).length).toBe(logBefore)
    // The chip counted both interrupted reads; the gateway never saw them, and the next tap is simply newer.
    const tap = await tapWith(chip, submit)
    expect(tap.verdict).toMatchObject({ status: 200, body: { success: true, counter: TAPS + 3 } })
    expect(refCount()).toBe(TAPS + 1)
  })

  test('readerFilter: only readers whose name contains it; close() resolves with them closed', async () => {
    const filteredLogs: string[] = []
    const filtered = await openPcscReaders({ readerFilter: 'pcd 00 01', log: { info: (m) => void filteredLogs.push(m), warn: (m) => void filteredLogs.push(m) } })
    const names: string[] = []
    const ends: string[] = []
    filtered.on('reader', (r) => {
      names.push(r.name)
      r.on('end', () => ends.push(r.name))
    })
    const until = Date.now() + 5000
    while (!filteredLogs.some((l) => l.startsWith('ignoring reader')) || names.length === 0) {
      if (Date.now() > until) throw new Error(`readers did not show up:\n${filteredLogs.join('\n')}`)
      await sleep(20)
    }
    expect(names).toEqual([SLOT.other])
    expect(filteredLogs).toContain(`ignoring reader "${SLOT.reader}": its name does not contain "pcd 00 01"`)
    await filtered.close()
    expect(ends).toEqual([SLOT.other])
  })

  test.each([
    { filter: undefined, attached: [SLOT.reader, SLOT.other] },
    // The reader left out is closed as soon as it shows up: the case where pcsclite could leave a handle open.
    { filter: 'pcd 00 01', attached: [SLOT.other] },
    // One retry: twice in CI (two sessions, ~1 run in 8), under load from the other worker's process-spawning tests,
    // pcsclite's status thread of the reader the filter leaves out did not end for over 10 s after close ("did not
    // confirm it closed within 3 s"). It is in the native layer; a second failure in a row still fails the run.
  ])('a station process (readerFilter $filter) closes every reader on SIGINT and exits by itself', { retry: 1 }, async ({ filter, attached }) => {
    const script = [
      `const { openPcscReaders } = await import(${JSON.stringify(path.join(repoRoot, 'station/pcsc/pcscReaders.ts'))})`,
      `const source = await openPcscReaders({ readerFilter: ${JSON.stringify(filter)}, log: { info: (m) => console.log(m), warn: (m) => console.log("warn: " + m) } })`,
      'source.on("reader", (r) => r.on("end", () => console.log("end: " + r.name)))',
      'process.once("SIGINT", async () => { await source.close(); console.log("closed") })',
    ].join('\n')
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()))
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()))
    try {
      const until = Date.now() + 10_000
      while (!attached.every((name) => out.includes(`reader attached: ${name}`))) {
        if (Date.now() > until || child.exitCode !== null) throw new Error(`the station process did not attach its readers:\n${out}`)
        await sleep(20)
      }
      if (hasSs) expect(pcscdClientsOf([process.pid])).toContain(child.pid)
      child.kill('SIGINT')
      // No process.exit in the script: it ends only once nothing (no reader thread, no pcscd watch) holds the loop.
      // Bounded well above a normal exit (~0.2 s): a CI run once missed a 5 s bound, with no output to tell why.
      expect(await exited(child, 10_000), `the station process did not exit within 10 s of SIGINT:\n${out}`).toBe(true)
      expect({ code: child.exitCode, out }).toMatchObject({ code: 0, out: expect.stringContaining('closed') })
      for (const name of attached) expect(out).toContain(`end: ${name}`)
      expect(out).not.toMatch(/warn|Error/)
      expect(pcscdClientsOf([process.pid])).not.toContain(child.pid)
    } finally {
      await stopChild(child)
    }
  })

  test('close() resolves once every reader has ended; the source stays quiet about the cancelled watch', async () => {
    await source.close()
    expect(ended).toEqual(new Set(readers.keys()))
    await sleep(100)
    expect(logs.filter((l) => /error|warn/.test(l))).toEqual([])
  })

  test('the in-process station over PC/SC reports to its feed: its reader, a card present and gone, a card pulled mid-read, its reader gone on close', async () => {
    // After the shared source closed: this station's reader is the only client watching the slot.
    const started = await startInProcessStation({
      app: gw.app,
      store: gw.store,
      config: gw.config,
      openReaders: (stationLog) => openPcscReaders({ readerFilter: SLOT.reader, log: stationLog }),
    })
    expect(started).not.toBeNull()
    const { station, stationId } = started!
    const readerRows = async () => (await gw.store.stationEvents.after(stationId, 0)).filter((e) => e.kind === 'reader').map((e) => e.data)
    const last = async () => JSON.stringify((await readerRows()).at(-1))
    const waitFor = async (what: string, check: () => Promise<boolean>) => {
      const end = Date.now() + 5000
      while (!(await check())) {
        if (Date.now() > end) throw new Error(`no ${what} within 5 s: ${JSON.stringify(await readerRows())}\n${logs.join('\n')}`)
        await sleep(20)
      }
    }
    const idle = { readers: [SLOT.reader], cardPresent: false, pcscd: true }
    try {
      await waitFor('reader row', async () => await last() === JSON.stringify(idle))
      const verdict = new Promise((resolve) => station.once('verdict', resolve))
      const inserted = await insertCard(chip, { port: SLOT.port })
      await waitFor('card present', async () => await last() === JSON.stringify({ ...idle, cardPresent: true }))
      await verdict
      await inserted.remove()
      await waitFor('card gone', async () => await last() === JSON.stringify(idle))

      chip.removeAfter(1)
      const removed = new Promise((resolve) => station.once('removed', resolve))
      const pulled = await insertCard(chip, { port: SLOT.port })
      await removed
      await pulled.remove()
      const retry = (await gw.store.stationEvents.after(stationId, 0)).filter((e) => e.kind === 'tap' && e.data.state === 'retry')
      expect(retry.map((e) => e.data)).toEqual([{ state: 'retry', uid: null, readerName: SLOT.reader }])
      await waitFor('card gone after the pull', async () => await last() === JSON.stringify(idle))
    } finally {
      await started!.close()
    }
    expect((await readerRows()).at(-1)).toEqual({ readers: [], cardPresent: false, pcscd: true })
  })

  test('closing a reader from its own cardRemoved handler (inside the status callback of pcsclite) neither hangs nor leaks', async () => {
    const own = await openPcscReaders({ readerFilter: SLOT.reader, log })
    const reader = await new Promise<Reader>((resolve) => own.on('reader', resolve))
    const closed = new Promise<void>((resolve) => reader.on('cardRemoved', () => void reader.close().then(resolve)))
    const endSeen = new Promise<void>((resolve) => reader.on('end', resolve))
    const session = new Promise<CardSession>((resolve) => reader.on('card', resolve))
    const inserted = await insertCard(new VirtualNtag424({ ...chipOptions, uid: OTHER_UID }), { port: SLOT.port })
    expect(await readTap(await session)).toMatchObject({ rfUid: OTHER_UID })
    await inserted.remove()
    await closed
    await endSeen
    await own.close()
  })
})

/**
 * pcscd in private mount and network namespaces whose /run/pcscd is `runDir`: its socket appears
 * at runDir/pcscd.comm for clients that set PCSCLITE_CSOCK_NAME, its vpcd ports clash with no one
 * (not even another run of this file), and stopping it disturbs nobody.
 */
function startPrivatePcscd(runDir: string, confDir: string): ChildProcess {
  // unshare and sh exec: the child's PID is pcscd's.
  const script = 'mkdir -p /run/pcscd && mount --bind "$0" /run/pcscd && exec "$1" --foreground -c "$2"'
  return spawn('unshare', ['--mount', '--net', '--propagation', 'private', 'sh', '-c', script, runDir, PCSCD_BINARY!, confDir], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
}

describe.skipIf(missing.length > 0)('PC/SC: pcscd going away and coming back', () => {
  test('readers are dropped and added again with a log line; the station keeps watching, reports pcscd lost and back, and still exits on SIGINT', async () => {
    if (!canUnshare) {
      console.warn('skipping the pcscd restart test: it needs root and unshare --mount for a private pcscd')
      return
    }
    const dir = makeTempDir('tapgate-pcscd-')
    const runDir = path.join(dir, 'run')
    const confDir = path.join(dir, 'conf')
    mkdirSync(runDir)
    mkdirSync(confDir)
    const libpath = /^LIBPATH\s+(\S+)/m.exec(readFileSync('/etc/reader.conf.d/vpcd', 'utf8'))?.[1] ?? '/usr/lib/pcsc/drivers/serial/libifdvpcd.so'
    // No card goes in: the vpcd readers only have to exist (ports 36000/36001 in its own network namespace).
    writeFileSync(path.join(confDir, 'vpcd'), `FRIENDLYNAME "Private PCD"\nDEVICENAME /dev/null:0x8CA0\nLIBPATH ${libpath}\nCHANNELID 0x8CA0\n`)
    const socket = path.join(runDir, 'pcscd.comm')
    let pcscd: ChildProcess | null = null
    let station: ChildProcess | null = null
    let out = ''
    const until = async (what: string, done: () => boolean | Promise<boolean>, ms = 10_000) => {
      const end = Date.now() + ms
      while (!(await done())) {
        if (Date.now() > end) throw new Error(`${what} within ${ms} ms\n${out}`)
        await sleep(20)
      }
    }
    const count = (line: string) => out.split('\n').filter((l) => l === line).length
    try {
      pcscd = startPrivatePcscd(runDir, confDir)
      await until('the private pcscd did not answer', () => socketAccepts(socket))
      const script = [
        // Both modules loaded first: the station must listen from the moment the readers open, or
        // a reader (or pcscd) it was never told about could go away before it is even built.
        `const { openPcscReaders } = await import(${JSON.stringify(path.join(repoRoot, 'station/pcsc/pcscReaders.ts'))})`,
        `const { Station } = await import(${JSON.stringify(path.join(repoRoot, 'station/station.ts'))})`,
        'const source = await openPcscReaders({ log: { info: (m) => console.log(m), warn: (m) => console.log("warn: " + m) } })',
        'source.on("error", (e) => console.log("error: " + e.message))',
        // The station's status, as it reports it to the gateway (its own log lines are left out: they repeat the source's).
        'const quiet = { info() {}, warn() {}, error() {} }',
        'const station = new Station({ source, sink: null, log: quiet })',
        'station.on("status", (s) => console.log("status: " + JSON.stringify(s)))',
        // A heartbeat: the event loop must keep turning while pcscd is away.
        'const beat = setInterval(() => console.log("tick"), 100)',
        'process.once("SIGINT", async () => { clearInterval(beat); await station.close(); console.log("closed") })',
      ].join('\n')
      station = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: repoRoot,
        env: { ...process.env, PCSCLITE_CSOCK_NAME: socket },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      station.stdout!.on('data', (c: Buffer) => (out += c.toString()))
      station.stderr!.on('data', (c: Buffer) => (out += c.toString()))
      await until('the station did not attach the private readers', () => count('reader attached: Private PCD 00 00') === 1)
      // Only the private pcscd's readers: the machine's are behind another socket.
      expect(out).not.toContain('Virtual PCD')
      // The station has taken both readers (its status says so) before pcscd goes away.
      const both = ['Private PCD 00 00', 'Private PCD 00 01']
      const up = `status: ${JSON.stringify({ readers: both, cardPresent: false, pcscd: true })}`
      await until('the station did not report both readers', () => count(up) === 1)

      await stopChild(pcscd)
      await until('the readers were not dropped', () => count('reader removed: Private PCD 00 00') === 1 && count('reader removed: Private PCD 00 01') === 1)
      // The adapter's line may follow the readers' removal lines by a moment. It comes from the watch's error, a
      // reader's "Invalid handle", or the socket probe (once a second), whichever is first: in one CI run only the
      // readers failed and nothing else, before the probe.
      await until('the station did not report the lost daemon', () => /^error: lost the PC\/SC daemon \(.*\); retrying every 1 s$/m.test(out), 5_000)
      // Down for a few retries. pcsclite's constructor would spin on the main thread without pcscd: the adapter probes first.
      const ticks = count('tick')
      await sleep(2500)
      // 25 at 100 ms; a spinning main thread gives 0 or 1. Loose, for a loaded CI machine.
      expect(count('tick') - ticks).toBeGreaterThan(5)

      expect(out.match(/lost the PC\/SC daemon/g)).toHaveLength(1)
      const lost = `status: ${JSON.stringify({ readers: [], cardPresent: false, pcscd: false })}`
      await until('the station did not report pcscd lost', () => count(lost) === 1, 5_000)
      pcscd = startPrivatePcscd(runDir, confDir)
      await until('the readers did not come back', () => count('reader attached: Private PCD 00 00') === 2 && count('reader attached: Private PCD 00 01') === 2)
      expect(out).toContain('the PC/SC daemon answers again: watching readers')
      await until('the station did not report pcscd back with its readers', () => count(up) === 2, 5_000)

      station.kill('SIGINT')
      expect(await exited(station, 5000)).toBe(true)
      expect({ code: station.exitCode, closed: out.includes('closed') }).toEqual({ code: 0, closed: true })
    } finally {
      if (station) await stopChild(station)
      if (pcscd) await stopChild(pcscd)
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

/** pcscdClients, with no `ss` counted as no clients. */
function pcscdClientsOf(except: number[]): number[] {
  return pcscdClients(except, SOCKET) ?? []
}
