import { createHash } from 'node:crypto'
import fs from 'node:fs'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import type { KeyScheme } from '../../src/db/chipProfiles.js'
import { openStore, type Store } from '../../src/db/store.js'
import { an10922Input, deriveBoltCardKeys, deriveSdmBackendMetaKey, deriveSdmBackendTagKey, diversifyAn10922, generateSunMessage, toHex } from '../../src/sun/index.js'
import { setChipVerification, upsertChipProfile } from '../../src/profiles/chipProfiles.js'
import { createKeyring, type Keyring } from '../../src/taps/createKeyring.js'
import { TapRejectedError } from '../../src/taps/tapErrors.js'
import { verifyTap } from '../../src/taps/verifyTap.js'
import { makeTempDir } from '../helpers/gateway.js'

// Key diversification end to end at the domain level: a profile holds a master
// key, the chips are programmed with keys derived from it, and verifyTap must
// derive the same key from the UID inside the message.

const SECRET = Buffer.alloc(32, 0x5c)
const A = '04A1A2A3A4A5A6'
const B = '04B1B2B3B4B5B6'
const MASTER = '8F2A61C0D94E7B3355A10CE6F2983B7D'
const META = 'C4E1907A23B8D65F0E4472A9B1C3D508'

let dataDir: string
let store: Store
let keyring: Keyring
let teamId: number
let now: number

beforeEach(async () => {
  dataDir = makeTempDir('tapgate-diversify-')
  store = openStore({ dataDir })
  now = 1_000
  teamId = await store.teams.insert({ name: 'Issuer', redirectUrl: null, now })
  for (const uid of [A, B]) await store.chips.insert({ uid, teamId, groupId: null, kind: 'ntag424', redirectUrl: null, now })
  keyring = createKeyring(store, SECRET)
})
afterEach(async () => {
  await store.close()
  fs.rmSync(dataDir, { recursive: true, force: true })
})

type ChipKeys = { metaKey: Buffer | string; fileKey: Buffer | string }

/** The URL a chip programmed with `keys` writes for `counter` (gateway's default layout: e, c). */
function tapUrl(uid: string, keys: ChipKeys, counter: number, mode: 'aes' | 'lrp' = 'aes', random?: Buffer): string {
  const m = generateSunMessage({ ...keys, uid, counter, mode, random })
  return `https://tap.example.com/tap?e=${m.piccData}&c=${m.sdmmac}`
}

function tap(url: string) {
  return verifyTap(store, keyring, { url, source: 'phone', now: ++now })
}

async function rejection(url: string): Promise<{ reason: string; detail: string }> {
  try {
    await tap(url)
  } catch (error) {
    if (error instanceof TapRejectedError) return { reason: error.reason, detail: error.detail }
    throw error
  }
  throw new Error('expected the tap to be refused')
}

async function register(keyScheme: KeyScheme, keys: { metaKey?: string; fileKey?: string; masterKey?: string }, mode: 'aes' | 'lrp' = 'aes') {
  await upsertChipProfile(store, SECRET, { teamId, name: keyScheme, mode, keyScheme, ...keys, now: ++now })
}

const chipOn = (uid: string, profileName: string, extra: { fileKey?: string; keyVersion?: number } = {}) =>
  setChipVerification(store, SECRET, { uid, teamId, profileName, ...extra })

describe('AN10922 (profile: meta key + master key; file key = AN10922(master, UID))', () => {
  const keysOf = (uid: string): ChipKeys => ({ metaKey: META, fileKey: diversifyAn10922({ masterKey: MASTER, m: an10922Input({ uid }) }) })

  beforeEach(async () => {
    await register('an10922', { metaKey: META, masterKey: MASTER })
    await chipOn(A, 'an10922')
    await chipOn(B, 'an10922')
  })

  test('each chip verifies with its own diversified key, and the two keys differ', async () => {
    expect(toHex(keysOf(A).fileKey as Buffer)).not.toBe(toHex(keysOf(B).fileKey as Buffer))
    expect(await tap(tapUrl(A, keysOf(A), 1))).toMatchObject({ uid: A, counter: 1, mode: 'aes', authenticated: true })
    expect(await tap(tapUrl(B, keysOf(B), 1))).toMatchObject({ uid: B, counter: 1, authenticated: true })
  })

  test("chip A programmed with chip B's file key is refused: the gateway derives A's key from A's UID", async () => {
    expect((await rejection(tapUrl(A, { metaKey: META, fileKey: keysOf(B).fileKey }, 2))).reason).toBe('mac_mismatch')
    // Nor does the undiversified master key work as a file key.
    expect((await rejection(tapUrl(A, { metaKey: META, fileKey: MASTER }, 3))).reason).toBe('mac_mismatch')
    expect((await store.chips.get(A))!.lastCounter).toBeNull()
  })

  test('another master key in the profile refuses every chip; the right one accepts again', async () => {
    await register('an10922', { metaKey: META, masterKey: '00112233445566778899AABBCCDDEEFF' })
    expect((await rejection(tapUrl(A, keysOf(A), 4))).reason).toBe('mac_mismatch')
    await register('an10922', { metaKey: META, masterKey: MASTER })
    expect(await tap(tapUrl(A, keysOf(A), 5))).toMatchObject({ uid: A, counter: 5 })
  })

  test('LRP mode derives the same way', async () => {
    await register('an10922', { metaKey: META, masterKey: MASTER }, 'lrp')
    expect(await tap(tapUrl(B, keysOf(B), 7, 'lrp'))).toMatchObject({ uid: B, counter: 7, mode: 'lrp', authenticated: true })
    expect((await rejection(tapUrl(B, { metaKey: META, fileKey: keysOf(A).fileKey }, 8, 'lrp'))).reason).toBe('mac_mismatch')
  })
})

describe('sdm-backend "standard" (profile: master key only)', () => {
  const keysOf = (uid: string, masterKey = MASTER): ChipKeys => ({
    metaKey: deriveSdmBackendMetaKey({ masterKey }),
    fileKey: deriveSdmBackendTagKey({ masterKey, uid, keyNo: 2 }),
  })

  beforeEach(async () => {
    await register('sdm_backend', { masterKey: MASTER })
    await chipOn(A, 'sdm_backend')
    await chipOn(B, 'sdm_backend')
  })

  test('each chip verifies with the keys sdm-backend derives for it', async () => {
    expect(await tap(tapUrl(A, keysOf(A), 10))).toMatchObject({ uid: A, counter: 10, authenticated: true })
    expect(await tap(tapUrl(B, keysOf(B), 10))).toMatchObject({ uid: B, counter: 10, authenticated: true })
  })

  test("chip A programmed with chip B's file key, or with the slot-1 key, is refused", async () => {
    expect((await rejection(tapUrl(A, { metaKey: keysOf(A).metaKey, fileKey: keysOf(B).fileKey }, 11))).reason).toBe('mac_mismatch')
    expect((await rejection(tapUrl(A, { metaKey: keysOf(A).metaKey, fileKey: deriveSdmBackendTagKey({ masterKey: MASTER, uid: A, keyNo: 1 }) }, 12))).reason).toBe(
      'mac_mismatch',
    )
  })

  test("keys from another master do not even decrypt: the meta key is derived from the master too", async () => {
    const padding = Buffer.alloc(5, 0x5a) // fixed: see the next test for what random padding can decrypt to
    expect((await rejection(tapUrl(A, keysOf(A, '00112233445566778899AABBCCDDEEFF'), 13, 'aes', padding))).reason).toBe('not_sun_message')
  })

  test('a wrong master never reads as unknown_chip: garbage that decrypts to a plausible UID fails the MAC for that UID', async () => {
    // Under a wrong meta key about 3 messages in 256 decrypt to a well-formed PICCDataTag: C7 or 87 with a random
    // UID (now refused as not_sun_message, since that UID's derived key fails the MAC), or 40, counter only, which
    // names no chip at all (malformed). The padding comes from a hash of the counter: the same 900 messages every run.
    const wrong = keysOf(A, '00112233445566778899AABBCCDDEEFF')
    const verdicts = new Map<string, number>()
    for (let counter = 100; counter < 1_000; counter++) {
      const padding = createHash('sha256').update(String(counter)).digest().subarray(0, 5)
      const { reason, detail } = await rejection(tapUrl(A, wrong, counter, 'aes', padding))
      const kind = detail.includes('which is not registered') ? `${reason}: plausible UID` : detail.includes('mirrors no UID') ? `${reason}: counter only` : reason
      verdicts.set(kind, (verdicts.get(kind) ?? 0) + 1)
    }
    expect([...verdicts.keys()].sort()).toEqual(['malformed: counter only', 'not_sun_message', 'not_sun_message: plausible UID'])
    expect(verdicts.get('not_sun_message: plausible UID')).toBeGreaterThan(2)
  })

  test('a genuine chip that is not registered is unknown_chip: its MAC verifies under the derived key', async () => {
    const C = '04C1C2C3C4C5C6'
    expect(await rejection(tapUrl(C, keysOf(C), 1))).toMatchObject({ reason: 'unknown_chip', detail: `no chip with UID ${C} is registered` })
  })

  test('the all-zero master maps to all-zero keys, as in sdm-backend: factory chips verify', async () => {
    await register('sdm_backend', { masterKey: '00000000000000000000000000000000' })
    const zero = '00000000000000000000000000000000'
    expect(await tap(tapUrl(A, { metaKey: zero, fileKey: zero }, 20))).toMatchObject({ uid: A, counter: 20 })
  })
})

describe('Bolt Card deterministic (profile: issuer key; chip: key version)', () => {
  const keysOf = (uid: string, version = 1): ChipKeys => {
    const k = deriveBoltCardKeys({ issuerKey: MASTER, uid, version })
    return { metaKey: k.k1, fileKey: k.k2 }
  }

  beforeEach(async () => {
    await register('boltcard', { masterKey: MASTER })
    await chipOn(A, 'boltcard')
    await chipOn(B, 'boltcard', { keyVersion: 2 })
  })

  test('K1 is shared, K2 is per card and per key version; each card verifies with its version', async () => {
    expect(toHex(keysOf(A).metaKey as Buffer)).toBe(toHex(keysOf(B, 2).metaKey as Buffer))
    expect(await tap(tapUrl(A, keysOf(A, 1), 30))).toMatchObject({ uid: A, counter: 30, authenticated: true })
    expect(await tap(tapUrl(B, keysOf(B, 2), 30))).toMatchObject({ uid: B, counter: 30, authenticated: true })
  })

  test("card A with card B's K2 is refused; so is a card still on the previous key version", async () => {
    expect((await rejection(tapUrl(A, { metaKey: keysOf(A).metaKey, fileKey: keysOf(B, 1).fileKey }, 31))).reason).toBe('mac_mismatch')
    // B is registered at version 2 but still carries its version-1 keys (re-keying not finished).
    expect((await rejection(tapUrl(B, keysOf(B, 1), 31))).reason).toBe('mac_mismatch')
    // Registering the version the card really has fixes it.
    await chipOn(B, 'boltcard', { keyVersion: 1 })
    expect(await tap(tapUrl(B, keysOf(B, 1), 32))).toMatchObject({ uid: B, counter: 32 })
  })

  test('Bolt Card URLs name PICCData p and the MAC c: a profile with those parameter names reads them', async () => {
    await upsertChipProfile(store, SECRET, { teamId, name: 'boltcard', keyScheme: 'boltcard', layout: { piccParam: 'p', macParam: 'c' }, now: ++now })
    const m = generateSunMessage({ ...keysOf(A), uid: A, counter: 40 })
    expect(await tap(`lnurlw://card.example.com/ln?p=${m.piccData}&c=${m.sdmmac}`)).toMatchObject({ uid: A, counter: 40 })
  })
})

describe('per-chip keys (profile: meta key; each chip its own file key)', () => {
  const FILE_A = '1D9E0C4B7A2F8E3D6C5B4A3928170655'
  const FILE_B = 'E2A7C1094B5D3F6E8A0B1C2D3E4F5061'

  beforeEach(async () => {
    await register('per_chip', { metaKey: META })
    await chipOn(A, 'per_chip', { fileKey: FILE_A })
    await chipOn(B, 'per_chip', { fileKey: FILE_B })
  })

  test('each chip verifies with its own key', async () => {
    expect(await tap(tapUrl(A, { metaKey: META, fileKey: FILE_A }, 50))).toMatchObject({ uid: A, counter: 50, authenticated: true })
    expect(await tap(tapUrl(B, { metaKey: META, fileKey: FILE_B }, 50))).toMatchObject({ uid: B, counter: 50, authenticated: true })
  })

  test("chip A registered with chip B's key refuses A's genuine URL, until A's own key is registered", async () => {
    await chipOn(A, 'per_chip', { fileKey: FILE_B })
    expect(await rejection(tapUrl(A, { metaKey: META, fileKey: FILE_A }, 51))).toMatchObject({ reason: 'mac_mismatch' })
    await chipOn(A, 'per_chip', { fileKey: FILE_A })
    expect(await tap(tapUrl(A, { metaKey: META, fileKey: FILE_A }, 52))).toMatchObject({ uid: A, counter: 52 })
  })

  test('a chip set again without --file-key keeps its key', async () => {
    await chipOn(B, 'per_chip')
    expect(await tap(tapUrl(B, { metaKey: META, fileKey: FILE_B }, 53))).toMatchObject({ uid: B, counter: 53 })
  })
})
