/*
 * Provisioning over the real PC/SC stack (issue 12), no mock in the chain:
 *
 *   blank virtual NTAG 424 DNA --TCP--> vsmartcard-vpcd --> pcscd --> libpcsclite --> nfc-pcsc
 *     --> openPcscReaders --> CardSession --> provisionChip / resetChip, and the `tapgate chip provision` CLI --> SQLite journal
 *
 * and each provisioned card tapped again as a phone reads it (station/readTap.ts) and verified
 * by the gateway's own verifier. The in-process twin is test/provisioning/run/provisionChip.test.ts
 * (a card pulled after every command, both ways); here too a card is pulled after every command,
 * the write steps one way each. Each APDU over Debian's vpcd costs ~44 ms unless loopback ACKs quickly
 * (.ci/run turns that on as root); each placement ~0.8 s whatever the ACKs (pcscd polls every 400 ms).
 *
 * Needs pcscd, vsmartcard-vpcd and nfc-pcsc; under CI=true a missing part fails, elsewhere it skips.
 * The cards go into vpcd slot 0 (port 35963), which test/station/pcscE2e.test.ts uses too: the
 * PC/SC files take turns (test/helpers/pcscLock.ts), and this one holds the lock for the whole file.
 */
import { spawn } from 'node:child_process'
import crypto, { randomBytes } from 'node:crypto'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { keySchemes, type KeyScheme } from '../../src/db/chipProfiles.js'
import { sealKey } from '../../src/keys/sealKey.js'
import { CardLink } from '../../src/provisioning/run/cardLink.js'
import { readChip } from '../../src/provisioning/run/inspectChip.js'
import { ProvisioningStopped, runKeyContext } from '../../src/provisioning/run/keySession.js'
import { provisionChip, type ProvisionResult } from '../../src/provisioning/run/provisionChip.js'
import { resetChip } from '../../src/provisioning/run/resetChip.js'
import { createKeyring } from '../../src/taps/createKeyring.js'
import { upsertChipProfile } from '../../src/profiles/chipProfiles.js'
import { verifyTap } from '../../src/taps/verifyTap.js'
import { type PcscdProcess, usePcscd } from '../../station/pcsc/pcscdProcess.js'
import { openPcscReaders } from '../../station/pcsc/pcscReaders.js'
import { readTap } from '../../station/readTap.js'
import type { CardSession } from '../../src/card/cardSession.js'
import type { Reader, ReaderSource } from '../../station/reader.js'
import { VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY, VirtualNtag424 } from '../../station/virtual-card/ntag424.js'
import { insertCard } from '../../station/virtual-card/vpcd.js'
import { createTestGateway, seedTeam } from '../helpers/gateway.js'
import { lockPcsc } from '../helpers/pcscLock.js'
import { missingForVirtualCards, requireUnderCi } from '../helpers/pcscStack.js'
import { collectOutput, exited, repoRoot, stopChild } from '../helpers/processes.js'
import { PROFILE_KEYS, seedGateway, TEMPLATE } from './run/runHelpers.js'

const SLOT = { port: 35963, reader: 'Virtual PCD 00 00' }
const ORIGINALITY = VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY
const BATCH = 10

const missing = await missingForVirtualCards()
requireUnderCi(missing, "provisioning over PC/SC")

// Fresh UIDs per run: a card someone else leaves in slot 0 cannot pass for ours.
const newUid = () => `04${randomBytes(6).toString('hex').toUpperCase()}`
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const stats = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b)
  return `median ${s[Math.floor(s.length / 2)]!.toFixed(0)} ms, max ${s.at(-1)!.toFixed(0)} ms`
}

describe.skipIf(missing.length > 0)('provisioning over PC/SC: blank virtual card → vpcd → pcscd → nfc-pcsc', () => {
  let pcscd: PcscdProcess | undefined
  let releasePcsc: (() => void) | undefined
  let source: ReaderSource | undefined
  const logs: string[] = []
  const log = { info: (m: string) => void logs.push(m), warn: (m: string) => void logs.push(`warn: ${m}`) }
  const sessions: CardSession[] = []
  let removedEvents = 0
  const timings: string[] = []

  beforeAll(async () => {
    // pcscE2e's part takes ~30 s, vpcd.test's a few: wait for both at worst.
    releasePcsc = await lockPcsc(150_000)
    pcscd = await usePcscd()
    source = await openPcscReaders({ readerFilter: SLOT.reader, log })
    source.on('error', (e) => logs.push(`source error: ${e.message}`))
    const slot = await new Promise<Reader>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no reader "${SLOT.reader}" within 5 s: is vsmartcard-vpcd configured?\n${logs.join('\n')}`)), 5000)
      source!.on('reader', (reader) => {
        if (reader.name !== SLOT.reader) return
        clearTimeout(timer)
        resolve(reader)
      })
    })
    slot.on('error', (e) => logs.push(`reader error: ${e.message}`))
    slot.on('card', (session) => void sessions.push(session))
    slot.on('cardRemoved', () => void removedEvents++)
  }, 200_000)

  afterAll(async () => {
    if (timings.length > 0) console.log(['provisioning over PC/SC (vpcd → pcscd → nfc-pcsc):', ...timings.map((t) => `  ${t}`)].join('\n'))
    await source?.close()
    await pcscd?.stop()
    releasePcsc?.()
  })

  async function waitFor(what: string, done: () => boolean, ms = 5000): Promise<void> {
    const until = Date.now() + ms
    while (!done()) {
      if (Date.now() > until) throw new Error(`no ${what} on ${SLOT.reader} within ${ms / 1000} s\n${logs.join('\n')}`)
      await sleep(10)
    }
  }

  /**
   * One placement of `card` on the slot: insert, the reader's card event, `use` the session; then
   * the card leaves (taken away, or already gone when removeAfterCommands pulled it) and the
   * reader has seen it leave, so the next placement is a new card event.
   */
  async function onReader<T>(card: VirtualNtag424, use: (session: CardSession) => Promise<T>): Promise<T> {
    const removedBefore = removedEvents
    sessions.length = 0
    const inserted = await insertCard(card, { port: SLOT.port })
    try {
      await waitFor('card event', () => sessions.length > 0)
      return await use(sessions.shift()!)
    } finally {
      await inserted.remove()
      await waitFor('cardRemoved', () => removedEvents > removedBefore)
    }
  }

  const link = (card: VirtualNtag424) => <T>(use: (l: CardLink) => Promise<T>) => onReader(card, (session) => use(new CardLink(session)))

  async function setup(scheme: KeyScheme, mode: 'aes' | 'lrp' = 'aes') {
    const gw = await seedGateway(scheme, mode)
    const profile = (await gw.store.chipProfiles.getByName(gw.teamId, gw.profileName))!
    const keyring = createKeyring(gw.store, gw.secret)
    const provision = async (card: VirtualNtag424, l?: CardLink) => {
      const run = (cl: CardLink) =>
        provisionChip({ store: gw.store, secret: gw.secret, link: cl, teamId: gw.teamId, profile, template: TEMPLATE, lrp: mode === 'lrp', originalityKey: ORIGINALITY })
      return l ? await run(l) : link(card)(run)
    }
    /** A phone's tap over PC/SC, verified as the gateway does. */
    const tapAndVerify = async (card: VirtualNtag424) => {
      const read = await onReader(card, readTap)
      return { read, verdict: await verifyTap(gw.store, keyring, { url: read.url, source: 'phone', now: Date.now() }) }
    }
    return { ...gw, profile, keyring, provision, tapAndVerify }
  }

  const cases: [KeyScheme, 'aes' | 'lrp'][] = [...keySchemes.map((s): [KeyScheme, 'aes'] => [s, 'aes']), ['per_chip', 'lrp']]

  test.each(cases)('%s (%s): a blank card ends provisioned; the first tap verified at counter 1, the next as a phone reads it', async (scheme, mode) => {
    const gw = await setup(scheme, mode)
    const uid = newUid()
    const card = new VirtualNtag424({ uid, blank: true })
    const t0 = performance.now()
    let apdus = 0
    const result = await link(card)(async (l) => {
      const r = await gw.provision(card, l)
      apdus = l.transcript.length
      return r
    })
    const ms = performance.now() - t0
    expect(result).toMatchObject({ uid, how: 'new', counter: 1 })
    expect((await gw.store.provisioning.get(result.runId))!.state).toBe('provisioned')
    if (mode === 'lrp') expect(result.url).toMatch(/\?e=[0-9A-F]{48}&/)
    const tap = await gw.tapAndVerify(card)
    expect(tap.read).toEqual({ rfUid: uid, url: expect.stringMatching(/^https:\/\/tap\.example\/t\?e=/), chip: 'ntag424' })
    expect(tap.verdict).toMatchObject({ uid, counter: 2 })
    const reading = await link(card)((l) => readChip(l, ORIGINALITY))
    expect(reading.keyVersions).toEqual([1, 1, 1, 1, 1])
    timings.push(`${scheme} ${mode}: ${apdus} APDUs, ${ms.toFixed(0)} ms (insert → verified first tap → card removed)`)
  }, 60_000)

  // Over pcscd a card pulled mid-command answers with 0 bytes, not a CardRemovedError as in process:
  // CardLink turns that into CardRemovedError, so the run is journaled as pending and resumes.
  test('a card pulled after any command of the run resumes and ends provisioned (each write step on a card of its own, the inspect on one card placed again and again)', async () => {
    const gw = await setup('per_chip')
    // The commands of an uninterrupted run: the pulls are placed from these, not from a count that could drift.
    const probe = new VirtualNtag424({ uid: newUid(), blank: true })
    const steps = await link(probe)(async (l) => {
      await gw.provision(probe, l)
      return l.steps.map((s) => s.step)
    })
    // Before the first authentication the run only reads (inspect): a pull there changes nothing on the card.
    // From it on, every command: half carried out with the answer lost, half never reaching the card.
    const first = steps.findIndex((s) => s.startsWith('Authenticate'))
    expect(first, steps.join(', ')).toBeGreaterThan(0)
    const ms: number[] = []
    for (let n = first; n < steps.length; n++) {
      const processLast = n % 2 === 0
      const label = `pulled at command ${n + 1}, ${steps[n]}${processLast ? ' (carried out, answer lost)' : ''}`
      const card = new VirtualNtag424({ uid: newUid(), blank: true })
      card.removeAfterCommands(n, { processLast })
      const t0 = performance.now()
      await expect(gw.provision(card), label).rejects.toBeInstanceOf(ProvisioningStopped)
      const result: ProvisionResult = await gw.provision(card)
      ms.push(performance.now() - t0)
      expect(result, label).toMatchObject({ how: 'resumed', counter: 1 })
      expect((await gw.store.provisioning.get(result.runId))!.state, label).toBe('provisioned')
    }
    expect(ms.length).toBe(steps.length - first)
    timings.push(`pulled and resumed (${ms.length} cards, one per command from ${steps[first]} on, two placements each): ${stats(ms)}`)

    // The read-only inspect before it: one card, pulled at its 1st command, then (put back) at its 2nd, …
    // Nothing is written and no run is journaled until the inspect is whole; the placement after that provisions.
    const card = new VirtualNtag424({ uid: newUid(), blank: true })
    for (let n = 0; n < first; n++) {
      card.removeAfterCommands(n)
      await expect(gw.provision(card), `pulled at command ${n + 1}, ${steps[n]}`).rejects.toBeInstanceOf(ProvisioningStopped)
    }
    expect(await gw.store.provisioning.latest(card.uid), 'a run journaled before the inspect was whole').toBeUndefined()
    expect(await gw.provision(card)).toMatchObject({ uid: card.uid, how: 'new', counter: 1 })
  }, 180_000)

  test('a wrong stored key stops after one attempt and leaves the card unchanged', async () => {
    const gw = await setup('per_chip')
    const uid = newUid()
    const card = new VirtualNtag424({ uid, blank: true })
    const { runId } = await gw.provision(card)
    // A validly sealed but wrong key 0 in the journal (what a restored old backup would hold).
    gw.store.db.prepare('UPDATE chip_provisioning SET key0 = ? WHERE id = ?').run(sealKey(gw.secret, crypto.randomBytes(16), runKeyContext(runId, 0, 'new')), runId)
    const before = await link(card)((l) => readChip(l, ORIGINALITY))
    const { stopped, auths } = await link(card)(async (l) => {
      const error = await resetChip({ store: gw.store, secret: gw.secret, link: l, uid }).catch((e: unknown) => e)
      return { stopped: error, auths: l.transcript.filter((e) => e.command.startsWith('9071') || e.command.startsWith('9077')).length }
    })
    expect(stopped).toBeInstanceOf(ProvisioningStopped)
    expect((stopped as ProvisioningStopped).reason).toBe('auth_failed')
    expect(auths).toBe(1)
    const after = await link(card)((l) => readChip(l, ORIGINALITY))
    expect(after.keyVersions).toEqual(before.keyVersions)
    expect(after.files[1]).toEqual(before.files[1])
    // The card still taps and verifies: nothing on it changed.
    expect((await gw.tapAndVerify(card)).verdict).toMatchObject({ uid, counter: 2 })
  }, 60_000)

  test('reset returns the card to factory and its old URLs fail', async () => {
    const gw = await setup('per_chip')
    const uid = newUid()
    const card = new VirtualNtag424({ uid, blank: true })
    await gw.provision(card)
    const old = await onReader(card, readTap)
    const result = await link(card)((l) => resetChip({ store: gw.store, secret: gw.secret, link: l, uid, originalityKey: ORIGINALITY }))
    expect(result.cannotUndo.length).toBeGreaterThan(0)
    const reading = await link(card)((l) => readChip(l, ORIGINALITY))
    expect(reading.keyVersions).toEqual([0, 0, 0, 0, 0])
    await expect(verifyTap(gw.store, gw.keyring, { url: old.url, source: 'phone', now: Date.now() })).rejects.toThrow()
  }, 60_000)

  /** `tapgate ARGS --data-dir DIR` as a user runs it (no TAPGATE_* settings of this process). */
  function spawnCli(args: string[], dataDir: string) {
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('TAPGATE_')))
    const child = spawn(process.execPath, [path.join(repoRoot, 'src/cli/tapgate.js'), ...args, '--data-dir', dataDir], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] })
    const output = collectOutput(child)
    return { child, output, all: () => output.stdout() + output.stderr() }
  }

  /** `tapgate chip provision … --reader SLOT` against a gateway's data dir with one per_chip profile. */
  async function startProvisionCli(extra: string[]) {
    const gw = await createTestGateway()
    const { teamId } = await seedTeam(gw, { name: 'Shop', chips: [] })
    await upsertChipProfile(gw.store, gw.app.services.secret, { teamId, name: 'tags', keyScheme: 'per_chip', mode: 'aes', metaKey: PROFILE_KEYS.metaKey, now: gw.clock.now })
    // The card NXP did not sign: without the test key, only --allow-unverified lets it through.
    const args = ['chip', 'provision', '--team', String(teamId), '--profile', 'tags', '--url', TEMPLATE, '--allow-unverified', '--reader', SLOT.reader, ...extra]
    const cli = spawnCli(args, gw.dataDir)
    const close = async () => {
      await stopChild(cli.child)
      await gw.close()
    }
    return { ...cli, gw, close }
  }

  /** `tapgate chip inspect --reader SLOT [--json]` on `card`: its output once it exited by itself. */
  async function inspectWithCli(dataDir: string, card: VirtualNtag424, json: boolean) {
    const cli = spawnCli(['chip', 'inspect', '--reader', SLOT.reader, ...(json ? ['--json'] : [])], dataDir)
    try {
      await waitFor('"Waiting for a card" from chip inspect', () => cli.all().includes('Waiting for a card'))
      await onReader(card, () => waitFor('the reading from chip inspect', () => cli.output.stdout().length > 0 && (!json || cli.output.stdout().trimEnd().endsWith('}')), 10_000))
      expect(await exited(cli.child, 10_000), `exit\n${cli.all()}`).toBe(true)
      expect(await cli.output.exited, cli.all()).toEqual({ code: 0, signal: null })
      return cli.output.stdout()
    } finally {
      await stopChild(cli.child)
    }
  }

  test(`the CLI with --batch: ${BATCH} blank cards in a row on one reader, one pulled and put back, a foreign card refused; a summary at Ctrl-C`, async () => {
    const cli = await startProvisionCli(['--batch'])
    try {
      await waitFor('"Waiting for cards" from the CLI', () => cli.all().includes('Waiting for cards'))
      // One progress line per card on stdout.
      const lines = () => cli.output.stdout().split('\n').filter((l) => / (provisioned|resumed) \(run |^refused /.test(l))
      /** One placement; the card stays until the CLI has printed its line, then leaves, as a person takes it away. */
      const place = async (card: VirtualNtag424, what: string) => {
        const before = lines().length
        await onReader(card, () => waitFor(`the line of ${what} from the CLI`, () => lines().length > before, 30_000))
        return lines().at(-1)!
      }
      const uids: string[] = []
      const ms: number[] = []
      for (let i = 0; i < BATCH; i++) {
        const uid = newUid()
        uids.push(uid)
        const card = new VirtualNtag424({ uid, blank: true })
        const t0 = performance.now()
        if (i === 3) {
          // Pulled in the middle of the key changes (the 20th command of 28), the answer lost.
          card.removeAfterCommands(19, { processLast: true })
          expect(await place(card, `card ${i + 1}, pulled`)).toMatch(/^refused \(card_removed\): .*put it back/)
          expect(await place(card, `card ${i + 1}, put back`)).toMatch(new RegExp(`^${uid} resumed \\(run \\d+, key version 1, first tap verified at counter 1\\)`))
        } else {
          expect(await place(card, `card ${i + 1}`)).toMatch(new RegExp(`^${uid} provisioned \\(run \\d+, key version 1, first tap verified at counter 1\\)`))
        }
        ms.push(performance.now() - t0)
      }
      // A tag someone configured elsewhere: factory keys but SDM on, so not ours to touch.
      const foreign = new VirtualNtag424({ uid: newUid(), metaKey: PROFILE_KEYS.metaKey, fileKey: crypto.randomBytes(16) })
      expect(await place(foreign, 'a foreign card')).toMatch(/^refused \(refused\): .*foreign/)
      process.kill(cli.child.pid!, 'SIGINT')
      expect(await exited(cli.child, 10_000), `exit after SIGINT\n${cli.all()}`).toBe(true)
      const exit = await cli.output.exited
      const out = cli.output.stdout()
      const summary = JSON.parse(out.slice(out.lastIndexOf('\n{') + 1)) as unknown
      expect(summary, cli.all()).toMatchObject({
        provisioned: BATCH - 1,
        resumed: 1,
        refused: [
          { reason: 'card_removed', message: expect.stringContaining('put it back') },
          { reason: 'refused', message: expect.stringContaining('foreign') },
        ],
      })
      // A batch with a card it did not finish ends with exit 1, so a script notices.
      expect(exit, cli.all()).toEqual({ code: 1, signal: null })
      for (const uid of uids) expect((await cli.gw.store.provisioning.latest(uid))?.state, uid).toBe('provisioned')
      expect(cli.all()).not.toMatch(/[0-9A-F]{32}/)
      timings.push(`CLI --batch of ${BATCH} (per card, insert → line printed → removed): ${stats(ms)}`)
    } finally {
      await cli.close()
    }
  }, 180_000)

  test('the CLI: a --reader that matches no reader says so instead of waiting in silence; Ctrl-C ends it', async () => {
    const gw = await createTestGateway()
    const cli = spawnCli(['chip', 'inspect', '--reader', 'ACR1252'], gw.dataDir)
    try {
      await waitFor('the hint from chip inspect', () => cli.all().includes('No reader whose name contains "ACR1252" yet'))
      expect(cli.all()).toContain('ignoring reader "Virtual PCD 00 00"')
      process.kill(cli.child.pid!, 'SIGINT')
      expect(await exited(cli.child, 10_000), cli.all()).toBe(true)
      expect(await cli.output.exited).toEqual({ code: 0, signal: null })
    } finally {
      await stopChild(cli.child)
      await gw.close()
    }
  })

  test("the CLI: `tapgate chip provision --reader SLOT` provisions the card and exits 0; `chip inspect` then reads it as this gateway's", async () => {
    const cli = await startProvisionCli([])
    try {
      await waitFor('"Waiting for a card" from the CLI', () => cli.all().includes('Waiting for a card'))
      const uid = newUid()
      const card = new VirtualNtag424({ uid, blank: true })
      const t0 = performance.now()
      await onReader(card, () => waitFor('the outcome line from the CLI', () => /provisioned|refused/.test(cli.output.stdout()), 30_000))
      // With --reader the other vpcd slot is ignored and closed: the process must still exit by itself.
      expect(await exited(cli.child, 10_000), `exit\n${cli.all()}`).toBe(true)
      expect(await cli.output.exited, cli.all()).toEqual({ code: 0, signal: null })
      expect(cli.output.stdout()).toMatch(new RegExp(`${uid} provisioned \\(run \\d+, key version 1, first tap verified at counter 1\\)`))
      expect(cli.all()).toContain('ignoring reader "Virtual PCD 00 01"')
      expect(cli.all()).not.toMatch(/[0-9A-F]{32}/)
      timings.push(`CLI chip provision: ${(performance.now() - t0).toFixed(0)} ms from insertion to exit`)
      // chip inspect, read-only and without keys, now knows the chip as this gateway's; the software card's signature is not NXP's.
      expect(await inspectWithCli(cli.gw.dataDir, card, false)).toBe(
        `${uid}: tapgate; key versions 1,1,1,1,1; originality NOT signed by NXP's published key (a clone, or a software card)\n`,
      )
      const report = JSON.parse(await inspectWithCli(cli.gw.dataDir, card, true)) as Record<string, unknown>
      expect(report).toMatchObject({ uid, keyVersions: [1, 1, 1, 1, 1], verdict: { kind: 'tapgate' }, mode: 'aes', originality: false })
      expect(JSON.stringify(report)).not.toMatch(/[0-9A-F]{32}/)
    } finally {
      await cli.close()
    }
  }, 60_000)
})
