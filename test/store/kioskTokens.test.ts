import { expect, it } from 'vitest'
import { describeStores } from '../helpers/stores.js'

describeStores('kioskTokens', ({ store }) => {
  const seed = async () => {
    const teamId = await store().teams.insert({ name: 'Team', redirectUrl: null, now: 1 })
    const stationId = await store().stations.insert({ teamId, name: 'Door', prefix: 'tgst_d', hash: 'station-hash', now: 1 })
    const otherStation = await store().stations.insert({ teamId, name: 'Bar', prefix: 'tgst_b', hash: 'bar-hash', now: 1 })
    return { stationId, otherStation }
  }

  it('inserts, finds and lists kiosk tokens', async () => {
    const { stationId, otherStation } = await seed()
    const a = await store().kioskTokens.insert({ stationId, prefix: 'tgk_a', hash: 'k-a', now: 1_700_000_000_001 })
    const b = await store().kioskTokens.insert({ stationId, prefix: 'tgk_b', hash: 'k-b', now: 1_700_000_000_002 })
    await store().kioskTokens.insert({ stationId: otherStation, prefix: 'tgk_c', hash: 'k-c', now: 3 })
    const rowA = { id: a, stationId, prefix: 'tgk_a', createdAt: 1_700_000_000_001, lastSeenAt: null, revokedAt: null }
    const rowB = { id: b, stationId, prefix: 'tgk_b', createdAt: 1_700_000_000_002, lastSeenAt: null, revokedAt: null }
    expect(await store().kioskTokens.findActiveByHash('k-a')).toEqual(rowA)
    expect(await store().kioskTokens.findByHash('k-b')).toEqual(rowB)
    expect(await store().kioskTokens.findByHash('nope')).toBeUndefined()
    expect(await store().kioskTokens.findActiveByHash('nope')).toBeUndefined()
    expect(await store().kioskTokens.listByStation(stationId)).toEqual([rowA, rowB])
    expect(await store().kioskTokens.listByStation(999)).toEqual([])
    expect(await store().kioskTokens.markSeen(a, 500)).toBeUndefined()
    expect((await store().kioskTokens.findByHash('k-a'))?.lastSeenAt).toBe(500)
  })

  it('a revoked token, or a token of a revoked station, is no longer active but is still found', async () => {
    const { stationId, otherStation } = await seed()
    const a = await store().kioskTokens.insert({ stationId, prefix: 'tgk_a', hash: 'k-a', now: 1 })
    await store().kioskTokens.insert({ stationId: otherStation, prefix: 'tgk_c', hash: 'k-c', now: 1 })
    expect(await store().kioskTokens.revoke(a, 10)).toBe(true)
    expect(await store().kioskTokens.revoke(a, 20)).toBe(false)
    expect(await store().kioskTokens.findActiveByHash('k-a')).toBeUndefined()
    expect((await store().kioskTokens.findByHash('k-a'))?.revokedAt).toBe(10)
    expect(await store().stations.revokeByHash('bar-hash', 30)).toBe(1)
    expect(await store().kioskTokens.findActiveByHash('k-c')).toBeUndefined()
    expect((await store().kioskTokens.findByHash('k-c'))?.revokedAt).toBeNull()
  })

  it('revokes a token once when 20 transactions race to revoke it', async () => {
    const { stationId } = await seed()
    const id = await store().kioskTokens.insert({ stationId, prefix: 'tgk_a', hash: 'k-a', now: 1 })
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store().tx((tx) => tx.kioskTokens.revoke(id, 100 + i), { isolation: 'read committed' })),
    )
    expect(outcomes.filter(Boolean)).toHaveLength(1)
    expect((await store().kioskTokens.findByHash('k-a'))?.revokedAt).toBe(100 + outcomes.indexOf(true))
  })
})
