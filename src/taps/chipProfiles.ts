import type { KeyScheme } from '../db/chipProfiles.js'
import type { Store } from '../db/store.js'
import { BadRequestError, NotFoundError } from '../errors.js'
import { sealKey } from '../keys/sealKey.js'
import { checkSunLayout, SunLayoutError, type SunLayout } from '../sun/index.js'
import { chipKeyContext, profileKeyContext } from './createKeyring.js'

export type ChipProfileInput = {
  teamId: number
  name: string
  mode: 'aes' | 'lrp'
  keyScheme: KeyScheme
  layout?: SunLayout | null
  /** 32 hex characters each; which ones a scheme needs is checked here. */
  metaKey?: string
  fileKey?: string
  masterKey?: string
  now: number
}

const needs: Record<KeyScheme, { meta: boolean; file: boolean; master: boolean }> = {
  static: { meta: true, file: true, master: false },
  per_chip: { meta: true, file: false, master: false },
  an10922: { meta: true, file: false, master: true },
  sdm_backend: { meta: false, file: false, master: true },
  boltcard: { meta: false, file: false, master: true },
}

const hexKey = (value: string | undefined, name: string): Buffer | null => {
  if (value === undefined) return null
  if (!/^[0-9a-fA-F]{32}$/.test(value)) throw new BadRequestError('invalid_key', `${name} must be 32 hex characters (an AES-128 key)`)
  return Buffer.from(value, 'hex')
}

/**
 * Creates or updates a chip profile (matched by team and name), sealing its
 * keys under the gateway secret. The keys a scheme needs are required; keys it
 * does not use are refused so nobody believes they are in effect.
 *
 * @example
 * upsertChipProfile(store, secret, { teamId: 1, name: 'tags', mode: 'aes', keyScheme: 'static', metaKey, fileKey, now })
 */
export function upsertChipProfile(store: Store, secret: Buffer, p: ChipProfileInput): number {
  const need = needs[p.keyScheme]
  const keys = { meta: hexKey(p.metaKey, 'metaKey'), file: hexKey(p.fileKey, 'fileKey'), master: hexKey(p.masterKey, 'masterKey') }
  for (const slot of ['meta', 'file', 'master'] as const) {
    if (need[slot] && !keys[slot]) throw new BadRequestError('missing_key', `key scheme ${p.keyScheme} needs a ${slot}Key`)
    if (!need[slot] && keys[slot]) throw new BadRequestError('unused_key', `key scheme ${p.keyScheme} does not use a ${slot}Key`)
  }
  let layout: string | null = null
  if (p.layout) {
    try {
      layout = JSON.stringify(checkSunLayout(p.layout))
    } catch (error) {
      if (error instanceof SunLayoutError) throw new BadRequestError('invalid_layout', error.message)
      throw error
    }
  }
  return store.tx(() => {
    // The id is needed for the sealing context, so insert first, then seal and store the keys.
    const base = { teamId: p.teamId, name: p.name, mode: p.mode, layout, keyScheme: p.keyScheme, now: p.now }
    const id = store.chipProfiles.upsert({ ...base, metaKey: null, fileKey: null, masterKey: null })
    const seal = (slot: 'meta' | 'file' | 'master') => (keys[slot] ? sealKey(secret, keys[slot], profileKeyContext(id, slot)) : null)
    store.chipProfiles.upsert({ ...base, metaKey: seal('meta'), fileKey: seal('file'), masterKey: seal('master') })
    return id
  })
}

/** Puts a chip under a profile, with its own file key where the profile keeps keys per chip. */
export function setChipVerification(
  store: Store,
  secret: Buffer,
  p: { uid: string; teamId: number; profileName: string; fileKey?: string; randomUid?: boolean; keyVersion?: number },
): void {
  store.tx(() => {
    const chip = store.chips.get(p.uid)
    if (!chip || chip.teamId !== p.teamId) throw new NotFoundError('chip_not_found', `No chip with UID ${p.uid} in this team`)
    const profile = store.chipProfiles.getByName(p.teamId, p.profileName)
    if (!profile) throw new NotFoundError('profile_not_found', `No chip profile named ${JSON.stringify(p.profileName)} in this team`)
    const fileKey = hexKey(p.fileKey, 'fileKey')
    if (profile.keyScheme === 'per_chip' && !fileKey && !chip.fileKey)
      throw new BadRequestError('missing_key', `profile ${profile.name} keeps keys per chip: give the chip's fileKey`)
    if (profile.keyScheme !== 'per_chip' && fileKey) throw new BadRequestError('unused_key', `profile ${profile.name} does not use per-chip keys`)
    store.chips.setVerification({
      uid: chip.uid,
      profileId: profile.id,
      randomUid: p.randomUid ?? chip.randomUid === 1,
      fileKey: fileKey ? sealKey(secret, fileKey, chipKeyContext(chip.uid)) : chip.fileKey,
      keyVersion: p.keyVersion ?? chip.keyVersion,
    })
  })
}
