import crypto from 'node:crypto'
import type { KeyScheme } from '../../../src/db/chipProfiles.js'
import type { Store } from '../../../src/db/store.js'
import { upsertChipProfile } from '../../../src/taps/chipProfiles.js'
import { testDir, testStore } from '../../helpers/gateway.js'

export const TEMPLATE = 'https://tap.example/t?e={picc}&c={mac}'

/** Distinct non-zero keys: a zero key would hide a slot left at factory. */
export const PROFILE_KEYS = {
  metaKey: '7B1E9C04D2A65F38E0B4C7192D6A8F3E',
  fileKey: 'C15A0E7F3B9D2846A1E5C0F7D3B92E64',
  masterKey: '2E8C5A1F7D3B9E0462A8C4F1E7B3D590',
}

const NEEDS: Record<KeyScheme, (keyof typeof PROFILE_KEYS)[]> = {
  static: ['metaKey', 'fileKey'],
  per_chip: ['metaKey'],
  an10922: ['metaKey', 'masterKey'],
  sdm_backend: ['masterKey'],
  boltcard: ['masterKey'],
}

/** A real store in a temp dir with one team and one profile of the given scheme. */
export function seedGateway(scheme: KeyScheme, mode: 'aes' | 'lrp' = 'aes'): { store: Store; secret: Buffer; teamId: number; profileName: string } {
  const store = testStore(testDir('tapgate-prov-'))
  const secret = crypto.randomBytes(32)
  const now = Date.now()
  const teamId = store.teams.insert({ name: 'Shop', redirectUrl: null, now })
  const keys = Object.fromEntries(NEEDS[scheme].map((k) => [k, PROFILE_KEYS[k]]))
  upsertChipProfile(store, secret, { teamId, name: `tags-${scheme}`, keyScheme: scheme, mode, ...keys, now })
  return { store, secret, teamId, profileName: `tags-${scheme}` }
}
