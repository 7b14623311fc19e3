import { expect, it } from 'vitest'
import { isUniqueViolation } from '../../src/db/storeErrors.js'
import { describeStores } from '../helpers/stores.js'

describeStores('apiKeys', ({ store }) => {
  const seed = async () => {
    const s = store()
    const teamId = await s.teams.insert({ name: 'Team', redirectUrl: null, now: 1 })
    const otherTeam = await s.teams.insert({ name: 'Other', redirectUrl: null, now: 1 })
    return { teamId, otherTeam }
  }

  it('stores keys by hash and lists them by team and by prefix in id order', async () => {
    const { teamId, otherTeam } = await seed()
    const s = store()
    const a = await s.apiKeys.insert({ teamId, prefix: 'tg_aaaa', hash: 'hash-a', label: 'ci', now: 10 })
    const b = await s.apiKeys.insert({ teamId: otherTeam, prefix: 'tg_aaaa', hash: 'hash-b', label: null, now: 11 })
    const c = await s.apiKeys.insert({ teamId, prefix: 'tg_cccc', hash: 'hash-c', label: null, now: 12 })
    const rowA = { id: a, teamId, prefix: 'tg_aaaa', label: 'ci', createdAt: 10, revokedAt: null }
    const rowB = { id: b, teamId: otherTeam, prefix: 'tg_aaaa', label: null, createdAt: 11, revokedAt: null }
    const rowC = { id: c, teamId, prefix: 'tg_cccc', label: null, createdAt: 12, revokedAt: null }
    expect(await s.apiKeys.findActiveByHash('hash-a')).toEqual(rowA)
    expect(await s.apiKeys.findActiveByHash('nope')).toBeUndefined()
    expect(await s.apiKeys.listByTeam(teamId)).toEqual([rowA, rowC])
    expect(await s.apiKeys.listByTeam(999)).toEqual([])
    expect(await s.apiKeys.listByPrefix('tg_aaaa')).toEqual([rowA, rowB])
    expect(await s.apiKeys.listByPrefix('tg_zzzz')).toEqual([])
    const error = await s.apiKeys.insert({ teamId, prefix: 'tg_dddd', hash: 'hash-a', label: null, now: 13 }).catch((e: unknown) => e)
    expect(isUniqueViolation(error)).toBe(true)
  })

  it('revokes by prefix or hash, counting only keys still active', async () => {
    const { teamId, otherTeam } = await seed()
    const s = store()
    const a = await s.apiKeys.insert({ teamId, prefix: 'tg_aaaa', hash: 'hash-a', label: null, now: 10 })
    await s.apiKeys.insert({ teamId: otherTeam, prefix: 'tg_aaaa', hash: 'hash-b', label: null, now: 11 })
    await s.apiKeys.insert({ teamId, prefix: 'tg_cccc', hash: 'hash-c', label: null, now: 12 })
    expect(await s.apiKeys.revokeByHash('hash-a', 20)).toBe(1)
    expect(await s.apiKeys.revokeByHash('hash-a', 21)).toBe(0)
    expect(await s.apiKeys.findActiveByHash('hash-a')).toBeUndefined()
    expect((await s.apiKeys.listByTeam(teamId))[0]).toEqual({ id: a, teamId, prefix: 'tg_aaaa', label: null, createdAt: 10, revokedAt: 20 })
    expect(await s.apiKeys.revokeByPrefix('tg_aaaa', 30)).toBe(1)
    expect(await s.apiKeys.revokeByPrefix('tg_aaaa', 31)).toBe(0)
    expect((await s.apiKeys.listByPrefix('tg_aaaa')).map((k) => k.revokedAt)).toEqual([20, 30])
    expect(await s.apiKeys.revokeByPrefix('tg_zzzz', 32)).toBe(0)
    expect(await s.apiKeys.findActiveByHash('hash-c')).toMatchObject({ revokedAt: null })
  })

  const racers = 20
  it(`revokes each key once however many of ${racers} requests race, and stores a hash once`, async () => {
    const { teamId } = await seed()
    const s = store()
    for (const hash of ['hash-1', 'hash-2', 'hash-3']) await s.apiKeys.insert({ teamId, prefix: 'tg_race', hash, label: null, now: 1 })
    const counts = await Promise.all(Array.from({ length: racers }, (_, i) => s.tx((tx) => tx.apiKeys.revokeByPrefix('tg_race', 100 + i), { isolation: 'read committed' })))
    expect(counts.reduce((sum, n) => sum + n, 0)).toBe(3)
    const once = await Promise.all(Array.from({ length: racers }, (_, i) => s.tx((tx) => tx.apiKeys.revokeByHash('hash-1', 200 + i), { isolation: 'read committed' })))
    expect(once.reduce((sum, n) => sum + n, 0)).toBe(0)

    const inserts = await Promise.allSettled(
      Array.from({ length: racers }, (_, i) => s.tx((tx) => tx.apiKeys.insert({ teamId, prefix: `tg_${i}`, hash: 'hash-same', label: null, now: 1 }))),
    )
    expect(inserts.filter((o) => o.status === 'fulfilled')).toHaveLength(1)
    expect(inserts.every((o) => o.status === 'fulfilled' || isUniqueViolation(o.reason))).toBe(true)
  })
})
