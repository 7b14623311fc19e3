import crypto from 'node:crypto'
import type { KeyScheme } from '../../../src/db/chipProfiles.js'
import type { SqliteStore } from '../../../src/db/store.js'
import { upsertChipProfile } from '../../../src/profiles/chipProfiles.js'
import { testDir, testStore } from '../../helpers/gateway.js'
import { profileKeysFor } from '../../../fixtures/provisioningKeys.js'
export { PROFILE_KEYS } from '../../../fixtures/provisioningKeys.js'

export const TEMPLATE = 'https://tap.example/t?e={picc}&c={mac}'

/** Distinct non-zero keys: a zero key would hide a slot left at factory. */
/** A real store in a temp dir with one team and one profile of the given scheme. */
export async function seedGateway(scheme: KeyScheme, mode: 'aes' | 'lrp' = 'aes'): Promise<{ store: SqliteStore; secret: Buffer; teamId: number; profileName: string }> {
  const store = testStore(testDir('tapgate-prov-'))
  const secret = crypto.randomBytes(32)
  const now = Date.now()
  const teamId = await store.teams.insert({ name: 'Shop', redirectUrl: null, now })
  await upsertChipProfile(store, secret, { teamId, name: `tags-${scheme}`, keyScheme: scheme, mode, ...profileKeysFor(scheme), now })
  return { store, secret, teamId, profileName: `tags-${scheme}` }
}
