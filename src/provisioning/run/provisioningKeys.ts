import { randomBytes } from 'node:crypto'
import type { ChipProfileRow, KeyScheme } from '../../db/chipProfiles.js'
import { openKey } from '../../keys/sealKey.js'
import { an10922Input, deriveBoltCardKeys, deriveSdmBackendMetaKey, deriveSdmBackendTagKey, diversifyAn10922 } from '../../sun/index.js'
import { profileKeyContext } from '../../keys/keyContexts.js'
import type { SlotVersions } from '../../db/provisioning.js'
import { FILE_SLOT, META_SLOT, ProvisioningPlanError } from './planProvisioning.js'

/** Keys 0–4 of one chip. Only ever in memory: sealed before storing, never printed. */
export type SlotKeys = [Buffer, Buffer, Buffer, Buffer, Buffer]

export const ZERO_KEY = Buffer.alloc(16)

/** The five factory keys (all zero). */
export const factoryKeys = (): SlotKeys => [ZERO_KEY, ZERO_KEY, ZERO_KEY, ZERO_KEY, ZERO_KEY]

/**
 * Whether a re-provisioned chip gets a new file key under this scheme. Where the
 * file key follows from the UID alone it would not, and since enabling SDM resets
 * the chip's counter, every URL the chip ever produced would verify again.
 */
export const FILE_KEY_CHANGES: Record<KeyScheme, boolean> = {
  static: false,
  per_chip: true,
  an10922: false,
  sdm_backend: false,
  boltcard: true,
}

export type ProvisioningKeysParameters = {
  profile: ChipProfileRow
  secret: Buffer
  uid: string
  /** The run's 32-bit key version (Bolt Card derives its keys from it). */
  keyVersion: number
  /** Injected in tests; node:crypto otherwise. */
  random?: (n: number) => Buffer
}

/**
 * The five keys a chip gets under its profile's key scheme. Key 0 is always per
 * chip (random, or derived from the UID by sdm_backend and Bolt Card) and never
 * equal to a shared key; no key is the factory zero key, so all five change.
 *
 * @throws ProvisioningPlanError when the scheme would give key 0 a shared or zero value
 *   (e.g. an sdm_backend profile with the factory master key)
 * @throws SealedKeyError when a profile key does not open under this secret
 * @example
 * provisioningKeys({ profile, secret, uid: '04DE5F1EACC040', keyVersion: 1 }) // [k0, k1, k2, k3, k4]
 */
export function provisioningKeys(p: ProvisioningKeysParameters): SlotKeys {
  const random = p.random ?? randomBytes
  const open = (slot: 'meta' | 'file' | 'master') => {
    const blob = p.profile[`${slot}Key`]
    if (!blob) throw new ProvisioningPlanError(`profile ${p.profile.name} (key scheme ${p.profile.keyScheme}) has no ${slot} key`)
    return openKey(p.secret, blob, profileKeyContext(p.profile.id, slot))
  }
  const fresh = () => random(16)
  let keys: SlotKeys
  switch (p.profile.keyScheme) {
    case 'static':
      keys = [fresh(), open('meta'), open('file'), fresh(), fresh()]
      break
    case 'per_chip':
      keys = [fresh(), open('meta'), fresh(), fresh(), fresh()]
      break
    case 'an10922':
      keys = [fresh(), open('meta'), diversifyAn10922({ masterKey: open('master'), m: an10922Input({ uid: p.uid }) }), fresh(), fresh()]
      break
    case 'sdm_backend': {
      const masterKey = open('master')
      const tag = (keyNo: number) => deriveSdmBackendTagKey({ masterKey, uid: p.uid, keyNo })
      keys = [tag(0), deriveSdmBackendMetaKey({ masterKey }), tag(2), tag(3), tag(4)]
      break
    }
    case 'boltcard': {
      const k = deriveBoltCardKeys({ issuerKey: open('master'), uid: p.uid, version: p.keyVersion })
      keys = [k.k0, k.k1, k.k2, k.k3, k.k4]
      break
    }
  }
  const slot = keys.findIndex((k) => k.equals(ZERO_KEY))
  if (slot >= 0)
    throw new ProvisioningPlanError(`profile ${p.profile.name} would leave key ${slot} at the factory zero key (a factory master key?): every key must change`)
  if (keys[0].equals(keys[META_SLOT]) || keys[0].equals(keys[FILE_SLOT]))
    throw new ProvisioningPlanError(`profile ${p.profile.name} would give key 0 the value of a shared key: key 0 must be the chip's own`)
  return keys
}

/**
 * The run's key version: above the previous one (so Bolt Card keys change), with
 * a low byte (what the chip stores) that is never 00 (factory) and differs from
 * every version the chip holds now, so GetKeyVersion tells old keys from new.
 *
 * @example
 * nextKeyVersion(0, [0, 0, 0, 0, 0]) // 1
 * nextKeyVersion(255, [1, 1, 1, 1, 1]) // 258 (low byte 00 is factory, 01 in use)
 */
export function nextKeyVersion(previous: number, current: readonly number[]): number {
  let v = previous + 1
  while ((v & 0xff) === 0 || current.includes(v & 0xff)) v++
  if (v > 0xffffffff) throw new RangeError('the key version is exhausted')
  return v
}

/** The byte each slot ends at for a run at `keyVersion`. */
export function targetVersions(keyVersion: number): SlotVersions {
  const b = keyVersion & 0xff
  return [b, b, b, b, b]
}
