import crypto from 'node:crypto'
import { describe, expect, test } from 'vitest'
import { sealKey } from '../../../src/keys/sealKey.js'
import { ProvisioningStopped, runKeyContext } from '../../../src/provisioning/run/keySession.js'
import { keySchemes, type KeyScheme } from '../../../src/db/chipProfiles.js'
import { CardLink } from '../../../src/provisioning/run/cardLink.js'
import { readChip } from '../../../src/provisioning/run/inspectChip.js'

import { provisionChip, readNdefUrl } from '../../../src/provisioning/run/provisionChip.js'
import { resetChip } from '../../../src/provisioning/run/resetChip.js'
import { createKeyring } from '../../../src/taps/createKeyring.js'
import { verifyTap } from '../../../src/taps/verifyTap.js'
import { VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY, VirtualNtag424 } from '../../../station/virtual-card/ntag424.js'
import { createVirtualReader } from '../../../station/virtual-card/virtualReader.js'
import { seedGateway, TEMPLATE } from './runHelpers.js'

const UID = '04DE5F1EACC040'

/** Places the card on a fresh in-process reader: one tap, one CardLink. */
function tap(card: VirtualNtag424): CardLink {
  const reader = createVirtualReader<VirtualNtag424>('Virtual reader')
  return new CardLink(reader.place(card))
}

async function setup(scheme: KeyScheme) {
  const gw = await seedGateway(scheme)
  const profile = (await gw.store.chipProfiles.getByName(gw.teamId, gw.profileName))!
  const provision = (card: VirtualNtag424) =>
    provisionChip({ store: gw.store, secret: gw.secret, link: tap(card), teamId: gw.teamId, profile, template: TEMPLATE, originalityKey: VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY })
  return { ...gw, profile, provision }
}

describe('provisionChip on the virtual card', () => {
  test.each(keySchemes)('%s: a blank card ends provisioned and its first tap verifies with counter 1', async (scheme) => {
    const gw = await setup(scheme)
    const card = new VirtualNtag424({ uid: UID, blank: true })
    const result = await gw.provision(card)
    expect(result).toMatchObject({ uid: UID, how: 'new', counter: 1 })
    expect((await gw.store.provisioning.get(result.runId))!.state).toBe('provisioned')
    const reading = await readChip(tap(card), VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY)
    expect(reading.keyVersions).toEqual([1, 1, 1, 1, 1])
    // The next tap, as a phone: counter 2.
    const url = await readNdefUrl(tap(card))
    expect(await verifyTap(gw.store, createKeyring(gw.store, gw.secret), { url, source: 'phone', now: Date.now() })).toMatchObject({ uid: UID, counter: 2 })
  })

  test('a card pulled after each step resumes and ends provisioned', async () => {
    const gw = await setup('per_chip')
    // Count the commands of an uninterrupted run first.
    const probe = new VirtualNtag424({ uid: '04A1B2C3D4E5F6', blank: true })
    const full = tap(probe)
    await provisionChip({ store: gw.store, secret: gw.secret, link: full, teamId: gw.teamId, profile: gw.profile, template: TEMPLATE, originalityKey: VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY })
    const total = full.transcript.length
    for (let n = 1; n < total; n++) {
      const uid = `04${n.toString(16).padStart(2, '0').toUpperCase()}5F1EACC040`.slice(0, 14)
      const card = new VirtualNtag424({ uid, blank: true })
      card.removeAfterCommands(n, { processLast: n % 2 === 0 })
      await expect(gw.provision(card), `pulled after ${n}`).rejects.toBeInstanceOf(ProvisioningStopped)
      const result = await gw.provision(card)
      expect(result.counter, `pulled after ${n}`).toBe(1)
      expect((await gw.store.provisioning.get(result.runId))!.state).toBe('provisioned')
    }
  }, 120_000)

  test('a wrong stored key stops after one attempt and leaves the card unchanged', async () => {
    const gw = await setup('per_chip')
    const card = new VirtualNtag424({ uid: UID, blank: true })
    const { runId } = await gw.provision(card)
    // A validly sealed but wrong key 0 in the journal (what a restored old backup would hold).
    gw.store.db.prepare('UPDATE chip_provisioning SET key0 = ? WHERE id = ?').run(sealKey(gw.secret, crypto.randomBytes(16), runKeyContext(runId, 0, 'new')), runId)
    const before = await readChip(tap(card), VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY)
    const link = tap(card)
    const stopped = await resetChip({ store: gw.store, secret: gw.secret, link, uid: UID }).catch((e: unknown) => e)
    expect(stopped).toBeInstanceOf(ProvisioningStopped)
    expect((stopped as ProvisioningStopped).reason).toBe('auth_failed')
    expect(link.transcript.filter((e) => e.command.startsWith('9071') || e.command.startsWith('9077'))).toHaveLength(1)
    const after = await readChip(tap(card), VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY)
    expect(after.keyVersions).toEqual(before.keyVersions)
    expect(after.files[1]).toEqual(before.files[1])
    // And the next attempt refuses without trying at all.
    const again = tap(card)
    await expect(resetChip({ store: gw.store, secret: gw.secret, link: again, uid: UID })).rejects.toThrow()
    expect(again.transcript.filter((e) => e.command.startsWith('9071'))).toHaveLength(0)
  })

  test('reset returns the card to factory and its old URLs fail', async () => {
    const gw = await setup('per_chip')
    const card = new VirtualNtag424({ uid: UID, blank: true })
    await gw.provision(card)
    const oldUrl = await readNdefUrl(tap(card))
    const result = await resetChip({ store: gw.store, secret: gw.secret, link: tap(card), uid: UID, originalityKey: VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY })
    expect(result.cannotUndo.length).toBeGreaterThan(0)
    const reading = await readChip(tap(card), VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY)
    expect(reading.keyVersions).toEqual([0, 0, 0, 0, 0])
    await expect(verifyTap(gw.store, createKeyring(gw.store, gw.secret), { url: oldUrl, source: 'phone', now: Date.now() })).rejects.toThrow()
    // And it provisions again, with a new file key.
    expect((await gw.provision(card)).counter).toBe(1)
  })

  test('LRP: a blank card is switched to LRP, provisioned, and taps verify', async () => {
    const gw = await seedGateway('per_chip', 'lrp')
    const profile = (await gw.store.chipProfiles.getByName(gw.teamId, gw.profileName))!
    const card = new VirtualNtag424({ uid: UID, blank: true })
    const result = await provisionChip({ store: gw.store, secret: gw.secret, link: tap(card), teamId: gw.teamId, profile, template: TEMPLATE, lrp: true, originalityKey: VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY })
    expect(result.counter).toBe(1)
    expect(result.url).toMatch(/\?e=[0-9A-F]{48}&/)
  })

  test('LRP: a card pulled after each step resumes (also when the switch to LRP lost its answer)', async () => {
    const gw = await seedGateway('per_chip', 'lrp')
    const profile = (await gw.store.chipProfiles.getByName(gw.teamId, gw.profileName))!
    const run = (card: VirtualNtag424, link = tap(card)) =>
      provisionChip({ store: gw.store, secret: gw.secret, link, teamId: gw.teamId, profile, template: TEMPLATE, lrp: true, originalityKey: VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY })
    const probe = new VirtualNtag424({ uid: '04A1B2C3D4E5F6', blank: true })
    const full = tap(probe)
    await run(probe, full)
    for (let n = 1; n < full.transcript.length; n++) {
      const uid = `04${n.toString(16).padStart(2, '0').toUpperCase()}5F1EACC040`.slice(0, 14)
      for (const processLast of [false, true]) {
        const card = new VirtualNtag424({ uid: processLast ? uid.replace(/^04/, '05') : uid, blank: true })
        card.removeAfterCommands(n, { processLast })
        await expect(run(card), `pulled after ${n}`).rejects.toBeInstanceOf(ProvisioningStopped)
        expect((await run(card)).counter, `pulled after ${n} (${processLast})`).toBe(1)
      }
    }
  }, 120_000)

  test('Random ID: switched on last, the first tap still verifies; the chip is marked random-UID', async () => {
    const gw = await setup('per_chip')
    const card = new VirtualNtag424({ uid: UID, blank: true })
    const result = await provisionChip({ store: gw.store, secret: gw.secret, link: tap(card), teamId: gw.teamId, profile: gw.profile, template: TEMPLATE, randomId: true, originalityKey: VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY })
    expect(result.counter).toBe(1)
    expect((await gw.store.chips.get(UID))!.randomUid).toBe(1)
    expect((await readChip(tap(card))).uid).toBeNull()
    // Reset learns the UID with one authentication and GetCardUID, and refuses another chip's name.
    await expect(resetChip({ store: gw.store, secret: gw.secret, link: tap(card), uid: '04A1B2C3D4E5F6' })).rejects.toThrow(ProvisioningStopped)
    await resetChip({ store: gw.store, secret: gw.secret, link: tap(card), uid: UID })
    expect((await readChip(tap(card))).keyVersions).toEqual([0, 0, 0, 0, 0])
  })

  test('Random ID: a card pulled after each step resumes', async () => {
    const gw = await setup('per_chip')
    const run = (card: VirtualNtag424, link = tap(card)) =>
      provisionChip({ store: gw.store, secret: gw.secret, link, teamId: gw.teamId, profile: gw.profile, template: TEMPLATE, randomId: true, originalityKey: VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY })
    const probe = new VirtualNtag424({ uid: '04A1B2C3D4E5F6', blank: true })
    const full = tap(probe)
    await run(probe, full)
    for (let n = 1; n < full.transcript.length; n++) {
      const uid = `04${n.toString(16).padStart(2, '0').toUpperCase()}5F1EACC040`.slice(0, 14)
      const card = new VirtualNtag424({ uid, blank: true })
      card.removeAfterCommands(n, { processLast: true })
      await expect(run(card), `pulled after ${n}`).rejects.toBeInstanceOf(ProvisioningStopped)
      expect((await run(card)).uid, `pulled after ${n}`).toBe(uid)
    }
  }, 120_000)

  test('re-provisioning a per_chip chip changes its file key: the old URLs fail', async () => {
    const gw = await setup('per_chip')
    const card = new VirtualNtag424({ uid: UID, blank: true })
    await gw.provision(card)
    const oldUrl = await readNdefUrl(tap(card))
    const again = await gw.provision(card)
    expect(again).toMatchObject({ how: 'reprovisioned', keyVersion: 2, counter: 1 })
    await expect(verifyTap(gw.store, createKeyring(gw.store, gw.secret), { url: oldUrl, source: 'phone', now: Date.now() })).rejects.toThrow()
  })

  test('a card pulled at each step of a reset resumes and ends at factory', async () => {
    const gw = await setup('per_chip')
    const probe = new VirtualNtag424({ uid: '04A1B2C3D4E5F6', blank: true })
    await gw.provision(probe)
    const full = tap(probe)
    await resetChip({ store: gw.store, secret: gw.secret, link: full, uid: '04A1B2C3D4E5F6', originalityKey: VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY })
    for (let n = 1; n < full.transcript.length; n++) {
      const uid = `04${n.toString(16).padStart(2, '0').toUpperCase()}5F1EACC040`.slice(0, 14)
      const card = new VirtualNtag424({ uid, blank: true })
      await gw.provision(card)
      card.removeAfterCommands(n, { processLast: n % 2 === 1 })
      await expect(resetChip({ store: gw.store, secret: gw.secret, link: tap(card), uid }), `pulled after ${n}`).rejects.toBeInstanceOf(ProvisioningStopped)
      await resetChip({ store: gw.store, secret: gw.secret, link: tap(card), uid })
      expect((await readChip(tap(card))).keyVersions, `pulled after ${n}`).toEqual([0, 0, 0, 0, 0])
    }
  }, 120_000)

  test('reset refuses another chip than the one named', async () => {
    const gw = await setup('per_chip')
    const card = new VirtualNtag424({ uid: UID, blank: true })
    await gw.provision(card)
    await expect(resetChip({ store: gw.store, secret: gw.secret, link: tap(card), uid: '04A1B2C3D4E5F6' })).rejects.toThrow(/not 04A1B2C3D4E5F6/)
  })
})
