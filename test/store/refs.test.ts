import { expect, it } from 'vitest'
import { describeStores } from '../helpers/stores.js'

describeStores('refs', ({ store }) => {
  const seed = async () => {
    const s = store()
    const teamId = await s.teams.insert({ name: 'Team', redirectUrl: null, now: 1 })
    await s.chips.insert({ uid: '04AABBCCDDEEFF', teamId, groupId: null, kind: 'ntag424', redirectUrl: null, now: 1 })
    return teamId
  }

  it('stores a ref and returns it with numbers for ids and times', async () => {
    const teamId = await seed()
    await store().refs.insert({ id: 'r1', chipUid: '04AABBCCDDEEFF', teamId, source: 'station', authenticated: true, linksModule: false, counter: 7, now: 1_700_000_000_123 })
    expect(await store().refs.get('r1')).toEqual({
      id: 'r1', chipUid: '04AABBCCDDEEFF', teamId, source: 'station', authenticated: 1, linksModule: 0, counter: 7, createdAt: 1_700_000_000_123, consumedAt: null,
    })
    expect(await store().refs.get('nope')).toBeUndefined()
  })

  it('consumes a ref once', async () => {
    const teamId = await seed()
    await store().refs.insert({ id: 'r2', chipUid: '04AABBCCDDEEFF', teamId, source: 'phone', authenticated: false, linksModule: true, counter: null, now: 5 })
    const outcomes = await Promise.all([1, 2, 3, 4, 5].map(() => store().tx((tx) => tx.refs.consume('r2', 9), { isolation: 'read committed' })))
    expect(outcomes.filter(Boolean)).toHaveLength(1)
    expect((await store().refs.get('r2'))?.consumedAt).toBe(9)
  })
})
