import { describe, expect, test } from 'vitest'
import { provisionTemplate } from '../../src/cli/commands/provisionTemplate.js'
import { UsageError } from '../../src/cli/usage.js'
import { ConfigSchema } from '../../src/config.js'
import type { SqliteStore } from '../../src/db/store.js'
import { BaseError, ValidationError } from '../../src/errors.js'
import { importData, parseImportFile } from '../../src/importer/importData.js'
import { planNdefUrl } from '../../src/provisioning/ndefUrl.js'
import { dryRunPlan } from '../../src/provisioning/run/provisioningBatch.js'
import { ProvisioningPlanError } from '../../src/provisioning/run/planProvisioning.js'
import { chipProfileView, upsertChipProfile } from '../../src/profiles/chipProfiles.js'
import { profileKeysFor } from '../../fixtures/provisioningKeys.js'
import { PROFILE_KEYS, seedGateway, TEMPLATE } from '../provisioning/run/runHelpers.js'
import { rejected, thrown as thrownError } from '../helpers/thrown.js'

/** Same host and parameters as TEMPLATE, a longer path: every mirror lands 2 characters later. */
const SHIFTED = 'https://tap.example/tap?e={picc}&c={mac}'

/** TEMPLATE's own offset layout, as `profile create --picc-offset … --mac-offset …` would store it. */
function offsetLayoutOf(template: string, mode: 'aes' | 'lrp' = 'aes') {
  const layout = planNdefUrl(template, { mode }).sunLayout!
  return { piccOffset: layout.piccOffset, macInputOffset: layout.macInputOffset, macOffset: layout.macOffset }
}

const thrown = (fn: () => unknown) => thrownError(fn, BaseError)
const rejects = (promise: Promise<unknown>) => rejected(promise, BaseError)

async function seed() {
  const gw = await seedGateway('static')
  const row = async () => (await gw.store.chipProfiles.getByName(gw.teamId, gw.profileName))!
  const upsert = (p: Partial<Parameters<typeof upsertChipProfile>[2]>) =>
    upsertChipProfile(gw.store, gw.secret, { teamId: gw.teamId, name: gw.profileName, keyScheme: 'static', now: Date.now(), ...p })
  return { ...gw, row, upsert }
}

const rows = (store: SqliteStore) => JSON.stringify(store.db.prepare('SELECT * FROM chip_profiles ORDER BY id').all())

describe('a chip profile holds its URL template', () => {
  test('stored, shown, kept when left out, cleared by null', async () => {
    const gw = await seed()
    expect((await gw.row()).urlTemplate).toBeNull()
    await gw.upsert({ urlTemplate: TEMPLATE })
    expect((await gw.row()).urlTemplate).toBe(TEMPLATE)
    expect(chipProfileView(await gw.row())).toMatchObject({ name: gw.profileName, urlTemplate: TEMPLATE })
    // A key rotation that does not mention the template keeps it.
    await gw.upsert({ metaKey: PROFILE_KEYS.fileKey, fileKey: PROFILE_KEYS.metaKey })
    expect((await gw.row()).urlTemplate).toBe(TEMPLATE)
    await gw.upsert({ urlTemplate: null })
    expect((await gw.row()).urlTemplate).toBeNull()
    expect(chipProfileView(await gw.row()).urlTemplate).toBeNull()
  })

  test('dry-run uses the stored template when no --url is given; a --url wins for that run and leaves the stored one', async () => {
    const gw = await seed()
    await gw.upsert({ urlTemplate: SHIFTED, layout: null })
    const stored = dryRunPlan({ profile: await gw.row(), template: provisionTemplate(undefined, await gw.row()) })
    expect(stored.template).toBe(SHIFTED)
    expect(stored.url).toMatch(/^https:\/\/tap\.example\/tap\?e=0{32}&c=0{16}$/)
    const flag = dryRunPlan({ profile: await gw.row(), template: provisionTemplate(TEMPLATE, await gw.row()) })
    expect(flag.template).toBe(TEMPLATE)
    expect((await gw.row()).urlTemplate).toBe(SHIFTED)
  })

  test('no --url and no stored template is a usage error naming both ways', async () => {
    const gw = await seed()
    const row = await gw.row()
    expect(thrownError(() => provisionTemplate(undefined, row), UsageError).message).toContain('give --url TEMPLATE, or store one on the profile: tapgate profile create ... --url TEMPLATE')
  })

  test("a template whose mirrors the profile's offset layout reads elsewhere is refused, with the other problems, and nothing is stored", async () => {
    const gw = await seed()
    await gw.upsert({ layout: offsetLayoutOf(TEMPLATE) })
    const before = rows(gw.store)
    const error = await rejects(gw.upsert({ urlTemplate: SHIFTED, fileKey: 'not hex', now: Date.now() + 10 }))
    expect(error).toBeInstanceOf(ValidationError)
    expect(error.statusCode).toBe(400)
    expect(Object.keys(error.errors!).sort()).toEqual(['fileKey', 'urlTemplate'])
    expect(error.errors!.urlTemplate).toContain("the profile's offset layout")
    expect(rows(gw.store)).toBe(before)
    // The template the layout was made from is accepted.
    await gw.upsert({ urlTemplate: TEMPLATE })
    expect((await gw.row()).urlTemplate).toBe(TEMPLATE)
  })

  test('the data-sheet rules apply too: a template without {mac} is refused', async () => {
    const gw = await seed()
    const error = await rejects(gw.upsert({ urlTemplate: 'https://tap.example/t?e={picc}' }))
    expect(error.errors).toEqual({ urlTemplate: expect.stringContaining('{mac}') })
    expect((await gw.row()).urlTemplate).toBeNull()
  })

  test('parameter names: a template the default names (e, c) cannot read is refused', async () => {
    const gw = await seed()
    const error = await rejects(gw.upsert({ urlTemplate: 'https://tap.example/t?p={picc}&m={mac}' }))
    expect(error.errors!.urlTemplate).toBeDefined()
    await gw.upsert({ urlTemplate: 'https://tap.example/t?p={picc}&m={mac}', layout: { piccParam: 'p', macParam: 'm' } })
    expect((await gw.row()).urlTemplate).toBe('https://tap.example/t?p={picc}&m={mac}')
  })

  test('changing the layout or the mode of a profile with a template to one that disagrees is refused; the row is unchanged', async () => {
    const gw = await seed()
    await gw.upsert({ layout: offsetLayoutOf(TEMPLATE), urlTemplate: TEMPLATE })
    const before = rows(gw.store)

    const layout = await rejects(gw.upsert({ layout: offsetLayoutOf(SHIFTED), now: Date.now() + 10 }))
    expect(layout).toBeInstanceOf(ValidationError)
    expect(layout.errors).toEqual({ urlTemplate: expect.stringContaining(`The stored URL template ${JSON.stringify(TEMPLATE)} does not fit`) })
    expect(rows(gw.store)).toBe(before)

    // An LRP PICCData is 48 characters, so the MAC moves: the stored AES offsets no longer match.
    const mode = await rejects(gw.upsert({ mode: 'lrp', now: Date.now() + 10 }))
    expect(mode.errors).toEqual({ urlTemplate: expect.stringContaining('does not fit') })
    expect(rows(gw.store)).toBe(before)

    // Layout and template changed together, agreeing, are accepted.
    await gw.upsert({ layout: offsetLayoutOf(SHIFTED), urlTemplate: SHIFTED })
    expect(chipProfileView(await gw.row())).toMatchObject({ layout: { ...offsetLayoutOf(SHIFTED), mode: 'aes' }, urlTemplate: SHIFTED })
  })

  test('a stored template is checked against the profile at run time too: --url still goes through the plan', async () => {
    const gw = await seed()
    await gw.upsert({ layout: offsetLayoutOf(TEMPLATE), urlTemplate: TEMPLATE })
    const row = await gw.row()
    expect(() => dryRunPlan({ profile: row, template: provisionTemplate(SHIFTED, row) })).toThrow(ProvisioningPlanError)
  })
})

describe('urlTemplate in an import file', () => {
  const config = ConfigSchema.parse({ logLevel: 'silent' })
  const doc = (urlTemplate: unknown) => ({
    teams: [
      {
        name: 'Imported',
        chipProfiles: [{ name: 'tags', keyScheme: 'static', ...profileKeysFor('static'), layout: offsetLayoutOf(TEMPLATE), urlTemplate }],
        chips: [{ uid: '04DE5F1EACC040', profile: 'tags' }],
      },
    ],
  })

  test('a good one is stored; a bad one is refused naming the path, and nothing of the file is written', async () => {
    const gw = await seed()
    const before = JSON.stringify(gw.store.db.prepare('SELECT (SELECT count(*) FROM teams) t, (SELECT count(*) FROM chips) c').get()) + rows(gw.store)
    const error = await rejects(importData(gw.store, parseImportFile(doc(SHIFTED)), { config, now: Date.now(), secret: gw.secret, signers: new Map() }))
    expect(error).toBeInstanceOf(ValidationError)
    expect(error.statusCode).toBe(400)
    expect(Object.keys(error.errors!)).toEqual(['teams.0.chipProfiles.0.urlTemplate'])
    expect(JSON.stringify(gw.store.db.prepare('SELECT (SELECT count(*) FROM teams) t, (SELECT count(*) FROM chips) c').get()) + rows(gw.store)).toBe(before)

    const wrongType = thrown(() => parseImportFile(doc(42)))
    expect(Object.keys(wrongType.errors!)).toEqual(['teams.0.chipProfiles.0.urlTemplate'])

    await importData(gw.store, parseImportFile(doc(TEMPLATE)), { config, now: Date.now(), secret: gw.secret, signers: new Map() })
    const teamId = (await gw.store.teams.getByName('Imported'))!.id
    expect((await gw.store.chipProfiles.getByName(teamId, 'tags'))!.urlTemplate).toBe(TEMPLATE)
    await importData(gw.store, parseImportFile(doc(null)), { config, now: Date.now(), secret: gw.secret, signers: new Map() })
    expect((await gw.store.chipProfiles.getByName(teamId, 'tags'))!.urlTemplate).toBeNull()
  })
})
