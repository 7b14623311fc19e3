/**
 * The guest list at 50,000 guests (issue 19), and big lists over HTTP with the door open (issue 24).
 *
 *   npm run bench:attendees          BENCH_GUESTS=100000 BENCH_SEARCHES=2000 BENCH_BIG_ROWS=250000,2000000 npm run bench:attendees
 *
 * Figures: `tapgate attendees import` of a BENCH_GUESTS-row pretix check-in list through the bin, as a
 * user runs it (start-up, read, check every row, one transaction), first into an empty list then again
 * (every row an update); staff search (`attendees.search`, 2–5 characters of a guest's name, email or
 * ticket code, 20 results at most) p50/p99 over BENCH_SEARCHES queries on the same SQLite file.
 * Targets: import < 10 s, search p99 < 50 ms.
 *
 * Then `tapgate serve` on the same data dir, and for each of BENCH_BIG_ROWS (default 250,000 and
 * 2,000,000 short rows, 25 bytes each: 2 million is 47.7 MiB) into an event of its own: the import
 * over HTTP and the export of the event, each timed (rows/s), with /health asked every 20 ms (p99)
 * and the gateway's resident memory sampled (peak above idle). Targets: /health p99 < 200 ms, peak
 * < 300 MB above idle. Exits 1 when a target is missed.
 */
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createApiKey } from '../src/auth/apiKeys.js'
import { ConfigSchema } from '../src/config.js'
import { openStore } from '../src/db/store.js'
import { importData, parseImportFile } from '../src/importer/importData.js'
import { loadGatewaySecret } from '../src/keys/gatewaySecret.js'
import { createCleanups } from './cleanups.js'
import { positiveEnv } from './env.js'

const GUESTS = positiveEnv('BENCH_GUESTS', 50_000)
const BIG_ROWS = (process.env.BENCH_BIG_ROWS ?? '250000,2000000').split(',').map((n) => Number(n))
const HEALTH_P99_TARGET_MS = 200
const RSS_GROWTH_TARGET_MB = 300
const SEARCHES = positiveEnv('BENCH_SEARCHES', 1000)
const IMPORT_TARGET_MS = 10_000
const SEARCH_P99_TARGET_MS = 50

const root = fileURLToPath(new URL('..', import.meta.url))
const bin = path.join(root, 'src/cli/tapgate.js')
const { onCleanup, cleanup } = createCleanups('bench/attendees.ts')
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tapgate-attendees-bench-'))
onCleanup('remove the data dir', () => fs.rmSync(dataDir, { recursive: true, force: true }))

// A deterministic guest list: names from a small pool with accents, as a conference's would repeat them.
const FIRST = ['Zoë', 'Sam', 'Priya', 'José', 'Åsa', 'Chloé', 'Björn', 'Lena', 'Mei', 'Dan', 'Ada', 'Grace', 'Alan', 'Noor', 'Kenji']
const LAST = ['Müller', 'Taylor', 'Natarajan', 'Núñez', 'Lindqvist', 'Dubois', 'Åkesson', 'Fischer', 'Chen', 'Brown', 'Lovelace', 'Hopper']
const PRODUCTS = ['Conference Ticket', 'Workshop – Rust for Beginners', 'VIP', 'Student']
const guest = (i: number) => {
  const first = FIRST[i % FIRST.length]!
  const last = LAST[Math.floor(i / FIRST.length) % LAST.length]!
  return { name: `${first} ${last} ${i}`, email: `guest${i}@example.org`, code: `s${i.toString(36).padStart(6, '0')}x${(i * 7919).toString(36)}` }
}
const quote = (cell: string) => `"${cell.replaceAll('"', '""')}"`
const header = ['Order code', 'Attendee name', 'Product', 'Price', 'Checked in', 'Secret', 'Email', 'Requires special attention', 'Comment']
const lines = [header.map(quote).join(',')]
for (let i = 0; i < GUESTS; i++) {
  const g = guest(i)
  lines.push([`O${i}`, g.name, PRODUCTS[i % PRODUCTS.length]!, '249.00', '', g.code, g.email, i % 500 === 0 ? 'Yes' : 'No', ''].map(quote).join(','))
}
const csvFile = path.join(dataDir, 'guests.csv')
fs.writeFileSync(csvFile, `${lines.join('\r\n')}\r\n`)

const store = openStore({ dataDir })
const summary = await importData(
  store,
  parseImportFile({ teams: [{ name: 'Bench', guestbookContracts: [{ name: 'Guests', symbol: 'GST', chainId: 31337, events: BIG_ROWS.concat(0).map((_, i) => ({ name: `Conference ${i}`, tokenId: String(i + 1), metadata: { name: 'Conference', collection: 'Conference', description: 'x', image: 'https://example.com/x.png', attributes: [], media_gallery: [] } })) }] }] }),
  { config: ConfigSchema.parse({ dataDir, logLevel: 'silent' }), now: Date.now(), secret: loadGatewaySecret({ dataDir }) },
)
const events = (await store.guestbook.listEvents(summary.teams[0]!.id)).map((e) => e.id).sort((a, b) => a - b)
const eventId = events[0]!
const { apiKey } = await createApiKey(store, { teamId: summary.teams[0]!.id, now: Date.now() })
await store.close()

function importOnce(): { ms: number; stdout: string } {
  const started = performance.now()
  const run = spawnSync(process.execPath, [bin, 'attendees', 'import', '--event', String(eventId), '--json', csvFile], {
    env: { ...process.env, TAPGATE_DATA_DIR: dataDir, TAPGATE_LOG_LEVEL: 'warn' },
    encoding: 'utf8',
  })
  const ms = performance.now() - started
  if (run.status !== 0) throw new Error(`tapgate attendees import exited ${run.status}: ${run.stderr}`)
  return { ms, stdout: run.stdout }
}

const first = importOnce()
const report = JSON.parse(first.stdout) as { inserted: number; updated: number }
if (report.inserted !== GUESTS) throw new Error(`expected ${GUESTS} inserted, got ${JSON.stringify(report)}`)
const again = importOnce()

const searchStore = openStore({ dataDir })
const queries: string[] = []
for (let i = 0; i < SEARCHES; i++) {
  const g = guest((i * 104_729) % GUESTS)
  const source = [g.name.toLowerCase().normalize('NFKD').replace(/\p{M}/gu, ''), g.email, g.code][i % 3]!
  const length = 2 + (i % 4)
  const start = (i * 31) % Math.max(1, source.length - length)
  queries.push(source.slice(start, start + length))
}
for (const q of queries.slice(0, 50)) await searchStore.attendees.search(eventId, q, 20)
const times: number[] = []
let found = 0
for (const q of queries) {
  const started = performance.now()
  found += (await searchStore.attendees.search(eventId, q, 20)).length > 0 ? 1 : 0
  times.push(performance.now() - started)
}
times.sort((a, b) => a - b)
const at = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!

await searchStore.close()

// ---- big lists over HTTP, the door open (issue 24) ----
const server = spawn(process.execPath, [bin, 'serve', '--no-demo'], {
  env: { ...process.env, TAPGATE_DATA_DIR: dataDir, PORT: '0', TAPGATE_LOG_LEVEL: 'warn', TAPGATE_STATION: 'false' },
  stdio: ['ignore', 'pipe', 'inherit'],
})
onCleanup('stop the gateway', () => {
  if (server.exitCode === null) server.kill('SIGTERM')
  return new Promise((resolve) => (server.exitCode === null ? server.once('exit', resolve) : resolve(null)))
})
const url = await new Promise<string>((resolve, reject) => {
  let out = ''
  const timer = setTimeout(() => reject(new Error(`tapgate serve did not start: ${out}`)), 30_000)
  server.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk
    const match = /tapgate listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
    if (match) {
      clearTimeout(timer)
      resolve(match[1]!)
    }
  })
})
const rssMb = () => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${server.pid}/status`, 'utf8'))![1]) / 1024
const p99 = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.max(0, Math.ceil(samples.length * 0.99) - 1)] ?? 0

/** /health every 20 ms, timed, and the gateway's RSS, while `work` runs. */
async function withHealth<T>(work: () => Promise<T>): Promise<{ value: T; ms: number; healthP99: number; peakMb: number }> {
  let running = true
  const health: number[] = []
  let peakMb = 0
  const poll = (async () => {
    while (running) {
      const started = performance.now()
      await (await fetch(`${url}/health`)).arrayBuffer()
      health.push(performance.now() - started)
      peakMb = Math.max(peakMb, rssMb())
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })()
  const started = performance.now()
  const value = await work()
  const ms = performance.now() - started
  running = false
  await poll
  return { value, ms, healthP99: p99(health), peakMb }
}

function upload(event: number, file: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const query = `?map=${encodeURIComponent('name=Guest,ticket=Code')}`
    const req = http.request(`${url}/events/${event}/attendees/import${query}`, {
      method: 'POST',
      headers: { 'content-type': 'text/csv', 'x-service-api-key': apiKey, 'content-length': fs.statSync(file).size },
    }, (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
      res.on('end', () => resolve({ status: res.statusCode!, body }))
    })
    req.on('error', reject)
    fs.createReadStream(file).pipe(req)
  })
}

async function download(event: number): Promise<number> {
  const res = await fetch(`${url}/events/${event}/attendees/export`, { headers: { 'x-service-api-key': apiKey } })
  if (res.status !== 200) throw new Error(`export: ${res.status} ${await res.text()}`)
  let lines = 0
  for await (const chunk of res.body!) for (const byte of chunk as Uint8Array) if (byte === 0x0a) lines++
  return lines - 1
}

await withHealth(() => new Promise((resolve) => setTimeout(resolve, 1000)))
const idleMb = rssMb()
const big: string[] = []
let bigOk = true
for (const [i, rows] of BIG_ROWS.entries()) {
  const file = path.join(dataDir, `big-${rows}.csv`)
  const fd = fs.openSync(file, 'w')
  fs.writeSync(fd, 'Guest,Code\n')
  for (let start = 0; start < rows; start += 100_000) {
    let text = ''
    for (let n = start; n < Math.min(rows, start + 100_000); n++) text += `Guest ${String(n).padStart(7, '0')},TK${String(n).padStart(8, '0')}\n`
    fs.writeSync(fd, text)
  }
  fs.closeSync(fd)
  const event = events[i + 1]!
  const imported = await withHealth(() => upload(event, file))
  if (imported.value.status !== 200) throw new Error(`import of ${rows} rows: ${imported.value.status} ${imported.value.body}`)
  const exported = await withHealth(() => download(event))
  if (exported.value !== rows) throw new Error(`export of ${rows} rows gave ${exported.value}`)
  fs.rmSync(file)
  for (const [what, r] of [['import', imported], ['export', exported]] as const) {
    const growth = r.peakMb - idleMb
    const met = r.healthP99 < HEALTH_P99_TARGET_MS && growth < RSS_GROWTH_TARGET_MB
    bigOk &&= met
    big.push(
      `  ${what} ${rows.toLocaleString('en')} rows over HTTP   ${(r.ms / 1000).toFixed(1)} s  ${Math.round(rows / (r.ms / 1000)).toLocaleString('en')} rows/s` +
        `   /health p99 ${r.healthP99.toFixed(0)} ms   peak RSS ${r.peakMb.toFixed(0)} MB (+${growth.toFixed(0)} above idle)${met ? '' : '   MISSED'}`,
    )
  }
}

const ok = first.ms < IMPORT_TARGET_MS && again.ms < IMPORT_TARGET_MS && at(0.99) < SEARCH_P99_TARGET_MS && bigOk
console.log(`guest list, ${GUESTS} guests (SQLite, ${(fs.statSync(csvFile).size / 1024 / 1024).toFixed(1)} MB pretix check-in list):`)
console.log(`  import through the bin, new list      ${(first.ms / 1000).toFixed(2)} s   (target < ${IMPORT_TARGET_MS / 1000} s)`)
console.log(`  import again (every row an update)    ${(again.ms / 1000).toFixed(2)} s`)
console.log(`  staff search, ${SEARCHES} queries (${found} with a match)  p50 ${at(0.5).toFixed(2)} ms  p99 ${at(0.99).toFixed(2)} ms  max ${times.at(-1)!.toFixed(2)} ms   (target p99 < ${SEARCH_P99_TARGET_MS} ms)`)
console.log(`big lists, tapgate serve (idle RSS ${idleMb.toFixed(0)} MB; targets /health p99 < ${HEALTH_P99_TARGET_MS} ms, peak < ${RSS_GROWTH_TARGET_MB} MB above idle):`)
for (const line of big) console.log(line)
console.log(ok ? 'targets met' : 'TARGET MISSED')
await cleanup()
process.exitCode = ok ? 0 : 1
