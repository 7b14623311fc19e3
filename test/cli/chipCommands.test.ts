import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import type { SqliteStore } from '../../src/db/store.js'
import { inspectCard, TranscriptRecorder } from '../../src/cli/commands/chipCommands.js'
import { batchSummary, dryRunPlan, provisionCard, type CardOutcome } from '../../src/provisioning/run/provisioningBatch.js'
import { parseFixture } from '../../station/fixtures/format.js'
import { VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY, VirtualNtag424 } from '../../station/virtual-card/ntag424.js'
import { createVirtualReader } from '../../station/virtual-card/virtualReader.js'
import { testDir } from '../helpers/gateway.js'
import { upsertChipProfile } from '../../src/profiles/chipProfiles.js'
import { seedGateway, TEMPLATE } from '../provisioning/run/runHelpers.js'

/** Every table's rows, to compare before and after. */
function snapshot(store: SqliteStore): string {
  const tables = store.db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all()
  return JSON.stringify(tables.map((t) => [t.name, store.db.prepare(`SELECT * FROM "${t.name}"`).all()]))
}

const place = (card: VirtualNtag424) => createVirtualReader<VirtualNtag424>('Virtual reader').place(card)

describe('chip commands', () => {
  test('dry-run prints the plan and writes nothing', async () => {
    const gw = await seedGateway('per_chip')
    const before = snapshot(gw.store)
    const plan = dryRunPlan({ profile: (await gw.store.chipProfiles.getByName(gw.teamId, gw.profileName))!, template: TEMPLATE })
    expect(plan.url).toContain('?e=')
    expect(plan.consequences).toEqual([])
    expect(snapshot(gw.store)).toBe(before)
  })

  test('--record writes the transcript as a tap fixture with mode 0600; nothing else holds a key', async () => {
    const gw = await seedGateway('per_chip')
    const profile = (await gw.store.chipProfiles.getByName(gw.teamId, gw.profileName))!
    const file = path.join(testDir('tapgate-rec-'), 'provision.jsonl')
    const recorder = new TranscriptRecorder(file, 'test')
    const outcomes: CardOutcome[] = []
    for (const uid of ['04DE5F1EACC040', '04A1B2C3D4E5F6'])
      outcomes.push(
        await provisionCard({ store: gw.store, secret: gw.secret, card: place(new VirtualNtag424({ uid, blank: true })), teamId: gw.teamId, profile, template: TEMPLATE, originalityKey: VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY, recorder }),
      )
    recorder.close()
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    const fixture = parseFixture(fs.readFileSync(file, 'utf8'))
    expect(fixture.taps).toHaveLength(2)
    expect(fixture.taps[0]!.exchanges.some((e) => e.command.startsWith('90C4'))).toBe(true)
    expect(batchSummary(outcomes)).toEqual({ provisioned: 2, resumed: 0, refused: [] })
    // The journal's steps hold status words and times only.
    const steps = JSON.stringify(gw.store.db.prepare('SELECT * FROM chip_provisioning_steps').all())
    expect(steps).not.toMatch(/[0-9A-F]{32}/i)
  })

  test('a batch of 10 blank cards: all provisioned, each verified', async () => {
    const gw = await seedGateway('boltcard')
    const profile = (await gw.store.chipProfiles.getByName(gw.teamId, gw.profileName))!
    const outcomes: CardOutcome[] = []
    for (let i = 0; i < 10; i++) {
      const card = new VirtualNtag424({ uid: `04DE5F1EACC0${i.toString(16).padStart(2, '0').toUpperCase()}`, blank: true })
      outcomes.push(await provisionCard({ store: gw.store, secret: gw.secret, card: place(card), teamId: gw.teamId, profile, template: TEMPLATE, originalityKey: VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY }))
    }
    expect(batchSummary(outcomes)).toEqual({ provisioned: 10, resumed: 0, refused: [] })
  })

  test('inspect: a blank card is factory, a provisioned one is ours', async () => {
    const gw = await seedGateway('static')
    const profile = (await gw.store.chipProfiles.getByName(gw.teamId, gw.profileName))!
    const card = new VirtualNtag424({ uid: '04DE5F1EACC040', blank: true })
    const before = await inspectCard(gw.store, place(card), VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY)
    expect(before).toMatchObject({ verdict: { kind: 'factory' }, originality: true, keyVersions: [0, 0, 0, 0, 0] })
    await provisionCard({ store: gw.store, secret: gw.secret, card: place(card), teamId: gw.teamId, profile, template: TEMPLATE, originalityKey: VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY })
    expect((await inspectCard(gw.store, place(card), VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY)).verdict.kind).toBe('tapgate')
    // Re-provisioning under a static scheme would keep the file key: refused.
    const again = await provisionCard({ store: gw.store, secret: gw.secret, card: place(card), teamId: gw.teamId, profile, template: TEMPLATE, originalityKey: VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY })
    expect(again).toMatchObject({ ok: false, reason: 'refused' })
  })

  test('a profile whose keys would leave a slot at the factory key (the demo\'s zero keys) is refused as an outcome, before any write', async () => {
    const gw = await seedGateway('static')
    await upsertChipProfile(gw.store, gw.secret, { teamId: gw.teamId, name: 'zero', keyScheme: 'static', metaKey: '0'.repeat(32), fileKey: '0'.repeat(32), now: Date.now() })
    const profile = (await gw.store.chipProfiles.getByName(gw.teamId, 'zero'))!
    const card = new VirtualNtag424({ uid: '04DE5F1EACC040', blank: true })
    // An outcome, not a throw: the CLI prints it and ends, where a throw left the single-card run waiting.
    const outcome = await provisionCard({ store: gw.store, secret: gw.secret, card: place(card), teamId: gw.teamId, profile, template: TEMPLATE, originalityKey: VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY })
    expect(outcome).toMatchObject({ ok: false, reason: 'refused', message: expect.stringContaining('factory zero key') })
    expect(await gw.store.provisioning.latest('04DE5F1EACC040')).toBeUndefined()
    expect((await inspectCard(gw.store, place(card), VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY)).keyVersions).toEqual([0, 0, 0, 0, 0])
  })

  test('a card without a valid originality signature is refused before any write', async () => {
    const gw = await seedGateway('per_chip')
    const profile = (await gw.store.chipProfiles.getByName(gw.teamId, gw.profileName))!
    const card = new VirtualNtag424({ uid: '04DE5F1EACC040', blank: true })
    // NXP's key does not verify the virtual card's test signature.
    const outcome = await provisionCard({ store: gw.store, secret: gw.secret, card: place(card), teamId: gw.teamId, profile, template: TEMPLATE })
    expect(outcome).toMatchObject({ ok: false, reason: 'refused' })
    expect(await gw.store.provisioning.latest('04DE5F1EACC040')).toBeUndefined()
  })
})
