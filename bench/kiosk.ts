/**
 * The kiosk's live path, over loopback against a real gateway (bench/kioskServer.ts, its own
 * process). One run, bounded (~2 min at most).
 *
 *   npm run bench:kiosk
 *   BENCH_KIOSK_TAPS=1000 BENCH_KIOSKS=10 BENCH_BROWSER_TAPS=10 npm run bench:kiosk
 *
 * 1. Accepted tap → kiosk message: 10 kiosk sockets (GET /kiosk/ws, hello with a kiosk token)
 *    follow one station; the bench, as that station, sends BENCH_KIOSK_TAPS taps (default 1,000,
 *    after 50 warm-up taps) over GET /station/ws, one at a time, each a fresh counter of one chip of
 *    fixtures/taps/seed.json. Timed from the tap's acceptance at the gateway (the commit of its feed
 *    row, noted in the server process where the feed hub is told) to each kiosk's receipt of the
 *    event: median and p99 over every kiosk message, and over the slowest kiosk of each tap.
 *    Target: p99 < 10 ms. Also, for context, from the station sending the tap to the kiosks.
 * 2. Virtual-card insert → rendered result in Chromium: the attendee page (/kiosk) in headless
 *    /usr/bin/chromium (playwright-core), following the gateway's in-process station; a virtual NTAG
 *    424 DNA is placed on its in-process virtual reader, and the time runs to the second animation
 *    frame after the page's result element turned `accepted` (painted). Skipped with a line when
 *    Chromium or playwright-core is missing. Without pcscd/vpcd here, the card goes on the
 *    in-process reader (the same Station → readTap path, without the ~750 ms of vpcd; see
 *    docs/station.md "Measured" for what vpcd adds).
 *
 * Clocks: both processes (and Chromium) give absolute times as performance.timeOrigin +
 * performance.now(), on one machine. A bench reports; it never fails the build. The server
 * process is stopped by PID and the temp dir removed at the end, also on error or Ctrl-C.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import WebSocket from 'ws'
import type { KioskServerMessage } from '../src/wire/feedProtocol.js'
import { VirtualNtag424 } from '../station/virtual-card/ntag424.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const TAPS = Number(process.env.BENCH_KIOSK_TAPS ?? 1000)
const WARMUP = 50
const KIOSKS = Number(process.env.BENCH_KIOSKS ?? 10)
const BROWSER_TAPS = Number(process.env.BENCH_BROWSER_TAPS ?? 10)
const TIME_BOUND_MS = 120_000
const CHROMIUM = '/usr/bin/chromium'

const at = () => performance.timeOrigin + performance.now()

type ServerInfo = { port: number; stationToken: string; stationKioskToken: string; inProcessKioskToken: string }

function startServer(dir: string): Promise<{ child: ChildProcess; info: ServerInfo }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'bench/kioskServer.ts'), dir], { cwd: root, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] })
  let out = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`bench/kioskServer.ts did not start within 20 s${out ? `: ${out}` : ''}`)), 20_000)
    child.once('exit', (code) => reject(new Error(`bench/kioskServer.ts exited early (code ${code})${out ? `: ${out}` : ''}`)))
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk
      const line = out.split('\n').find((l) => l.startsWith('{'))
      if (!line) return
      clearTimeout(timer)
      resolve({ child, info: JSON.parse(line) as ServerInfo })
    })
  })
}

function ask<T>(child: ChildProcess, message: { type: string }, answer: string): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (reply: { type: string }) => {
      if (reply.type !== answer) return
      child.off('message', onMessage)
      resolve(reply as T)
    }
    child.on('message', onMessage)
    child.send(message)
  })
}

function stats(ms: number[]): { median: number; p99: number; max: number } {
  const sorted = [...ms].sort((a, b) => a - b)
  const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!
  return { median: q(0.5), p99: q(0.99), max: sorted.at(-1)! }
}
const fmt = (s: { median: number; p99: number; max: number }) => `median ${s.median.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms, max ${s.max.toFixed(2)} ms`

/** A kiosk socket after its welcome: every tap event's receipt time, by event id. */
async function openKiosk(port: number, token: string): Promise<{ ws: WebSocket; received: Map<number, number>; onEvent: (fn: () => void) => void }> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/kiosk/ws`)
  const received = new Map<number, number>()
  let listener: (() => void) | null = null
  await new Promise<void>((resolve, reject) => {
    ws.once('error', reject)
    ws.once('open', () => ws.send(JSON.stringify({ type: 'hello', token })))
    ws.on('message', (data: Buffer) => {
      const now = at()
      const message = JSON.parse(data.toString()) as KioskServerMessage
      if (message.type === 'welcome') resolve()
      else if (message.type === 'error') reject(new Error(`kiosk refused: ${message.error}: ${message.message}`))
      else if (message.type === 'event' && message.event.kind === 'tap') {
        received.set(message.event.id, now)
        listener?.()
      }
    })
  })
  return { ws, received, onEvent: (fn) => (listener = fn) }
}

async function socketPart(child: ChildProcess, info: ServerInfo) {
  const seed = JSON.parse(fs.readFileSync(path.join(root, 'fixtures/taps/seed.json'), 'utf8')) as {
    teams: [{ chipProfiles: { mode: string; metaKey: string; fileKey: string }[] }]
  }
  const aes = seed.teams[0].chipProfiles.find((p) => p.mode === 'aes')!
  const chip = new VirtualNtag424({ uid: '04A1B2C3D4E501', metaKey: aes.metaKey, fileKey: aes.fileKey })
  const kiosks = await Promise.all(Array.from({ length: KIOSKS }, () => openKiosk(info.port, info.stationKioskToken)))
  const station = new WebSocket(`ws://127.0.0.1:${info.port}/station/ws`, { headers: { 'x-station-token': info.stationToken } })
  await new Promise((resolve, reject) => (station.once('open', resolve), station.once('error', reject)))

  const sentAt: number[] = []
  const eventIds: number[] = []
  for (let i = 1; i <= WARMUP + TAPS; i++) {
    const before = kiosks.map((k) => k.received.size)
    const allGotIt = new Promise<void>((resolve) => {
      const check = () => kiosks.every((k, n) => k.received.size > before[n]!) && resolve()
      for (const k of kiosks) k.onEvent(check)
    })
    const verdict = new Promise<{ verdict: { accepted: boolean; reason?: string } }>((resolve) => station.once('message', (data: Buffer) => resolve(JSON.parse(data.toString()))))
    const t0 = at()
    station.send(JSON.stringify({ id: String(i), tap: { rfUid: chip.uid, url: chip.urlAt(i), readerName: 'bench' } }))
    const answer = await verdict
    if (!answer.verdict.accepted) throw new Error(`tap ${i} was refused: ${answer.verdict.reason}`)
    await allGotIt
    if (i > WARMUP) {
      sentAt.push(t0)
      eventIds.push(Math.max(...[...kiosks[0]!.received.keys()]))
    }
  }
  const { acceptedAt } = await ask<{ acceptedAt: [number, number][] }>(child, { type: 'accepted' }, 'accepted')
  const accepted = new Map(acceptedAt)
  const perMessage: number[] = []
  const slowest: number[] = []
  const fromSend: number[] = []
  for (const [n, id] of eventIds.entries()) {
    const acceptedMs = accepted.get(id)
    if (acceptedMs === undefined) throw new Error(`no acceptance time for feed row ${id}`)
    const latencies = kiosks.map((k) => k.received.get(id)! - acceptedMs)
    perMessage.push(...latencies)
    slowest.push(Math.max(...latencies))
    fromSend.push(Math.max(...kiosks.map((k) => k.received.get(id)!)) - sentAt[n]!)
  }
  for (const k of kiosks) k.ws.close()
  station.close()
  const all = stats(perMessage)
  console.log(`1. accepted tap → kiosk WebSocket message, ${TAPS} taps × ${KIOSKS} kiosks on one station (after ${WARMUP} warm-up taps), loopback:`)
  console.log(`   every kiosk message:        ${fmt(all)}   target p99 < 10 ms: ${all.p99 < 10 ? 'met' : 'NOT met'}`)
  console.log(`   slowest kiosk of each tap:  ${fmt(stats(slowest))}`)
  console.log(`   (station sends the tap → the last kiosk has it: ${fmt(stats(fromSend))})`)
}

async function browserPart(child: ChildProcess, info: ServerInfo) {
  if (!fs.existsSync(CHROMIUM)) return console.log(`2. virtual-card insert → rendered result in Chromium: skipped (no ${CHROMIUM})`)
  let chromium: typeof import('playwright-core').chromium
  try {
    chromium = (await import('playwright-core')).chromium
  } catch (error) {
    return console.log(`2. virtual-card insert → rendered result in Chromium: skipped (playwright-core: ${(error as Error).message})`)
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] })
  try {
    const page = await browser.newPage()
    await page.goto(`http://127.0.0.1:${info.port}/kiosk#token=${info.inProcessKioskToken}`)
    await page.waitForSelector('#result[data-state="idle"]', { timeout: 10_000 })
    // Marks the time of the first paint after the result turns `accepted` (two frames: the one that
    // renders it has been produced). A string: this file is compiled without the DOM's types.
    await page.evaluate(`(() => {
      window.renderedAt = null
      const result = document.getElementById('result')
      new MutationObserver(() => {
        if (result.dataset.state !== 'accepted' || window.renderedAt !== null) return
        requestAnimationFrame(() => requestAnimationFrame(() => (window.renderedAt = performance.timeOrigin + performance.now())))
      }).observe(result, { attributes: true, attributeFilter: ['data-state'] })
    })()`)
    const latencies: number[] = []
    const verdicts: number[] = []
    // One warm-up tap: the page's first result (its first sound, its first layout of that state) is slower.
    for (let i = -1; i < BROWSER_TAPS; i++) {
      await page.evaluate(() => void ((globalThis as unknown as { renderedAt: number | null }).renderedAt = null))
      const { placedAt, verdictAt } = await ask<{ placedAt: number; verdictAt: number }>(child, { type: 'tap' }, 'tapped')
      const renderedAt = (await (await page.waitForFunction(() => (globalThis as unknown as { renderedAt: number | null }).renderedAt, undefined, { timeout: 10_000 })).jsonValue()) as number
      if (i >= 0) {
        latencies.push(renderedAt - placedAt)
        verdicts.push(verdictAt - placedAt)
      }
      await page.waitForSelector('#result[data-state="idle"]', { timeout: 15_000 })
    }
    console.log(`2. virtual-card insert (in-process virtual reader, in-process station) → rendered result in headless Chromium, ${BROWSER_TAPS} taps (after 1 warm-up):`)
    const rendered = stats(latencies)
    const station = stats(verdicts)
    console.log(`   rendered:                       ${fmt(rendered)}`)
    console.log(`   the station's insert → verdict: ${fmt(station)}`)
    const over = rendered.median - station.median
    console.log(`   rendered − verdict (medians): ${over.toFixed(1)} ms   target ≤ 50 ms: ${over <= 50 ? 'met' : 'NOT met'}`)
  } finally {
    await browser.close()
  }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tapgate-bench-kiosk-'))
let server: ChildProcess | undefined
const cleanup = () => {
  if (server?.pid && server.exitCode === null) process.kill(server.pid, 'SIGTERM')
  fs.rmSync(dir, { recursive: true, force: true })
}
process.once('SIGINT', () => {
  cleanup()
  process.exit(130)
})
const bound = setTimeout(() => {
  console.error(`bench:kiosk did not finish within ${TIME_BOUND_MS / 1000} s`)
  cleanup()
  process.exit(1)
}, TIME_BOUND_MS)
try {
  const started = await startServer(dir)
  server = started.child
  await socketPart(started.child, started.info)
  await browserPart(started.child, started.info)
} finally {
  clearTimeout(bound)
  if (server) {
    const exited = new Promise((resolve) => server!.once('exit', resolve))
    cleanup()
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))])
  } else cleanup()
}
