/**
 * The station's tap path, end to end and in parts. One run, bounded (~2 min at most).
 *
 *   npm run bench:station
 *   BENCH_TAPS=50 BENCH_GATEWAY_TAPS=5000 BENCH_FIXTURE_ROUNDS=100 npm run bench:station
 *   BENCH_VPCD_PORT=35963 npm run bench:station    (vpcd slot 0, "Virtual PCD 00 00"; default slot 1)
 *
 * 1. The virtual NTAG 424 DNA through the real PC/SC stack: card --TCP--> vsmartcard-vpcd -->
 *    pcscd --> nfc-pcsc --> openPcscReaders --> Station --> readTap --> in-process gateway
 *    (createInProcessSink: the verification of POST /station/taps). BENCH_TAPS taps (default 30,
 *    after one warm-up tap), each timed from the card's insertion (the vpcd TCP connect) to the
 *    verified ref, split into: the wait until the reader reports the card (pcscd's poll, then its
 *    power cycle, ATR and connect over vpcd), reader I/O (readTap: the APDUs) and gateway work
 *    (sink.submit: SUN verification, counter check and the ref committed to SQLite).
 *    pcscd is one per machine: a running one is used; otherwise, as root, this starts
 *    `pcscd --foreground` and stops it by PID at the end. Without pcscd, vpcd or nfc-pcsc this part
 *    is skipped with a line saying why.
 * 2. Gateway work alone, no PC/SC: (a) BENCH_GATEWAY_TAPS taps (default 2,000, after 60 warm-up
 *    taps) of three chips of fixtures/taps/seed.json round-robin (two AES, one LRP), every tap a fresh
 *    counter: read first from the in-process virtual reader (no latency) with their APDUs recorded,
 *    then replayed through Station + in-process sink on one gateway, so that generating the SUN
 *    messages (the card's work) is not in the process while the gateway is timed; (b) the committed
 *    fixture fixtures/taps/valid-ntag424.jsonl replayed BENCH_FIXTURE_ROUNDS times (default 40), each
 *    round on a fresh gateway (new data dir), since its counters can be accepted only once.
 *    Median, p95 and p99 of sink.submit against the target p99 < 2 ms, and why the taps above 2 ms
 *    were slow (a WAL checkpoint in their commit, a GC pause, waiting for a core, or their own CPU).
 * 3. The per-APDU round trip over pcscd/vpcd (from part 1), beside the in-process reader's.
 *
 * The gateway is built in process as test/helpers/gateway.ts does: openStore on a temp dir,
 * buildApp with chain.embedded false (no anvil), seed.json imported with importData (plus part 1's
 * chip, a fresh UID per run under the seed's AES profile). It logs at info into a discarding
 * stream, so the one pino line per tap is part of the work measured, as in a running gateway.
 *
 * Target (../shared/notes/targets.md): gateway work per tap, p99 < 2 ms. A bench reports; it never
 * fails the build (exit code 0 unless it could not run). Everything it starts is stopped by PID
 * and every temp dir removed at the end, also on error, on the time bound or on Ctrl-C.
 */
import { randomBytes } from 'node:crypto'
import { EventEmitter } from 'node:events'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PerformanceObserver } from 'node:perf_hooks'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { ConfigSchema } from '../src/config.js'
import { openStore, type SqliteStore } from '../src/db/store.js'
import { importData, parseImportFile } from '../src/importer/importData.js'
import { loadGatewaySecret } from '../src/keys/gatewaySecret.js'
import { FixtureReader, FixtureReaderSource } from '../station/fixtures/fixtureReader.js'
import { readFixtureFile } from '../station/fixtures/format.js'
import { createInProcessSink } from '../station/link/inProcessSink.js'
import { pcscdClients } from '../station/pcsc/pcscdClients.js'
import { PCSCD_BINARY, usePcscd, type PcscdProcess } from '../station/pcsc/pcscdProcess.js'
import { pcscdReachable } from '../station/pcscdReachable.js'
import { readTap, type ReadTapReturnType } from '../station/readTap.js'
import { CardRemovedError, type CardSession } from '../src/card/cardSession.js'
import type { Reader, ReaderEvents, ReaderSource } from '../station/reader.js'
import { Station, type StationEvents, type StationLog } from '../station/station.js'
import type { StationTap, TapSink, TapVerdict } from '../station/tap.js'
import { VirtualNtag424 } from '../station/virtual-card/ntag424.js'
import { createVirtualReader } from '../station/virtual-card/virtualReader.js'
import { insertCard, type InsertedCard } from '../station/virtual-card/vpcd.js'
import { createCleanups } from './cleanups.js'
import { positiveEnv } from './env.js'

const TAPS = positiveEnv('BENCH_TAPS', 30)
const GATEWAY_TAPS = positiveEnv('BENCH_GATEWAY_TAPS', 2000)
const FIXTURE_ROUNDS = positiveEnv('BENCH_FIXTURE_ROUNDS', 40)
/**
 * vpcd slot 1 by default: test/station/pcscE2e.test.ts takes any card in slot 0 for its own (test/station/vpcd.test.ts
 * waits for its own UID in slot 1). Still, pcscd is one per machine: run the bench apart from test/station, as another
 * client's APDUs to the card in the slot interleave with the station's (seen: READ BINARY answered 6985).
 */
const VPCD_PORT = positiveEnv('BENCH_VPCD_PORT', 35964)
/** vpcd's first slot listens on 35963 ("Virtual PCD 00 00"), the next on 35964 ("… 00 01"). */
const SLOT_READER = `Virtual PCD 00 ${String(VPCD_PORT - 35963).padStart(2, '0')}`
const TARGET_P99_MS = 2
const GATEWAY_WARMUP = 60
/** Bounds: the whole run (cleanup included) and each wait inside it. */
const RUN_TIMEOUT_MS = 115_000
const PCSC_PART_BUDGET_MS = 60_000
const TAP_TIMEOUT_MS = 10_000
const PCSCD_START_TIMEOUT_MS = 5_000
/** Before stopping a pcscd it started, how long the bench waits for other clients of it to leave. */
const PCSCD_SHARE_WAIT_MS = 15_000

const root = fileURLToPath(new URL('..', import.meta.url))
const tapsDir = path.join(root, 'fixtures/taps')

type SeedProfile = { name: string; mode: 'aes' | 'lrp'; metaKey: string; fileKey: string }
type Seed = { teams: [{ name: string; chipProfiles: SeedProfile[]; chips: { uid: string; kind: string; profile?: string }[] }] }
const seed = JSON.parse(fs.readFileSync(path.join(tapsDir, 'seed.json'), 'utf8')) as Seed
const profileOf = (mode: 'aes' | 'lrp') => seed.teams[0].chipProfiles.find((p) => p.mode === mode)!
const AES = profileOf('aes')


const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const quiet: StationLog = { info: () => {}, warn: () => {}, error: () => {} }

// ---------------------------------------------------------------- cleanup: everything started is undone, by PID

const { onCleanup, cleanup, abort } = createCleanups('bench/station.ts')

// ---------------------------------------------------------------- statistics

/** Nearest-rank percentile of an ascending list. */
function pct(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!
}
const ascending = (ms: number[]) => [...ms].sort((a, b) => a - b)
const msText = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2))

/** A table indented by 3: numbers right-aligned, the first column and a trailing note column left-aligned. */
function printTable(rows: string[][], { note = false } = {}): void {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)))
  const last = widths.length - 1
  for (const [i, row] of rows.entries()) {
    const cells = row.map((cell, c) => (c === 0 || (note && c === last) ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
    console.log(`   ${cells.join('  ').trimEnd()}`)
    if (i === 0) console.log(`   ${widths.map((w) => '-'.repeat(w)).join('  ')}`)
  }
}

// ---------------------------------------------------------------- gateway in process

type BenchGateway = { app: FastifyInstance; store: SqliteStore; teamId: number; sink: TapSink; dataDir: string; close: () => Promise<void> }

/** Discards pino's lines (they are still formatted: that is part of a tap's work in a real gateway). */
const devNull = () =>
  new Writable({
    write(_chunk, _encoding, callback) {
      callback()
    },
  })

/**
 * A gateway in this process on a fresh temp data dir: seed.json's team (and `extraChips`) imported,
 * no embedded chain, and the in-process sink for the team. Registered for cleanup.
 */
async function openGateway(extraChips: Seed['teams'][0]['chips'] = [], { backgroundCheckpoints = true } = {}): Promise<BenchGateway> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tapgate-bench-station-'))
  let store: SqliteStore | undefined
  let app: FastifyInstance | undefined
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await app?.close()
    await store?.close()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
  onCleanup(`closing the gateway on ${dataDir}`, close)
  const config = ConfigSchema.parse({ dataDir, demo: false, logLevel: 'info', chain: { embedded: false } })
  // As `tapgate serve` opens it: WAL checkpoints in a worker thread (part 2a also times SQLite's default).
  store = openStore({ dataDir, backgroundCheckpoints })
  const secret = loadGatewaySecret({ dataDir, secretHex: config.secret })
  const doc = structuredClone(seed)
  doc.teams[0].chips.push(...extraChips)
  const summary = await importData(store, parseImportFile(doc), { config, now: Date.now(), secret })
  app = await buildApp({ config, store, logStream: devNull() })
  await app.ready()
  const { keyring, now } = app.services
  const teamId = summary.teams[0]!.id
  const sink = createInProcessSink({ store, keyring, now, teamId, log: app.log })
  return { app, store, teamId, sink, dataDir, close }
}

/** One submit: wall ms, this process's CPU ms over it, when it started, and whether a WAL checkpoint ran in its commit. */
type Sample = { ms: number; cpu: number; at: number; mode: string; checkpoint: boolean }

/** GC pauses seen by a PerformanceObserver, in performance.now() time. */
const gcPauses: { start: number; end: number }[] = []
const gcObserver = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcPauses.push({ start: e.startTime, end: e.startTime + e.duration })
})

/**
 * The WAL's checkpoint sequence number (WAL header bytes 12–15): it moves when a writer restarts the
 * WAL, i.e. in the first commit after a completed checkpoint, which ran in the commit before.
 */
function walSequence(dataDir: string): number | null {
  let fd: number | undefined
  try {
    fd = fs.openSync(path.join(dataDir, 'tapgate.sqlite-wal'), 'r')
    const header = Buffer.alloc(16)
    return fs.readSync(fd, header, 0, 16, 0) === 16 ? header.readUInt32BE(12) : null
  } catch {
    return null
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/**
 * The sink, with each submit timed: wall time from the call to the verdict (verification, counter,
 * the ref's commit), and this process's CPU time over the same span (nothing else runs meanwhile
 * in parts 2a and 2b), which tells our work from time the OS gave to other processes.
 */
function timedSink(inner: TapSink, record: (tap: StationTap, sample: Sample, verdict: TapVerdict | null) => void): TapSink {
  return {
    async submit(tap) {
      const cpu = process.cpuUsage()
      const started = performance.now()
      let verdict: TapVerdict | null = null
      try {
        verdict = await inner.submit(tap)
        return verdict
      } finally {
        const ms = performance.now() - started
        const used = process.cpuUsage(cpu)
        record(tap, { ms, cpu: (used.user + used.system) / 1000, at: started, mode: verdict?.accepted ? verdict.mode : 'refused', checkpoint: false }, verdict)
      }
    },
    close: () => inner.close(),
  }
}

/** A CardSession whose transmits are timed into `apdus`. */
function timedSession(session: CardSession, apdus: number[]): CardSession {
  return {
    readerName: session.readerName,
    atr: session.atr,
    async transmit(command) {
      const started = performance.now()
      try {
        return await session.transmit(command)
      } finally {
        apdus.push(performance.now() - started)
      }
    },
  }
}

type Outcome = { kind: 'verdict'; tap: StationTap; verdict: TapVerdict } | { kind: 'removed'; readerName: string } | { kind: 'failed'; readerName: string; error: Error }

/** The station's next outcome for which `mine` holds (a verdict, a removal, a failure), or null after `timeoutMs`. */
function nextOutcome(station: Station, mine: (o: Outcome) => boolean, timeoutMs: number): Promise<Outcome | null> {
  return new Promise((resolve) => {
    const done = (outcome: Outcome | null) => {
      clearTimeout(timer)
      station.off('verdict', onVerdict)
      station.off('removed', onRemoved)
      station.off('failed', onFailed)
      resolve(outcome)
    }
    const offer = (o: Outcome) => mine(o) && done(o)
    const onVerdict = (e: StationEvents['verdict'][0]) => offer({ kind: 'verdict', ...e })
    const onRemoved = (e: StationEvents['removed'][0]) => offer({ kind: 'removed', ...e })
    const onFailed = (e: StationEvents['failed'][0]) => offer({ kind: 'failed', readerName: e.readerName, error: e.error })
    const timer = setTimeout(() => done(null), timeoutMs)
    station.on('verdict', onVerdict)
    station.on('removed', onRemoved)
    station.on('failed', onFailed)
  })
}

const describeOutcome = (o: Outcome | null) =>
  o === null
    ? 'no outcome in time'
    : o.kind === 'verdict'
      ? o.verdict.accepted
        ? `accepted (counter ${o.verdict.counter})`
        : `refused: ${o.verdict.reason} ${o.verdict.message}`
      : o.kind === 'removed'
        ? 'card removed during read'
        : `failed: ${o.error.message}`

// ---------------------------------------------------------------- part 1: the real PC/SC stack

type PcscTapTiming = {
  /** insertCard called: the TCP connect to vpcd. */
  t0: number
  /** pcscd's first message to the card (ATR request or power control): it noticed the card. */
  seen: number | null
  /** The station's readTap started: the reader reported the card. */
  card: number | null
  readMs: number | null
  apdus: number[]
  submitMs: number | null
  /** The verdict event: the ref is committed and known to the station. */
  verdictAt: number | null
}

type PcscResult =
  | { skipped: string }
  | { taps: PcscTapTiming[]; failures: string[]; apduCount: number; startedPcscd: boolean; pcscdNote: string }

/** Why the PC/SC part cannot run here, or null. Checked before nfc-pcsc is loaded (pcsclite blocks without pcscd). */
async function pcscMissing(): Promise<string | null> {
  if (!PCSCD_BINARY) return 'pcscd is not installed (apt-get install pcscd vsmartcard-vpcd libpcsclite-dev)'
  if (!fs.existsSync('/etc/reader.conf.d/vpcd')) return 'vsmartcard-vpcd is not installed (apt-get install vsmartcard-vpcd): no virtual reader to insert the card into'
  const specifier = 'nfc-pcsc'
  try {
    await import(specifier)
  } catch (error) {
    return `nfc-pcsc cannot be loaded (${(error as Error).message.split('\n')[0]}): apt-get install libpcsclite-dev, then npm install`
  }
  return null
}

/** Makes sure a pcscd answers: the running one, or one started here (as root). */
async function ensurePcscd(): Promise<{ ok: true; started: boolean; note: string } | { ok: false; why: string }> {
  const reachable = await pcscdReachable()
  if (reachable.ok) return { ok: true, started: false, note: 'pcscd already running: used as it is' }
  if (process.getuid?.() !== 0) return { ok: false, why: `${reachable.why}; not root, so this bench cannot start one` }
  const started = performance.now()
  let pcscd: PcscdProcess
  try {
    pcscd = await usePcscd({ startTimeoutMs: PCSCD_START_TIMEOUT_MS, shareWaitMs: PCSCD_SHARE_WAIT_MS })
  } catch (error) {
    return { ok: false, why: (error as Error).message.trim().split('\n').slice(0, 4).join(' | ') }
  }
  const ms = performance.now() - started
  onCleanup(`stopping pcscd (pid ${pcscd.pid})`, async () => {
    const others = await pcscd.stop()
    if (others.length > 0) console.error(`stopped our pcscd (pid ${pcscd.pid}) while processes ${others.join(', ')} still used it (waited ${PCSCD_SHARE_WAIT_MS / 1000} s)`)
  })
  if (!pcscd.started) return { ok: true, started: false, note: 'a pcscd started elsewhere at the same time is used (ours exited)' }
  return { ok: true, started: true, note: `started pcscd --foreground (pid ${pcscd.pid}; socket ready in ${ms.toFixed(0)} ms), stopped by PID at the end` }
}

async function pcscPart(deadline: number): Promise<PcscResult> {
  const missing = await pcscMissing()
  if (missing) return { skipped: missing }
  const pcscd = await ensurePcscd()
  if (!pcscd.ok) return { skipped: pcscd.why }

  // A fresh UID per run: a card someone else puts into the same slot is never taken for ours.
  const uid = `04${randomBytes(6).toString('hex').toUpperCase()}`
  const card = new VirtualNtag424({ uid, metaKey: AES.metaKey, fileKey: AES.fileKey })
  const gw = await openGateway([{ uid, kind: 'ntag424', profile: AES.name }])

  let current: PcscTapTiming | null = null
  const timedRead = async (session: CardSession): Promise<ReadTapReturnType> => {
    const rec = current
    const started = performance.now()
    const apdus: number[] = []
    const read = await readTap(timedSession(session, apdus))
    if (rec && read.rfUid === uid) Object.assign(rec, { card: started, readMs: performance.now() - started, apdus })
    return read
  }
  const sink = timedSink(gw.sink, (tap, { ms }) => {
    if (current && tap.rfUid === uid) current.submitMs = ms
  })

  const others = pcscdClients([process.pid])
  const sharing = others && others.length > 0 ? `; other pcscd clients (pids ${others.join(', ')}): their APDUs to a card in this slot would interleave with the station's` : ''
  const { openPcscReaders } = await import('../station/pcsc/pcscReaders.js')
  const logs: string[] = []
  const pcscLog = { info: (m: string) => void logs.push(m), warn: (m: string) => void logs.push(`warn: ${m}`) }
  const source: ReaderSource = await openPcscReaders({ readerFilter: SLOT_READER, log: pcscLog })
  let slot: Reader | null = null
  const slotFound = new Promise<Reader | null>((resolve) => {
    const timer = setTimeout(() => resolve(null), 5000)
    source.on('reader', (reader) => {
      if (reader.name !== SLOT_READER) return
      clearTimeout(timer)
      resolve(reader)
    })
  })
  const station = new Station({ source, sink, log: { ...quiet, warn: (l) => void logs.push(`warn: ${l}`), error: (l) => void logs.push(`error: ${l}`) }, readTap: timedRead })
  onCleanup('closing the PC/SC station (readers, nfc-pcsc)', () => station.close())
  slot = await slotFound
  if (!slot) return { skipped: `no reader "${SLOT_READER}" within 5 s (is vsmartcard-vpcd configured for port ${VPCD_PORT}?): ${logs.join(' | ')}` }
  const reader = slot
  let removedEvents = 0
  reader.on('cardRemoved', () => void removedEvents++)

  const taps: PcscTapTiming[] = []
  const failures: string[] = []
  const mine = (o: Outcome) => (o.kind === 'verdict' ? o.tap.rfUid === uid : o.readerName === SLOT_READER)
  let inserted: InsertedCard | null = null
  onCleanup('taking the virtual card out of vpcd', async () => void (await inserted?.remove()))

  for (let i = 0; i <= TAPS; i++) {
    if (Date.now() > deadline) {
      failures.push(`stopped after ${taps.length} taps: the PC/SC part's time budget (${PCSC_PART_BUDGET_MS / 1000} s) ran out`)
      break
    }
    const rec: PcscTapTiming = { t0: 0, seen: null, card: null, readMs: null, apdus: [], submitMs: null, verdictAt: null }
    current = rec
    const outcome = nextOutcome(station, mine, TAP_TIMEOUT_MS)
    const removedBefore = removedEvents
    rec.t0 = performance.now()
    try {
      inserted = await insertCard(card, { port: VPCD_PORT })
    } catch (error) {
      failures.push(`tap ${i}: ${(error as Error).message}`)
      break
    }
    void inserted.seen.then(() => (rec.seen ??= performance.now()))
    const o = await outcome
    rec.verdictAt = performance.now()
    current = null
    await inserted.remove()
    inserted = null
    // The next tap must be a new placement: wait until the reader has seen this card go.
    const until = Date.now() + 5000
    while (removedEvents === removedBefore && Date.now() < until) await sleep(5)
    const accepted = o?.kind === 'verdict' && o.verdict.accepted && rec.readMs !== null && rec.submitMs !== null
    if (!accepted) {
      failures.push(`tap ${i}: ${describeOutcome(o)}`)
      if (failures.length >= 3) {
        failures.push(`stopped after 3 failed taps; reader log: ${logs.slice(-5).join(' | ')}`)
        break
      }
      continue
    }
    if (i > 0) taps.push(rec) // tap 0 warms up the gateway (keyring, statements) and nfc-pcsc
  }
  await station.close()
  await gw.close()
  const apduCount = taps[0]?.apdus.length ?? 0
  return { taps, failures, apduCount, startedPcscd: pcscd.started, pcscdNote: pcscd.note + sharing }
}

// ---------------------------------------------------------------- part 2a: in-process virtual reader

type RecordedTap = { atr: string; exchanges: { command: Buffer; response: Buffer }[]; uid: string; counter: number; mode: string }
/** Part 2a's taps, read once from the in-process virtual reader: the APDU times and how long it took. */
type Recording = { apdus: number[]; seconds: number }
type GatewayRun = {
  samples: Sample[]
  failures: string[]
  seconds: number
  /** Checkpoints in a worker: what it did (null: SQLite's auto-checkpoint, inside commits). */
  worker: { checkpoints: number; frames: number } | null
}

/**
 * A Reader that answers with recorded responses: the card's side costs nothing (no SUN generation,
 * no cipher objects to collect) while the gateway is timed. Placed and lifted by hand.
 */
class ReplayReader implements Reader {
  readonly name = 'Replay of virtual NTAG 424 taps (bench)'
  private readonly emitter = new EventEmitter()
  private placement = 0

  on<E extends keyof ReaderEvents>(event: E, listener: ReaderEvents[E]): this {
    this.emitter.on(event, listener as (...args: unknown[]) => void)
    return this
  }

  off<E extends keyof ReaderEvents>(event: E, listener: ReaderEvents[E]): this {
    this.emitter.off(event, listener as (...args: unknown[]) => void)
    return this
  }

  place(tap: RecordedTap): void {
    const placement = ++this.placement
    let step = 0
    const session: CardSession = {
      readerName: this.name,
      atr: tap.atr,
      transmit: async (command) => {
        // Answered on a later turn, like the in-process virtual reader without latency.
        await new Promise((resolve) => setImmediate(resolve))
        if (placement !== this.placement) throw new CardRemovedError()
        const recorded = tap.exchanges[step++]
        if (!recorded || !recorded.command.equals(command)) throw new Error(`replay: step ${step} was ${recorded?.command.toString('hex')}, the station sent ${command.toString('hex')}`)
        return recorded.response
      },
    }
    this.emitter.emit('card', session)
  }

  remove(): void {
    this.placement++
    this.emitter.emit('cardRemoved')
  }

  async close(): Promise<void> {
    this.remove()
    this.emitter.emit('end')
  }
}

/** Reads `n` taps of seed.json's three NTAG 424 chips round-robin from the in-process virtual reader (no latency), recording every APDU. */
async function recordVirtualTaps(n: number, apdus: number[]): Promise<RecordedTap[]> {
  const chips = seed.teams[0].chips.filter((c) => c.kind === 'ntag424')
  const cards = chips.map((c) => {
    const profile = seed.teams[0].chipProfiles.find((p) => p.name === c.profile)!
    return new VirtualNtag424({ uid: c.uid, mode: profile.mode, metaKey: profile.metaKey, fileKey: profile.fileKey })
  })
  const reader = createVirtualReader('Virtual NTAG 424 reader (bench)')
  const taps: RecordedTap[] = []
  for (let i = 0; i < n; i++) {
    const card = cards[i % cards.length]!
    const session = reader.place(card)
    const exchanges: RecordedTap['exchanges'] = []
    await readTap({
      readerName: session.readerName,
      atr: session.atr,
      async transmit(command) {
        const started = performance.now()
        const response = await session.transmit(command)
        apdus.push(performance.now() - started)
        exchanges.push({ command: Buffer.from(command), response })
        return response
      },
    })
    reader.remove()
    taps.push({ atr: session.atr, exchanges, uid: card.uid, counter: card.counter, mode: card.mode })
  }
  await reader.close()
  return taps
}

async function virtualTapsPart(taps: RecordedTap[], deadline: number, backgroundCheckpoints: boolean): Promise<GatewayRun> {
  const run: GatewayRun = { samples: [], failures: [], seconds: 0, worker: null }
  const gw = await openGateway([], { backgroundCheckpoints })
  await gw.store.checkpointer?.ready()
  const reader = new ReplayReader()
  let counting = false
  let last: Sample | null = null
  const sink = timedSink(gw.sink, (_tap, sample, verdict) => {
    last = sample
    if (counting && verdict?.accepted) run.samples.push(sample)
  })
  const station = new Station({ source: reader, sink, log: quiet })
  onCleanup('closing the replay station', () => station.close())
  const started = performance.now()
  let previous: Sample | null = null
  let sequence = walSequence(gw.dataDir)
  for (const [i, tap] of taps.entries()) {
    if (Date.now() > deadline) {
      run.failures.push(`stopped after ${run.samples.length} counted taps: time budget reached`)
      break
    }
    counting = i >= GATEWAY_WARMUP
    last = null
    const outcome = nextOutcome(station, () => true, TAP_TIMEOUT_MS)
    reader.place(tap)
    const o = await outcome
    reader.remove()
    // Read between taps, outside the timed span: a restarted WAL means the previous tap's commit ran a checkpoint
    // (with the worker, the WAL restarts too, but its commit only rewinds the WAL: nothing to flag).
    const now = walSequence(gw.dataDir)
    if (now !== sequence && previous && !backgroundCheckpoints) previous.checkpoint = true
    sequence = now
    // Set by the sink's callback during the tap (TypeScript cannot see that assignment).
    previous = last as Sample | null
    const ok = o?.kind === 'verdict' && o.verdict.accepted && o.verdict.uid === tap.uid && o.verdict.counter === tap.counter && o.verdict.mode === tap.mode
    if (!ok) {
      run.failures.push(`tap ${i} (${tap.uid}, counter ${tap.counter}): ${describeOutcome(o)}`)
      if (run.failures.length >= 3) break
    }
  }
  run.seconds = (performance.now() - started) / 1000
  run.worker = gw.store.checkpointer?.stats() ?? null
  await station.close()
  await gw.close()
  return run
}

// ---------------------------------------------------------------- part 2b: committed fixture, fresh gateway per round

type FixtureRun = { first: Sample[]; rest: Sample[]; openGatewayMs: number[]; failures: string[]; tapsPerRound: number; rounds: number }

async function fixturePart(deadline: number): Promise<FixtureRun> {
  const file = path.join(tapsDir, 'valid-ntag424.jsonl')
  const fixture = readFixtureFile(file)
  const expected = fixture.taps.map((t) => t.expect.verdict)
  const run: FixtureRun = { first: [], rest: [], openGatewayMs: [], failures: [], tapsPerRound: fixture.taps.length, rounds: 0 }
  for (let round = 0; round < FIXTURE_ROUNDS; round++) {
    if (Date.now() > deadline) {
      run.failures.push(`stopped after ${round} rounds: time budget reached`)
      break
    }
    const opening = performance.now()
    const gw = await openGateway()
    // As under tapgate serve, whose checkpoint worker started at boot, long before the first tap.
    await gw.store.checkpointer?.ready()
    run.openGatewayMs.push(performance.now() - opening)
    const samples: Sample[] = []
    const verdicts: TapVerdict[] = []
    const sink = timedSink(gw.sink, (_tap, sample, verdict) => {
      samples.push(sample)
      if (verdict) verdicts.push(verdict)
    })
    const source = new FixtureReaderSource(new FixtureReader(fixture, { source: path.basename(file) }))
    const failed: string[] = []
    const station = new Station({ source, sink, log: quiet })
    station.on('failed', ({ error }) => failed.push(error.message))
    await source.reader.done
    await station.idle()
    await station.close()
    await gw.close()
    run.rounds++
    const got = verdicts.map((v) => (v.accepted ? { accepted: true, uid: v.uid, counter: v.counter, mode: v.mode } : { accepted: false, reason: v.reason }))
    if (failed.length > 0 || JSON.stringify(got) !== JSON.stringify(expected)) {
      run.failures.push(`round ${round + 1}: verdicts ${JSON.stringify(got)} differ from the fixture's ${JSON.stringify(expected)}${failed.length ? `; ${failed.join('; ')}` : ''}`)
      if (run.failures.length >= 3) break
      continue
    }
    run.first.push(samples[0]!)
    run.rest.push(...samples.slice(1))
  }
  return run
}

// ---------------------------------------------------------------- report

function statRow(name: string, ms: number[], note = ''): string[] {
  const s = ascending(ms)
  return [name, msText(pct(s, 0.5)), msText(pct(s, 0.95)), msText(s[s.length - 1]!), note]
}

function printPcsc(result: PcscResult): number[] {
  console.log(`\n1. Virtual card through the real PC/SC stack: vpcd port ${VPCD_PORT} ("${SLOT_READER}") → pcscd → nfc-pcsc → openPcscReaders → Station → readTap → in-process gateway`)
  if ('skipped' in result) {
    console.log(`   SKIPPED: ${result.skipped}`)
    return []
  }
  console.log(`   ${result.pcscdNote}`)
  for (const f of result.failures) console.log(`   problem: ${f}`)
  const taps = result.taps
  if (taps.length === 0) {
    console.log('   no tap completed: nothing to report')
    return []
  }
  const cardWait = taps.map((t) => t.card! - t.t0)
  const seenWait = taps.filter((t) => t.seen !== null && t.seen <= t.card!)
  const rest = taps.map((t) => t.verdictAt! - t.card! - t.readMs! - t.submitMs!)
  console.log(`   ${taps.length} taps after 1 warm-up tap, each accepted into its own ref; ${result.apduCount} APDUs per tap. ms per tap:`)
  const rows = [
    ['', 'median', 'p95', 'max', ''],
    statRow('wait until the reader reports the card', cardWait, 'insert (vpcd TCP connect) → readTap starts'),
    ...(seenWait.length === taps.length
      ? [
          statRow('  of which: until pcscd polls the card', seenWait.map((t) => t.seen! - t.t0), "pcscd's 400 ms poll of the reader"),
          statRow('  of which: power cycle, ATR, connect', seenWait.map((t) => t.card! - t.seen!), 'pcscd ↔ vpcd control frames, SCardConnect'),
        ]
      : []),
    statRow(`reader I/O (readTap, ${result.apduCount} APDUs)`, taps.map((t) => t.readMs!), 'the APDUs over pcscd/vpcd: see 3.'),
    statRow('gateway work (sink.submit)', taps.map((t) => t.submitMs!), 'SUN verification + counter + ref committed'),
    statRow('station in between', rest, 'the rest of insert → verdict'),
    statRow('total: insert → verified ref', taps.map((t) => t.verdictAt! - t.t0), ''),
  ]
  printTable(rows, { note: true })
  return taps.flatMap((t) => t.apdus)
}

/** Why a tap took ≥ the target: a WAL checkpoint in its commit, a GC pause, the process waiting for a core, or our own CPU work. */
function tailCauses(samples: Sample[]): string {
  const slow = samples.filter((x) => x.ms >= TARGET_P99_MS)
  if (slow.length === 0) return `none of ${samples.length} taps took ≥ ${TARGET_P99_MS} ms`
  const causes = new Map<string, number>()
  for (const x of slow) {
    const gc = gcPauses.some((g) => g.start < x.at + x.ms && g.end > x.at)
    const cause = x.checkpoint
      ? 'a WAL checkpoint in its commit'
      : gc
        ? 'a GC pause'
        : x.cpu < x.ms / 2
          ? 'waiting for a core (CPU < half of wall)'
          : `its own CPU work (${x.mode.toUpperCase()})`
    causes.set(cause, (causes.get(cause) ?? 0) + 1)
  }
  const parts = [...causes].sort((a, b) => b[1] - a[1]).map(([cause, n]) => `${n} ${cause}`)
  return `${slow.length} of ${samples.length} taps took ≥ ${TARGET_P99_MS} ms: ${parts.join(', ')}`
}

function printGateway(run: GatewayRun, inCommit: GatewayRun, recording: Recording, fixture: FixtureRun): void {
  console.log('\n2. Gateway work alone, no PC/SC: sink.submit (SUN verification, counter check, ref + tap log committed to SQLite, pino line)')
  for (const f of [...run.failures, ...fixture.failures]) console.log(`   problem: ${f}`)
  const rows: string[][] = [['ms per tap', 'taps', 'median', 'p95', 'p99', 'max', 'CPU p50', `target p99 < ${TARGET_P99_MS} ms`]]
  const row = (name: string, samples: Sample[], judge: boolean) => {
    if (samples.length === 0) return rows.push([name, '0', '-', '-', '-', '-', '-', judge ? 'NOT RUN' : ''])
    const s = ascending(samples.map((x) => x.ms))
    const p99 = pct(s, 0.99)
    const cpu = pct(ascending(samples.map((x) => x.cpu)), 0.5)
    rows.push([name, String(s.length), msText(pct(s, 0.5)), msText(pct(s, 0.95)), msText(p99), msText(s[s.length - 1]!), msText(cpu), judge ? (p99 < TARGET_P99_MS ? 'met' : 'NOT MET') : ''])
  }
  row('a. virtual-card taps, one gateway', run.samples, true)
  for (const mode of [...new Set(run.samples.map((x) => x.mode))].sort())
    row(`     ${mode.toUpperCase()} taps`, run.samples.filter((x) => x.mode === mode), false)
  row("   the same, SQLite's checkpoints in commits", inCommit.samples, false)
  row(`b. fixture replay, ${fixture.rounds} rounds`, [...fixture.first, ...fixture.rest], true)
  row('     1st tap of each new gateway', fixture.first, false)
  row(`     taps 2–${fixture.tapsPerRound}`, fixture.rest, false)
  printTable(rows, { note: true })
  const chips = seed.teams[0].chips.filter((c) => c.kind === 'ntag424')
  const checkpoints = inCommit.samples.filter((x) => x.checkpoint)
  console.log(
    `   a. ${GATEWAY_WARMUP} + ${run.samples.length} taps of chips ${chips.map((c) => c.uid).join(', ')} (AES, AES, LRP) round-robin, read first from the ` +
      `in-process virtual reader (no latency; ${recording.seconds.toFixed(1)} s), then replayed → Station → sink on one gateway ` +
      `(${run.seconds.toFixed(1)} s), so the card's SUN generation is not in the process while the gateway is timed; the first ${GATEWAY_WARMUP} not counted.`,
  )
  console.log(`      ${tailCauses(run.samples)}.`)
  if (run.worker)
    console.log(
      `      As tapgate serve runs: a worker thread checkpointed the WAL ${run.worker.checkpoints} times (${run.worker.frames} frames) while the taps committed.`,
    )
  const ratio = pct(ascending(inCommit.samples.map((x) => x.ms)), 0.99) / pct(ascending(run.samples.map((x) => x.ms)), 0.99)
  console.log(`      The same taps with SQLite's default (auto-checkpoint inside the commit that fills the WAL): p99 ${ratio.toFixed(2)}× the worker's.`)
  console.log(`      ${tailCauses(inCommit.samples)}.`)
  if (checkpoints.length > 0)
    console.log(
      `      WAL checkpoints in commits: ${checkpoints.length} (one per ~${Math.round(inCommit.samples.length / checkpoints.length)} taps), ` +
        `${checkpoints.map((x) => msText(x.ms)).join(', ')} ms.`,
    )
  if (fixture.openGatewayMs.length > 0) {
    const s = ascending(fixture.openGatewayMs)
    console.log(
      `   b. fixtures/taps/valid-ntag424.jsonl (4 AES taps, 1 LRP) → FixtureReaderSource → Station → sink; each round a new data dir, ` +
        `seed.json imported, buildApp (median ${msText(pct(s, 0.5))} ms, not counted); every round's verdicts match the fixture's.`,
    )
    console.log(`      ${tailCauses([...fixture.first, ...fixture.rest])}.`)
  }
  console.log("   CPU p50: this process's CPU time over a median tap (all threads).")
}

function printApdu(pcscApdus: number[], recording: Recording): void {
  console.log('\n3. Per-APDU round trip (the transmit of one command, as readTap sees it)')
  const rows = [['', 'APDUs', 'median', 'p95']]
  const row = (name: string, ms: number[]) => {
    if (ms.length === 0) return rows.push([name, '0', '-', '-'])
    const s = ascending(ms)
    rows.push([name, String(ms.length), msText(pct(s, 0.5)), msText(pct(s, 0.95))])
  }
  row('over pcscd/vpcd (part 1)', pcscApdus)
  row('in-process virtual reader, no latency (part 2a)', recording.apdus)
  printTable(rows)
  console.log(
    [
      "   Why ~44 ms per APDU over pcscd/vpcd: Debian's vsmartcard-vpcd 3.3 sends each frame's 2-byte length and its payload",
      '   in two send() calls; Nagle holds the payload until the length is ACKed, and the receiving side delays that ACK',
      '   (~40 ms). Fixed upstream (vsmartcard 76e2679, 2023), not in Debian; `ip route … quickack 1` or the upstream driver',
      '   halves insert → URL read (../shared/notes/pcsc-ci.md). So part 1\'s reader I/O measures the emulation\'s TCP, not',
      '   readTap nor a real reader; its wait for the card is mostly pcscd\'s 400 ms poll, and its power cycle/ATR/connect',
      '   share the same ~44 ms per vpcd frame.',
    ].join('\n'),
  )
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const runStarted = Date.now()
  const bound = setTimeout(() => void abort(`the run's time bound (${RUN_TIMEOUT_MS / 1000} s) was reached`, 1), RUN_TIMEOUT_MS)
  bound.unref()
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void abort(`${sig}`, 130))

  const load = os.loadavg().map((l) => l.toFixed(2)).join(' ')
  console.log(`bench/station.ts — node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), load average ${load}`)
  const pcsc = await pcscPart(Date.now() + PCSC_PART_BUDGET_MS)
  // Stop what part 1 started (pcscd among it) before the in-process parts.
  await cleanup()
  const pcscApdus = printPcsc(pcsc)

  const remaining = () => runStarted + RUN_TIMEOUT_MS - 10_000
  gcObserver.observe({ entryTypes: ['gc'] })
  onCleanup('stopping the GC observer', () => gcObserver.disconnect())
  const recordStarted = performance.now()
  const apdus: number[] = []
  const taps = await recordVirtualTaps(GATEWAY_WARMUP + GATEWAY_TAPS, apdus)
  const recording: Recording = { apdus, seconds: (performance.now() - recordStarted) / 1000 }
  // tapgate's configuration first: the second run gets the warmer process (JIT), which favours SQLite's default.
  const virtual = await virtualTapsPart(taps, Math.min(remaining(), Date.now() + 40_000), true)
  const inCommit = await virtualTapsPart(taps, Math.min(remaining(), Date.now() + 40_000), false)
  const fixture = await fixturePart(remaining())
  printGateway(virtual, inCommit, recording, fixture)
  printApdu(pcscApdus, recording)

  await cleanup()
  clearTimeout(bound)
  console.log(`\n(${((Date.now() - runStarted) / 1000).toFixed(1)} s)`)
}

try {
  await main()
} catch (error) {
  console.error(error)
  await cleanup()
  process.exitCode = 1
}
// Everything was closed: the process ends by itself. If something still holds the loop, say so and leave.
setTimeout(() => {
  console.error('bench/station.ts: the process did not exit 5 s after cleanup (a handle is still open, e.g. a PC/SC reader thread after pcscd went away); exiting')
  process.exit(process.exitCode ?? 0)
}, 5000).unref()
