import fs from 'node:fs'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import type { Store } from '../../src/db/store.js'
import { BaseError, ValidationError } from '../../src/errors.js'
import { SealedKeyError } from '../../src/keys/errors.js'
import { openKey } from '../../src/keys/sealKey.js'
import { generateSunMessage } from '../../src/sun/index.js'
import {
  assertSecretOpensStoredKeys,
  chipProfileView,
  setChipVerification,
  unopenableProfiles,
  upsertChipProfile,
} from '../../src/profiles/chipProfiles.js'
import { chipKeyContext, profileKeyContext } from '../../src/keys/keyContexts.js'
import { createKeyring } from '../../src/taps/createKeyring.js'
import { verifyTap } from '../../src/taps/verifyTap.js'
import { makeTempDir, openBackendStore } from '../helpers/gateway.js'
import { rejected } from '../helpers/thrown.js'

const SECRET = Buffer.alloc(32, 0x11)
const OTHER_SECRET = Buffer.alloc(32, 0x22)
const META = '6A1C93F0B27E48D5A0C3E9F1728B4D06'
const FILE = 'B83D02E7C45A9F16D0E2A4C8B6F13579'
const MASTER = '3F9B2C7E14A85D60E1C9B3A7F2D48E05'
const UID = '04C0FFEE00AA01'
const TAG = '04144682BA7380'

let dataDir: string
let store: Store
let teamId: number
beforeEach(async () => {
  dataDir = makeTempDir('tapgate-profiles-')
  store = await openBackendStore(dataDir)
  teamId = await store.teams.insert({ name: 'Acme', redirectUrl: null, now: 1 })
  await store.chips.insert({ uid: UID, teamId, groupId: null, kind: 'ntag424', redirectUrl: null, now: 1 })
  await store.chips.insert({ uid: TAG, teamId, groupId: null, kind: 'ntag21x', redirectUrl: null, now: 1 })
})
afterEach(async () => {
  await store.close()
  fs.rmSync(dataDir, { recursive: true, force: true })
})

const rejects = (promise: Promise<unknown>) => rejected(promise, BaseError)

const staticProfile = (extra: Partial<Parameters<typeof upsertChipProfile>[2]> = {}) =>
  upsertChipProfile(store, SECRET, { teamId, name: 'tags', keyScheme: 'static', metaKey: META, fileKey: FILE, now: 1_000, ...extra })

describe('upsertChipProfile', () => {
  test('seals each key under the secret, bound to the profile and slot; the view shows no key', async () => {
    const id = await staticProfile()
    const row = (await store.chipProfiles.get(id))!
    expect(row).toMatchObject({ teamId, name: 'tags', mode: 'aes', keyScheme: 'static', layout: null, masterKey: null, createdAt: 1_000, updatedAt: 1_000 })
    expect(openKey(SECRET, row.metaKey!, profileKeyContext(id, 'meta')).toString('hex').toUpperCase()).toBe(META)
    expect(openKey(SECRET, row.fileKey!, profileKeyContext(id, 'file')).toString('hex').toUpperCase()).toBe(FILE)
    expect(row.metaKey!.includes(Buffer.from(META, 'hex'))).toBe(false)
    expect(chipProfileView(row)).toEqual({ profileId: id, teamId, name: 'tags', mode: 'aes', keyScheme: 'static', layout: null, urlTemplate: null })
  })

  test('the same team and name updates in place; keys left out are kept, and updatedAt moves even within one millisecond', async () => {
    const id = await staticProfile()
    const keyring = createKeyring(store, SECRET)
    const before = (await keyring.byId(id))!
    expect(await staticProfile({ mode: 'lrp', metaKey: undefined, fileKey: undefined, layout: { piccParam: 'p', macParam: 'm' } })).toBe(id)
    const row = (await store.chipProfiles.get(id))!
    expect(row).toMatchObject({ mode: 'lrp', createdAt: 1_000, updatedAt: 1_001, layout: JSON.stringify({ piccParam: 'p', macParam: 'm' }) })
    expect(openKey(SECRET, row.fileKey!, profileKeyContext(id, 'file')).toString('hex').toUpperCase()).toBe(FILE)
    // The keyring notices the change (its fingerprint is id:updatedAt).
    expect(await keyring.byId(id)).not.toBe(before)
    expect((await keyring.byId(id))!.profile.mode).toBe('lrp')
    // Mode and layout left out keep what is stored; layout null goes back to the default names.
    await staticProfile({ metaKey: undefined, fileKey: undefined })
    expect(await store.chipProfiles.get(id)).toMatchObject({ mode: 'lrp', layout: JSON.stringify({ piccParam: 'p', macParam: 'm' }) })
    await staticProfile({ metaKey: undefined, fileKey: undefined, layout: null })
    expect((await store.chipProfiles.get(id))!.layout).toBeNull()
    expect(await store.chipProfiles.listByTeam(teamId)).toHaveLength(1)
  })

  test('changing the scheme drops the keys the new one does not use', async () => {
    const id = await staticProfile()
    await upsertChipProfile(store, SECRET, { teamId, name: 'tags', keyScheme: 'an10922', masterKey: MASTER, now: 2_000 })
    const row = (await store.chipProfiles.get(id))!
    expect(row.keyScheme).toBe('an10922')
    expect(row.fileKey).toBeNull()
    expect(openKey(SECRET, row.metaKey!, profileKeyContext(id, 'meta')).toString('hex').toUpperCase()).toBe(META)
    expect(openKey(SECRET, row.masterKey!, profileKeyContext(id, 'master')).toString('hex').toUpperCase()).toBe(MASTER)
  })

  test('an offset layout is pinned to the profile mode, and a layout that says otherwise is refused', async () => {
    const id = await staticProfile({ mode: 'lrp', layout: { piccOffset: 28, macInputOffset: 81, macOffset: 81 } })
    expect(chipProfileView((await store.chipProfiles.get(id))!).layout).toEqual({ piccOffset: 28, macInputOffset: 81, macOffset: 81, mode: 'lrp' })
    // A mode change re-pins the stored layout.
    await staticProfile({ mode: 'aes', metaKey: undefined, fileKey: undefined })
    expect(chipProfileView((await store.chipProfiles.get(id))!).layout).toMatchObject({ mode: 'aes' })
    const error = await rejects(staticProfile({ mode: 'aes', layout: { piccOffset: 28, macInputOffset: 81, macOffset: 81, mode: 'lrp' } }))
    expect(error.errors).toEqual({ 'layout.mode': "The layout says LRP but the profile's mode is AES" })
  })

  test('every problem at once, by field, and never a key in a message', async () => {
    const error = await rejects(upsertChipProfile(store, SECRET, {
        teamId,
        name: 'broken',
        keyScheme: 'an10922',
        fileKey: FILE,
        masterKey: `${MASTER}00`,
        layout: { piccParam: 'e', macParam: 'e' },
        now: 1,
      }),
    )
    expect(error).toBeInstanceOf(ValidationError)
    expect(error).toMatchObject({ statusCode: 400, code: 'validation_failed', message: 'Chip profile "broken" is not valid' })
    expect(error.errors).toMatchInlineSnapshot(`
      {
        "fileKey": "Key scheme an10922 does not use a fileKey (it needs metaKey and masterKey)",
        "layout": "the PICCData, MAC and file data parameters must have different names",
        "masterKey": "Must be 32 hex characters (an AES-128 key), got 34 characters",
        "metaKey": "Key scheme an10922 needs a metaKey",
      }
    `)
    expect(JSON.stringify(error.errors)).not.toMatch(new RegExp(`${FILE}|${MASTER}`, 'i'))
    expect(await store.chipProfiles.listByTeam(teamId)).toEqual([])
  })

  test('each scheme asks for its own keys', async () => {
    const needs = async (keyScheme: Parameters<typeof upsertChipProfile>[2]['keyScheme']) =>
      Object.keys((await rejects(upsertChipProfile(store, SECRET, { teamId, name: keyScheme, keyScheme, now: 1 }))).errors!).sort()
    expect(await needs('static')).toEqual(['fileKey', 'metaKey'])
    expect(await needs('per_chip')).toEqual(['metaKey'])
    expect(await needs('an10922')).toEqual(['masterKey', 'metaKey'])
    expect(await needs('sdm_backend')).toEqual(['masterKey'])
    expect(await needs('boltcard')).toEqual(['masterKey'])
  })

  test('an unknown team is a 404', async () => {
    expect(await rejects(upsertChipProfile(store, SECRET, { teamId: 99, name: 'x', keyScheme: 'sdm_backend', masterKey: MASTER, now: 1 }))).toMatchObject({
      statusCode: 404,
      code: 'team_not_found',
    })
  })

  test('a stored key sealed under another secret is not kept: give it again', async () => {
    await staticProfile()
    const error = await rejects(upsertChipProfile(store, OTHER_SECRET, { teamId, name: 'tags', keyScheme: 'static', fileKey: FILE, now: 2_000 }))
    expect(error.errors).toEqual({
      metaKey: 'The stored metaKey does not open under this gateway secret (it was sealed under another one): give the key again',
    })
    // Giving every key re-seals the profile under the new secret.
    const id = await upsertChipProfile(store, OTHER_SECRET, { teamId, name: 'tags', keyScheme: 'static', metaKey: META, fileKey: FILE, now: 3_000 })
    expect(await unopenableProfiles(store, OTHER_SECRET)).toEqual([])
    expect(await unopenableProfiles(store, SECRET)).toEqual([{ profileId: id, teamId, name: 'tags', context: profileKeyContext(id, 'meta') }])
  })
})

describe('setChipVerification', () => {
  test('puts a chip under a profile; random UID and key version are set, and kept when left out', async () => {
    const id = await staticProfile()
    await setChipVerification(store, SECRET, { uid: UID, teamId, profileName: 'tags', randomUid: true, keyVersion: 3 })
    expect(await store.chips.get(UID)).toMatchObject({ profileId: id, randomUid: 1, keyVersion: 3, fileKey: null })
    await setChipVerification(store, SECRET, { uid: UID, teamId, profileName: 'tags' })
    expect(await store.chips.get(UID)).toMatchObject({ profileId: id, randomUid: 1, keyVersion: 3 })
    await setChipVerification(store, SECRET, { uid: UID, teamId, profileName: null, randomUid: false })
    expect(await store.chips.get(UID)).toMatchObject({ profileId: null, randomUid: 0 })
  })

  test('per_chip: the file key is sealed to the chip; kept on a later call; dropped on leaving the profile', async () => {
    const perChip = await upsertChipProfile(store, SECRET, { teamId, name: 'own', keyScheme: 'per_chip', metaKey: META, now: 1 })
    expect((await rejects(setChipVerification(store, SECRET, { uid: UID, teamId, profileName: 'own' }))).errors).toEqual({
      fileKey: "Profile own keeps keys per chip: give the chip's fileKey",
    })
    await setChipVerification(store, SECRET, { uid: UID, teamId, profileName: 'own', fileKey: FILE })
    const sealed = (await store.chips.get(UID))!.fileKey!
    expect(openKey(SECRET, sealed, chipKeyContext(UID)).toString('hex').toUpperCase()).toBe(FILE)
    await setChipVerification(store, SECRET, { uid: UID, teamId, profileName: 'own', keyVersion: 2 })
    expect(await store.chips.get(UID)).toMatchObject({ profileId: perChip, fileKey: sealed, keyVersion: 2 })

    await staticProfile()
    await setChipVerification(store, SECRET, { uid: UID, teamId, profileName: 'tags' })
    expect((await store.chips.get(UID))!.fileKey).toBeNull()
    // Back on the per-chip profile, the old key is gone: it must be given again.
    expect((await rejects(setChipVerification(store, SECRET, { uid: UID, teamId, profileName: 'own' }))).errors).toHaveProperty('fileKey')
  })

  test('refusals: a file key on a shared-key profile, an NTAG 21x chip, a bad key version, unknown chip or profile', async () => {
    await staticProfile()
    expect((await rejects(setChipVerification(store, SECRET, { uid: UID, teamId, profileName: 'tags', fileKey: FILE }))).errors).toEqual({
      fileKey: 'Profile tags (key scheme static) does not keep keys per chip',
    })
    expect((await rejects(setChipVerification(store, SECRET, { uid: TAG, teamId, profileName: 'tags' }))).errors).toEqual({
      profile: 'Chip 04144682BA7380 is an NTAG 21x: its mirrors carry no MAC, so no keys apply',
    })
    expect((await rejects(setChipVerification(store, SECRET, { uid: UID, teamId, profileName: 'tags', keyVersion: -1 }))).errors).toEqual({
      keyVersion: 'Must be an integer 0…4294967295',
    })
    expect(await rejects(setChipVerification(store, SECRET, { uid: UID, teamId, profileName: 'nope' }))).toMatchObject({ statusCode: 404, code: 'profile_not_found' })
    const other = await store.teams.insert({ name: 'Other', redirectUrl: null, now: 1 })
    expect(await rejects(setChipVerification(store, SECRET, { uid: UID, teamId: other, profileName: 'tags' }))).toMatchObject({
      statusCode: 404,
      code: 'chip_not_found',
    })
    expect((await store.chips.get(UID))!.profileId).toBeNull()
  })

  test("a profile of another team cannot be used, even by name", async () => {
    const other = await store.teams.insert({ name: 'Other', redirectUrl: null, now: 1 })
    await upsertChipProfile(store, SECRET, { teamId: other, name: 'theirs', keyScheme: 'sdm_backend', masterKey: MASTER, now: 1 })
    expect(await rejects(setChipVerification(store, SECRET, { uid: UID, teamId, profileName: 'theirs' }))).toMatchObject({ code: 'profile_not_found' })
  })
})

describe('the secret check before sealing', () => {
  test('assertSecretOpensStoredKeys refuses a secret that does not open the stored keys, except for profiles being re-sealed', async () => {
    await staticProfile()
    await expect(assertSecretOpensStoredKeys(store, SECRET)).resolves.toBeUndefined()
    const error = await rejects(assertSecretOpensStoredKeys(store, OTHER_SECRET))
    expect(error).toBeInstanceOf(SealedKeyError)
    expect(error).toMatchObject({ statusCode: 503, code: 'chip_keys_unavailable', reason: 'other_secret' })
    expect(error.message).toMatchInlineSnapshot(
      `"The chip keys already stored (profile:1:meta) do not open under this gateway secret, so keys sealed now would not open for the server either. Run with the server's secret (TAPGATE_SECRET, the config secret, or secret.key in the data dir); if that secret is lost, import every profile with its keys in one file (docs/keys.md)."`,
    )
    await expect(assertSecretOpensStoredKeys(store, OTHER_SECRET, { except: (p) => p.name === 'tags' })).resolves.toBeUndefined()
  })
})

describe('a profile at work', () => {
  test('a chip verifies under its profile with the layout the profile stores', async () => {
    await upsertChipProfile(store, SECRET, {
      teamId,
      name: 'sdm',
      keyScheme: 'static',
      metaKey: META,
      fileKey: FILE,
      layout: { piccParam: 'picc_data', macParam: 'cmac', encParam: 'enc' },
      now: 1,
    })
    await setChipVerification(store, SECRET, { uid: UID, teamId, profileName: 'sdm' })
    const m = generateSunMessage({
      metaKey: META,
      fileKey: FILE,
      uid: UID,
      counter: 9,
      fileData: Buffer.from('hello, tapgate!!').toString('hex'),
      macInput: ({ encFileData }) => `${encFileData}&cmac=`,
    })
    const url = `https://tap.example.com/tap?picc_data=${m.piccData}&enc=${m.encFileData}&cmac=${m.sdmmac}`
    const tap = await verifyTap(store, createKeyring(store, SECRET), { url, source: 'phone', now: 5 })
    expect(tap).toMatchObject({ uid: UID, counter: 9, authenticated: true, fileData: Buffer.from('hello, tapgate!!').toString('hex').toUpperCase() })
  })
})
