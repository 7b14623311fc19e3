import { expect, it } from 'vitest'
import type { Isolation, Store } from '../../src/db/store.js'
import { describeStores } from '../helpers/stores.js'

describeStores('staffAuth', ({ store }) => {
  const seed = async () => {
    const teamId = await store().teams.insert({ name: 'Team', redirectUrl: null, now: 1 })
    return store().stations.insert({ teamId, name: 'Door', prefix: 'tgst_d', hash: 'station-hash', now: 1 })
  }

  it('sets a PIN, counts tries and locks, and a new PIN resets them', async () => {
    const stationId = await seed()
    expect(await store().staffAuth.getPin(stationId)).toBeUndefined()
    await store().staffAuth.setPin(stationId, 'hash-1', 1_700_000_000_000)
    expect(await store().staffAuth.getPin(stationId)).toEqual({ stationId, pinHash: 'hash-1', failedTries: 0, lockedUntil: null, consecutiveLocks: 0, updatedAt: 1_700_000_000_000 })
    await store().staffAuth.setTries(stationId, { failedTries: 0, lockedUntil: 1_700_000_300_000, consecutiveLocks: 2 })
    expect(await store().staffAuth.getPin(stationId)).toEqual({ stationId, pinHash: 'hash-1', failedTries: 0, lockedUntil: 1_700_000_300_000, consecutiveLocks: 2, updatedAt: 1_700_000_000_000 })
    await store().staffAuth.setTries(stationId, { failedTries: 3, lockedUntil: null, consecutiveLocks: 2 })
    await store().staffAuth.setPin(stationId, 'hash-2', 1_700_000_000_500)
    expect(await store().staffAuth.getPin(stationId)).toEqual({ stationId, pinHash: 'hash-2', failedTries: 0, lockedUntil: null, consecutiveLocks: 0, updatedAt: 1_700_000_000_500 })
  })

  it('opens, touches (never backwards) and ends a session once', async () => {
    const stationId = await seed()
    await store().staffAuth.insertSession('s1', stationId, 100)
    expect(await store().staffAuth.getSession('s1')).toEqual({ stationId, createdAt: 100, lastUsedAt: 100, endedAt: null })
    expect(await store().staffAuth.getSession('nope')).toBeUndefined()
    await store().staffAuth.touchSession('s1', 300)
    await store().staffAuth.touchSession('s1', 200)
    expect((await store().staffAuth.getSession('s1'))?.lastUsedAt).toBe(300)
    expect(await store().staffAuth.endSession('s1', 400)).toBe(true)
    expect(await store().staffAuth.endSession('s1', 500)).toBe(false)
    await store().staffAuth.touchSession('s1', 600)
    expect(await store().staffAuth.getSession('s1')).toEqual({ stationId, createdAt: 100, lastUsedAt: 300, endedAt: 400 })
  })

  it('ends a session once when 20 transactions race to end it', async () => {
    const stationId = await seed()
    await store().staffAuth.insertSession('s1', stationId, 100)
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store().tx((tx) => tx.staffAuth.endSession('s1', 200 + i), { isolation: 'read committed' })),
    )
    expect(outcomes.filter(Boolean)).toHaveLength(1)
    expect((await store().staffAuth.getSession('s1'))?.endedAt).toBe(200 + outcomes.indexOf(true))
  })

  // What openStaffSession does with a wrong PIN: read the count, write it plus one, in one transaction.
  const wrongTry = (s: Store, stationId: number, isolation: Isolation) =>
    s.tx(async (tx) => {
      const pin = (await tx.staffAuth.getPin(stationId))!
      await tx.staffAuth.setTries(stationId, { failedTries: pin.failedTries + 1, lockedUntil: null, consecutiveLocks: pin.consecutiveLocks })
    }, { isolation })

  for (const isolation of ['serializable', 'read committed'] as const) {
    it(`counts every one of 20 wrong PINs tried at once (${isolation})`, async () => {
      const stationId = await seed()
      await store().staffAuth.setPin(stationId, 'hash', 1)
      await Promise.all(Array.from({ length: 20 }, () => wrongTry(store(), stationId, isolation)))
      expect((await store().staffAuth.getPin(stationId))?.failedTries).toBe(20)
    })
  }
})
