import { expect, it } from 'vitest'
import type { ChipProfileWrite } from '../../src/db/chipProfiles.js'
import type { SealedSlots } from '../../src/db/provisioning.js'
import { describeStores } from '../helpers/stores.js'
import { insertRow } from './seedRows.js'

const sealed = Buffer.from('sealed key blob')
const none: SealedSlots = [null, null, null, null, null]

describeStores('sealedKeys', ({ store }) => {
  it('counts profiles, chips and provisioning runs holding any sealed key', async () => {
    const s = store()
    expect(await s.sealedKeys.count()).toBe(0)
    const teamId = await s.teams.insert({ name: 'Team', redirectUrl: null, now: 1 })
    const profile = (name: string, keys: Partial<Pick<ChipProfileWrite, 'metaKey' | 'fileKey' | 'masterKey'>>): ChipProfileWrite => ({
      teamId, name, mode: 'aes', layout: null, urlTemplate: null, keyScheme: 'static', metaKey: null, fileKey: null, masterKey: null, now: 1, ...keys,
    })
    await s.chipProfiles.upsert(profile('keyless', {}))
    expect(await s.sealedKeys.count()).toBe(0)
    const withMeta = await s.chipProfiles.upsert(profile('meta', { metaKey: sealed }))
    await s.chipProfiles.upsert(profile('master', { masterKey: sealed }))
    await s.chipProfiles.upsert(profile('file', { fileKey: sealed, metaKey: sealed }))
    expect(await s.sealedKeys.count()).toBe(3)

    for (const uid of ['04AA000000000A', '04AA000000000B']) await s.chips.insert({ uid, teamId, groupId: null, kind: 'ntag424', redirectUrl: null, now: 1 })
    await s.chips.setVerification({ uid: '04AA000000000A', profileId: withMeta, randomUid: false, fileKey: sealed, keyVersion: 1 })
    await s.chips.setVerification({ uid: '04AA000000000B', profileId: withMeta, randomUid: false, fileKey: null, keyVersion: 1 })
    expect(await s.sealedKeys.count()).toBe(4)

    const run = (uid: string) => insertRow(s, 'chip_provisioning', {
      uid, team_id: teamId, profile_id: null, kind: 'provision', state: 'pending', mode: 'aes', random_id: false, key_version: 1,
      target_versions: '[0,0,0,0,0]', slot_versions: '[0,0,0,0,0]', plan: '{}', created_at: 1, updated_at: 1,
    })
    const keyless = await run('04AA000000000A')
    expect(await s.sealedKeys.count()).toBe(4)
    // Any one slot, target or old, counts.
    await s.provisioning.setKeys(keyless, none, [null, null, null, null, sealed], 2)
    const withTarget = await run('04AA000000000B')
    await s.provisioning.setKeys(withTarget, [null, sealed, null, null, null], none, 2)
    expect(await s.sealedKeys.count()).toBe(6)
    await s.provisioning.setKeys(withTarget, none, none, 3)
    expect(await s.sealedKeys.count()).toBe(5)
  })
})
