import { describe, expect, test } from 'vitest'
import { keySchemes } from '../../../src/db/chipProfiles.js'
import type { ProvisioningRun } from '../../../src/db/provisioning.js'
import { FACTORY_NDEF_SETTINGS } from '../../../src/provisioning/fileSettings.js'
import { classifyChip } from '../../../src/provisioning/run/inspectChip.js'
import { openRunKeys, sealRunKeys } from '../../../src/provisioning/run/keySession.js'
import { planProvisioning, ProvisioningPlanError } from '../../../src/provisioning/run/planProvisioning.js'
import { factoryKeys, nextKeyVersion, provisioningKeys, ZERO_KEY } from '../../../src/provisioning/run/provisioningKeys.js'
import { deriveBoltCardKeys, diversifyAn10922 } from '../../../src/sun/index.js'
import { PROFILE_KEYS, seedGateway, TEMPLATE } from './runHelpers.js'

const UID = '04DE5F1EACC040'
const profile = (layout: unknown = null) => ({ id: 1, name: 'tags', keyScheme: 'per_chip' as const, mode: 'aes' as const, layout: layout as null })

describe('planProvisioning', () => {
  test('plans NDEF, writes, file settings and slots, and holds no key', () => {
    const plan = planProvisioning({ profile: profile(), template: TEMPLATE })
    expect(plan.url).toBe(`https://tap.example/t?e=${'0'.repeat(32)}&c=${'0'.repeat(16)}`)
    expect(plan.fileSettings.sdmAccessRights).toEqual({ metaRead: '1', fileRead: '2', ctrRet: 'F' })
    expect(plan.fileSettingsHex.startsWith('4000E0C1FF12')).toBe(true)
    expect(plan.ndefWrites[0]).toEqual({ offset: 0, length: 2 })
    expect(plan.ndefWrites.at(-1)).toEqual({ offset: 0, length: 2 })
    expect(plan.slots.map((s) => s.role)).toEqual(['master', 'meta', 'file', 'spare', 'spare'])
    const text = JSON.stringify(plan).toUpperCase()
    for (const key of Object.values(PROFILE_KEYS)) expect(text).not.toContain(key)
  })

  test("refuses a template the profile's layout would read elsewhere", () => {
    const layout = { piccOffset: 30, macInputOffset: 70, macOffset: 70, mode: 'aes' }
    expect(() => planProvisioning({ profile: profile(layout), template: TEMPLATE })).toThrow(/offset layout/)
    expect(() => planProvisioning({ profile: profile({ piccParam: 'p', macParam: 'c' }), template: TEMPLATE })).toThrow(ProvisioningPlanError)
    expect(() => planProvisioning({ profile: profile({ piccParam: 'e', macParam: 'c' }), template: TEMPLATE })).not.toThrow()
  })

  test('LRP needs an LRP profile and --lrp', () => {
    expect(() => planProvisioning({ profile: profile(), template: TEMPLATE, lrp: true })).toThrow(/LRP profile/)
    const lrp = { ...profile(), mode: 'lrp' as const }
    expect(() => planProvisioning({ profile: lrp, template: TEMPLATE })).toThrow(/--lrp --irreversible/)
    expect(planProvisioning({ profile: lrp, template: TEMPLATE, lrp: true }).irreversible).toEqual(['lrp'])
  })

  test('the data sheet rules are checked before anything is sent', () => {
    expect(() => planProvisioning({ profile: profile(), template: 'https://tap.example/t?e={picc}' })).toThrow(/\{mac\}/)
  })
})

describe('provisioningKeys', () => {
  test.each(keySchemes)('%s: five non-zero keys, key 0 the chip’s own', async (scheme) => {
    const { store, secret, teamId, profileName } = await seedGateway(scheme)
    const row = (await store.chipProfiles.getByName(teamId, profileName))!
    const a = provisioningKeys({ profile: row, secret, uid: UID, keyVersion: 1 })
    const b = provisioningKeys({ profile: row, secret, uid: '04A1B2C3D4E5F6', keyVersion: 1 })
    for (const k of a) expect(k.equals(ZERO_KEY)).toBe(false)
    expect(a[0].equals(b[0])).toBe(false)
    expect(a[0].equals(a[1]) || a[0].equals(a[2])).toBe(false)
    if (scheme !== 'sdm_backend' && scheme !== 'boltcard') expect(a[1].toString('hex').toUpperCase()).toBe(PROFILE_KEYS.metaKey)
    if (scheme === 'static') expect(a[2].toString('hex').toUpperCase()).toBe(PROFILE_KEYS.fileKey)
    if (scheme === 'an10922') expect(a[2].equals(diversifyAn10922({ masterKey: PROFILE_KEYS.masterKey, m: UID }))).toBe(true)
    if (scheme === 'boltcard') {
      const bolt = deriveBoltCardKeys({ issuerKey: PROFILE_KEYS.masterKey, uid: UID, version: 1 })
      expect(a.map((k) => k.toString('hex'))).toEqual([bolt.k0, bolt.k1, bolt.k2, bolt.k3, bolt.k4].map((k) => k.toString('hex')))
      expect(provisioningKeys({ profile: row, secret, uid: UID, keyVersion: 2 })[2].equals(a[2])).toBe(false)
    }
  })

  test('key versions are never 00 and never one the chip holds', () => {
    expect(nextKeyVersion(0, [0, 0, 0, 0, 0])).toBe(1)
    expect(nextKeyVersion(1, [1, 2, 1, 1, 1])).toBe(3)
    expect(nextKeyVersion(255, [1, 1, 1, 1, 1])).toBe(258)
  })
})

describe('journal', () => {
  test('sealed keys round-trip, bound to their run and slot, and no key is stored in clear', async () => {
    const { store, secret, teamId } = await seedGateway('per_chip')
    const now = Date.now()
    const id = await store.provisioning.insert({
      uid: UID, teamId, profileId: null, kind: 'provision', state: 'pending', mode: 'aes', randomId: false,
      keyVersion: 1, targetVersions: [1, 1, 1, 1, 1], slotVersions: [0, 0, 0, 0, 0], plan: '{}', now,
    })
    const keys = factoryKeys().map((_, i) => Buffer.alloc(16, i + 1)) as ReturnType<typeof factoryKeys>
    const sealed = sealRunKeys(secret, id, keys, factoryKeys())
    const sealedBefore = await store.sealedKeys.count()
    await store.provisioning.setKeys(id, sealed.keys, sealed.old, now)
    // The gateway secret check counts a run's keys too: a new secret.key would lose every chip's own key 0.
    expect(await store.sealedKeys.count()).toBe(sealedBefore + 1)
    const run = (await store.provisioning.get(id))!
    expect(run.oldKeys).toEqual([null, null, null, null, null])
    expect(openRunKeys(secret, run).keys.map((k) => k.toString('hex'))).toEqual(keys.map((k) => k.toString('hex')))
    // A blob moved to another slot no longer opens.
    expect(() => openRunKeys(secret, { ...run, keys: [run.keys[1], run.keys[0], run.keys[2], run.keys[3], run.keys[4]] })).toThrow()
    await store.provisioning.addStep({ runId: id, step: 'ChangeKey 1', sw: '9100', ms: 3, ok: true, detail: null, at: now })
    expect(await store.provisioning.steps(id)).toEqual([{ runId: id, step: 'ChangeKey 1', sw: '9100', ms: 3, ok: true, detail: null, at: now }])
    const dump = store.db.prepare('SELECT * FROM chip_provisioning').all()
    expect(JSON.stringify(dump)).not.toContain(Buffer.alloc(16, 2).toString('hex'))
  })
})

describe('classifyChip', () => {
  const factoryFiles = [null, { fileType: 0, fileSize: 256, settings: FACTORY_NDEF_SETTINGS }, null]
  const run = (over: Partial<ProvisioningRun>): ProvisioningRun => ({
    id: 7, uid: UID, teamId: 1, profileId: 1, kind: 'provision', state: 'pending', mode: 'aes', randomId: false, keyVersion: 1,
    targetVersions: [1, 1, 1, 1, 1], slotVersions: [0, 0, 0, 0, 0], keys: [null, null, null, null, null],
    oldKeys: [null, null, null, null, null], plan: JSON.stringify({ startVersions: [0, 0, 0, 0, 0] }), failure: null, createdAt: 0, updatedAt: 0, ...over,
  })
  test('factory, partial, tapgate, foreign', () => {
    expect(classifyChip({ uid: UID, keyVersions: [0, 0, 0, 0, 0], files: factoryFiles }, undefined)).toEqual({ kind: 'factory' })
    expect(classifyChip({ uid: UID, keyVersions: [0, 1, 1, 0, 0], files: [] }, run({}))).toEqual({ kind: 'partial', runId: 7, done: [1, 2], pending: [0, 3, 4] })
    expect(classifyChip({ uid: UID, keyVersions: [1, 1, 1, 1, 1], files: [] }, run({ state: 'provisioned' }))).toEqual({ kind: 'tapgate', runId: 7 })
    expect(classifyChip({ uid: UID, keyVersions: [0, 5, 0, 0, 0], files: [] }, run({})).kind).toBe('foreign')
    expect(classifyChip({ uid: UID, keyVersions: [2, 2, 2, 2, 2], files: [] }, undefined).kind).toBe('foreign')
    expect(classifyChip({ uid: null, keyVersions: [0, 0, 0, 0, 0], files: factoryFiles }, undefined).kind).toBe('foreign')
  })
})
