/**
 * The guest list at 50,000 guests (issue 19).
 *
 *   npm run bench:attendees          BENCH_GUESTS=100000 BENCH_SEARCHES=2000 npm run bench:attendees
 *
 * Figures: `tapgate attendees import` of a BENCH_GUESTS-row pretix check-in list through the bin, as a
 * user runs it (start-up, read, check every row, one transaction), first into an empty list then again
 * (every row an update); staff search (`attendees.search`, 2–5 characters of a guest's name, email or
 * ticket code, 20 results at most) p50/p99 over BENCH_SEARCHES queries on the same SQLite file.
 * Targets: import < 10 s, search p99 < 50 ms. Exits 1 when one is missed.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ConfigSchema } from '../src/config.js'
import { openStore } from '../src/db/store.js'
import { importData, parseImportFile } from '../src/importer/importData.js'
import { loadGatewaySecret } from '../src/keys/gatewaySecret.js'
import { createCleanups } from './cleanups.js'
import { positiveEnv } from './env.js'

const GUESTS = positiveEnv('BENCH_GUESTS', 50_000)
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
  parseImportFile({ teams: [{ name: 'Bench', guestbookContracts: [{ name: 'Guests', symbol: 'GST', chainId: 31337, events: [{ name: 'Conference', tokenId: '1', metadata: { name: 'Conference', collection: 'Conference', description: 'x', image: 'https://example.com/x.png', attributes: [], media_gallery: [] } }] }] }] }),
  { config: ConfigSchema.parse({ dataDir, logLevel: 'silent' }), now: Date.now(), secret: loadGatewaySecret({ dataDir }) },
)
const eventId = (await store.guestbook.listEvents(summary.teams[0]!.id))[0]!.id
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
onCleanup('close the store', () => searchStore.close())
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

const ok = first.ms < IMPORT_TARGET_MS && again.ms < IMPORT_TARGET_MS && at(0.99) < SEARCH_P99_TARGET_MS
console.log(`guest list, ${GUESTS} guests (SQLite, ${(fs.statSync(csvFile).size / 1024 / 1024).toFixed(1)} MB pretix check-in list):`)
console.log(`  import through the bin, new list      ${(first.ms / 1000).toFixed(2)} s   (target < ${IMPORT_TARGET_MS / 1000} s)`)
console.log(`  import again (every row an update)    ${(again.ms / 1000).toFixed(2)} s`)
console.log(`  staff search, ${SEARCHES} queries (${found} with a match)  p50 ${at(0.5).toFixed(2)} ms  p99 ${at(0.99).toFixed(2)} ms  max ${times.at(-1)!.toFixed(2)} ms   (target p99 < ${SEARCH_P99_TARGET_MS} ms)`)
console.log(ok ? 'targets met' : 'TARGET MISSED')
await cleanup()
process.exitCode = ok ? 0 : 1
