/**
 * Provisioning blank chips over the real PC/SC stack (issue 12). One run, bounded (~2 min at most).
 *
 *   npm run bench:provision
 *   BENCH_CARDS=20 BENCH_SCHEME=an10922 npm run bench:provision
 *   BENCH_LRP=1 npm run bench:provision          (each card switched to LRP first: irreversible on a real chip)
 *   BENCH_VPCD_PORT=35963 npm run bench:provision (vpcd slot 0, "Virtual PCD 00 00"; default slot 1)
 *
 * BENCH_CARDS blank virtual NTAG 424 DNA cards (default 10) go one after another into a vpcd slot:
 * card --TCP--> vsmartcard-vpcd --> pcscd --> nfc-pcsc --> openPcscReaders --> provisionCard (as
 * `tapgate chip provision --batch` runs it) against a real store on a temp dir, one chip profile of
 * BENCH_SCHEME (default per_chip). For each card: the wait until the reader reports it, then the run
 * split by step from the CardLink transcript (inspect, authenticate, WriteData, ChangeFileSettings,
 * ChangeKey 1–4, ChangeKey 0, the final read as a phone would), and the host's own work between
 * APDUs (key derivation, sealing, SQLite journal, the gateway's verification of the first tap).
 *
 * Target (../shared/notes/targets.md): a blank chip provisioned and verified in ≤ 30 APDUs; over vpcd
 * the time is APDUs × ~44 ms. Reported as ratios within this run. A bench reports; it never fails the
 * build (exit 0 unless it could not run). pcscd: a running one is used; otherwise (as root) this starts
 * `pcscd --foreground` and stops it by PID at the end. Temp dirs are removed, also on error and Ctrl-C.
 * Run it apart from the PC/SC tests: pcscd is one per machine.
 */
import crypto, { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { keySchemes, type KeyScheme } from '../src/db/chipProfiles.js'
import { openStore } from '../src/db/store.js'
import { CardLink } from '../src/provisioning/run/cardLink.js'
import { provisionChip } from '../src/provisioning/run/provisionChip.js'
import { upsertChipProfile } from '../src/profiles/chipProfiles.js'
import { usePcscd, type PcscdProcess } from '../station/pcsc/pcscdProcess.js'
import { openPcscReaders } from '../station/pcsc/pcscReaders.js'
import type { CardSession } from '../src/card/cardSession.js'
import type { Reader, ReaderSource } from '../station/reader.js'
import { VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY, VirtualNtag424 } from '../station/virtual-card/ntag424.js'
import { insertCard } from '../station/virtual-card/vpcd.js'
import { createCleanups } from './cleanups.js'
import { profileKeysFor } from '../fixtures/provisioningKeys.js'
import { positiveEnv } from './env.js'

const CARDS = positiveEnv('BENCH_CARDS', 10)
const SCHEME = scheme(process.env.BENCH_SCHEME ?? 'per_chip')
const LRP = process.env.BENCH_LRP === '1'
const VPCD_PORT = positiveEnv('BENCH_VPCD_PORT', 35964)
const SLOT_READER = `Virtual PCD 00 ${String(VPCD_PORT - 35963).padStart(2, '0')}`
const TEMPLATE = 'https://tap.example/t?e={picc}&c={mac}'
const TARGET_APDUS = 30
const TARGET_MS_PER_APDU = 44
const RUN_TIMEOUT_MS = 120_000
const WAIT_MS = 10_000

function scheme(raw: string): KeyScheme {
  const found = keySchemes.find((s) => s === raw)
  if (!found) throw new Error(`BENCH_SCHEME must be one of ${keySchemes.join(', ')}, got ${JSON.stringify(raw)}`)
  return found
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// ---------------------------------------------------------------- cleanup: everything started is undone, by PID

const { onCleanup, cleanup, abort } = createCleanups('bench/provision.ts')

// ---------------------------------------------------------------- steps

/** The report's step groups, in run order. The final read is every step after the last ChangeKey. */
const GROUPS = ['inspect (read-only)', 'authenticate', 'SetConfiguration', 'WriteData', 'ChangeFileSettings', 'ChangeKey 1–4', 'ChangeKey 0', 'final read (as a phone)'] as const
type Group = (typeof GROUPS)[number]

function groupOf(step: string, afterKeys: boolean): Group {
  if (afterKeys) return 'final read (as a phone)'
  if (step.startsWith('Authenticate')) return 'authenticate'
  if (step.startsWith('SetConfiguration')) return 'SetConfiguration'
  if (step.startsWith('WriteData')) return 'WriteData'
  if (step.startsWith('ChangeFileSettings')) return 'ChangeFileSettings'
  if (step === 'ChangeKey 0') return 'ChangeKey 0'
  if (step.startsWith('ChangeKey')) return 'ChangeKey 1–4'
  return 'inspect (read-only)'
}

type CardRun = { apdus: number; detectMs: number; runMs: number; apduMs: number; groups: Map<Group, { apdus: number; ms: number }> }

function splitSteps(link: CardLink): Pick<CardRun, 'apdus' | 'apduMs' | 'groups'> {
  const names = link.steps.map((s) => s.step)
  const lastKey = names.findLastIndex((n) => n.startsWith('ChangeKey'))
  const groups = new Map<Group, { apdus: number; ms: number }>()
  let apduMs = 0
  // One step per answered exchange, in order: the transcript's ms (µs precision) with the step's name.
  link.transcript.forEach((exchange, i) => {
    const g = groupOf(names[i] ?? '?', i > lastKey)
    const sum = groups.get(g) ?? { apdus: 0, ms: 0 }
    sum.apdus++
    sum.ms += exchange.ms
    groups.set(g, sum)
    apduMs += exchange.ms
  })
  return { apdus: link.transcript.length, apduMs, groups }
}

// ---------------------------------------------------------------- the run

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tapgate-bench-provision-'))
  onCleanup(`remove ${dataDir}`, () => fs.rmSync(dataDir, { recursive: true, force: true }))
  const store = openStore({ dataDir })
  onCleanup('close the store', () => store.close())
  const secret = crypto.randomBytes(32)
  const now = Date.now()
  const teamId = await store.teams.insert({ name: 'Bench', redirectUrl: null, now })
  await upsertChipProfile(store, secret, { teamId, name: 'bench', keyScheme: SCHEME, mode: LRP ? 'lrp' : 'aes', ...profileKeysFor(SCHEME), now })
  const profile = (await store.chipProfiles.getByName(teamId, 'bench'))!

  const pcscd: PcscdProcess = await usePcscd()
  onCleanup('stop pcscd', () => pcscd.stop())
  console.log(`pcscd: ${pcscd.started ? `started (pid ${pcscd.pid}), stopped by PID at the end` : 'already running, used as it is'}`)
  const source: ReaderSource = await openPcscReaders({ readerFilter: SLOT_READER, log: { info: () => {}, warn: (m) => console.error(`warn: ${m}`) } })
  onCleanup('close the readers', () => source.close())
  const reader = await new Promise<Reader>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no reader "${SLOT_READER}" within 5 s: is vsmartcard-vpcd configured?`)), 5000)
    source.on('reader', (r) => {
      if (r.name !== SLOT_READER) return
      clearTimeout(timer)
      resolve(r)
    })
  })
  const sessions: { session: CardSession; at: number }[] = []
  let removed = 0
  reader.on('card', (session) => void sessions.push({ session, at: performance.now() }))
  reader.on('cardRemoved', () => void removed++)
  const waitFor = async (what: string, done: () => boolean) => {
    const until = Date.now() + WAIT_MS
    while (!done()) {
      if (Date.now() > until) throw new Error(`no ${what} on ${SLOT_READER} within ${WAIT_MS / 1000} s`)
      await sleep(5)
    }
  }

  console.log(`provisioning ${CARDS} blank cards (${SCHEME}, ${LRP ? 'LRP' : 'AES'}) on ${SLOT_READER} (vpcd port ${VPCD_PORT})`)
  const runs: CardRun[] = []
  for (let i = 1; i <= CARDS; i++) {
    const uid = `04${randomBytes(6).toString('hex').toUpperCase()}`
    const card = new VirtualNtag424({ uid, blank: true })
    const removedBefore = removed
    sessions.length = 0
    const t0 = performance.now()
    const inserted = await insertCard(card, { port: VPCD_PORT })
    try {
      await waitFor('card event', () => sessions.length > 0)
      const { session, at } = sessions.shift()!
      const link = new CardLink(session)
      const result = await provisionChip({ store, secret, link, teamId, profile, template: TEMPLATE, lrp: LRP, originalityKey: VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY })
      if (result.counter !== 1) throw new Error(`card ${uid}: first tap verified at counter ${result.counter}, not 1`)
      const run: CardRun = { detectMs: at - t0, runMs: performance.now() - at, ...splitSteps(link) }
      runs.push(run)
      console.log(`  card ${String(i).padStart(2)} ${uid}: ${run.apdus} APDUs, ${run.runMs.toFixed(0)} ms run (${run.apduMs.toFixed(0)} ms in APDUs), ${run.detectMs.toFixed(0)} ms to detect`)
    } finally {
      await inserted.remove()
      await waitFor('cardRemoved', () => removed > removedBefore)
    }
  }
  report(runs)
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

function report(runs: CardRun[]): void {
  const n = runs.length
  const line = (label: string, apdus: number, ms: number, share: number) =>
    `  ${label.padEnd(26)} ${apdus.toFixed(1).padStart(5)} APDUs ${ms.toFixed(0).padStart(6)} ms ${(share * 100).toFixed(0).padStart(4)} %`
  const meanRun = runs.reduce((a, r) => a + r.runMs, 0) / n
  const meanApdus = runs.reduce((a, r) => a + r.apdus, 0) / n
  const meanApduMs = runs.reduce((a, r) => a + r.apduMs, 0) / n
  console.log(`\nper provisioned card, mean of ${n} (median run ${median(runs.map((r) => r.runMs)).toFixed(0)} ms, min ${Math.min(...runs.map((r) => r.runMs)).toFixed(0)}, max ${Math.max(...runs.map((r) => r.runMs)).toFixed(0)}):`)
  for (const g of GROUPS) {
    const apdus = runs.reduce((a, r) => a + (r.groups.get(g)?.apdus ?? 0), 0) / n
    if (apdus === 0) continue
    const ms = runs.reduce((a, r) => a + (r.groups.get(g)?.ms ?? 0), 0) / n
    console.log(line(g, apdus, ms, ms / meanRun))
  }
  console.log(line('host work between APDUs', 0, meanRun - meanApduMs, (meanRun - meanApduMs) / meanRun))
  console.log(line('total run', meanApdus, meanRun, 1))
  const perApdu = meanApduMs / meanApdus
  console.log(`  (before the run: ${median(runs.map((r) => r.detectMs)).toFixed(0)} ms median from insertion to the reader's card event)`)
  console.log(
    [
      `\ntarget ≤ ${TARGET_APDUS} APDUs per card: ${meanApdus.toFixed(1)} (${((meanApdus / TARGET_APDUS) * 100).toFixed(0)} % of it) ${meanApdus <= TARGET_APDUS ? 'OK' : 'OVER'}`,
      `round trip per APDU here: ${perApdu.toFixed(1)} ms (${(perApdu / TARGET_MS_PER_APDU).toFixed(2)}× the ~${TARGET_MS_PER_APDU} ms the target assumes)`,
      `run time / (APDUs × this run's round trip): ${(meanRun / meanApduMs).toFixed(2)} (1.00 = the run is all APDU transport)`,
    ].join('\n'),
  )
}

const timer = setTimeout(() => void abort(`over the ${RUN_TIMEOUT_MS / 1000} s bound`, 1), RUN_TIMEOUT_MS)
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void abort(sig, 130))
try {
  await main()
} catch (error) {
  clearTimeout(timer)
  await abort(`could not run: ${(error as Error).message}`, 1)
}
clearTimeout(timer)
await cleanup()
