import type { ChipRow } from '../db/chips.js'
import type { ChipProfileRow } from '../db/chipProfiles.js'
import type { Store, Repositories } from '../db/store.js'
import { SealedKeyError } from '../keys/errors.js'
import { chipKeyContext, profileKeyContext } from '../keys/keyContexts.js'
import { openKey } from '../keys/sealKey.js'
import {
  an10922Input,
  createSunVerifier,
  deriveBoltCardKeys,
  deriveSdmBackendMetaKey,
  deriveSdmBackendTagKey,
  diversifyAn10922,
  type SunLayout,
  type SunVerifier,
} from '../sun/index.js'
import { defaultCounterRules, type CounterRules } from './counterRules.js'

/** A profile ready to verify taps: keys opened once, verifier (and its cipher objects) kept. */
export type ProfileEntry = {
  profile: ChipProfileRow
  layout: SunLayout | undefined
  verifier: SunVerifier
  /** The chip's SDM file read key under this profile's key scheme. */
  fileKeyFor: (chip: ChipRow) => Buffer
  /**
   * The file key a chip with this UID would have, where the scheme derives it from
   * the UID alone (static, AN10922, sdm-backend); null where it is kept per chip
   * (per_chip) or needs the chip's key version (boltcard).
   */
  fileKeyForUid: (uid: string) => Buffer | null
}

export type Keyring = {
  /** Every profile whose keys opened, refreshed when any profile changed (also from another process). */
  profiles: () => Promise<ProfileEntry[]>
  byId: (id: number) => Promise<ProfileEntry | undefined>
  /** Profiles whose keys do not open under this gateway secret, with why. */
  broken: () => Promise<{ profile: ChipProfileRow; error: SealedKeyError }[]>
  /** How far a tap's counter may jump (config `taps`): verifyTap's other setting, carried wherever the keyring goes. */
  counterRules: CounterRules
}

/**
 * Opens the sealed keys of every chip profile and builds one SunVerifier per
 * profile. Rebuilt lazily when the profiles' fingerprint changes, so a profile
 * edited with the CLI takes effect without a restart; keys stay in this
 * process's memory only.
 *
 * @example
 * const keyring = createKeyring(store, secret)
 * for (const entry of await keyring.profiles()) entry.verifier.readPiccData(piccHex)
 */
export function createKeyring(store: Repositories, secret: Buffer, counterRules: CounterRules = defaultCounterRules): Keyring {
  let version: string | null = null
  let entries: ProfileEntry[] = []
  let byId = new Map<number, ProfileEntry>()
  let broken: { profile: ChipProfileRow; error: SealedKeyError }[] = []

  // One profile whose keys do not open (a team re-keyed with another secret) must not stop
  // every other team's taps: it is set aside, and only taps it could own are refused.
  const refresh = async () => {
    const current = await store.chipProfiles.version()
    if (current === version) return
    entries = []
    broken = []
    for (const profile of await store.chipProfiles.list()) {
      try {
        entries.push(buildEntry(profile, secret))
      } catch (error) {
        if (!(error instanceof SealedKeyError)) throw error
        broken.push({ profile, error })
      }
    }
    byId = new Map(entries.map((e) => [e.profile.id, e]))
    version = current
  }
  return {
    profiles: async () => (await refresh(), entries),
    byId: async (id) => (await refresh(), byId.get(id)),
    broken: async () => (await refresh(), broken),
    counterRules,
  }
}

function buildEntry(profile: ChipProfileRow, secret: Buffer): ProfileEntry {
  const open = (slot: 'meta' | 'file' | 'master', blob: Buffer | null) => {
    if (!blob) throw new Error(`chip profile ${profile.name} has no ${slot} key for key scheme ${profile.keyScheme}`)
    return openKey(secret, blob, profileKeyContext(profile.id, slot))
  }
  const master = profile.masterKey ? open('master', profile.masterKey) : null
  let metaKey: Buffer | undefined
  let fileKeyFor: (chip: ChipRow) => Buffer
  let fileKeyForUid: (uid: string) => Buffer | null = () => null
  switch (profile.keyScheme) {
    case 'static': {
      const fileKey = open('file', profile.fileKey)
      metaKey = profile.metaKey ? open('meta', profile.metaKey) : undefined
      fileKeyFor = () => fileKey
      fileKeyForUid = () => fileKey
      break
    }
    case 'per_chip':
      metaKey = profile.metaKey ? open('meta', profile.metaKey) : undefined
      fileKeyFor = (chip) => {
        if (!chip.fileKey) throw new Error(`chip ${chip.uid} has no file key (profile ${profile.name} keeps keys per chip)`)
        return openKey(secret, chip.fileKey, chipKeyContext(chip.uid))
      }
      break
    case 'an10922':
      // AN10922 diversifies the file key per UID; the meta key cannot be (it reveals the UID).
      metaKey = profile.metaKey ? open('meta', profile.metaKey) : undefined
      fileKeyForUid = (uid) => diversifyAn10922({ masterKey: master!, m: an10922Input({ uid }) })
      fileKeyFor = (chip) => fileKeyForUid(chip.uid)!
      break
    case 'sdm_backend':
      metaKey = deriveSdmBackendMetaKey({ masterKey: open('master', profile.masterKey) })
      fileKeyForUid = (uid) => deriveSdmBackendTagKey({ masterKey: master!, uid, keyNo: 2 })
      fileKeyFor = (chip) => fileKeyForUid(chip.uid)!
      break
    case 'boltcard': {
      const issuerKey = open('master', profile.masterKey)
      metaKey = deriveBoltCardKeys({ issuerKey, uid: '00000000000000', version: 1 }).k1
      fileKeyFor = (chip) => deriveBoltCardKeys({ issuerKey, uid: chip.uid, version: chip.keyVersion }).k2
      break
    }
  }
  if (profile.keyScheme === 'an10922' && !master) throw new Error(`chip profile ${profile.name} has no master key`)
  return {
    profile,
    layout: profile.layout === null ? undefined : (JSON.parse(profile.layout) as SunLayout),
    verifier: createSunVerifier({ metaKey, mode: profile.mode }),
    fileKeyFor,
    fileKeyForUid,
  }
}
