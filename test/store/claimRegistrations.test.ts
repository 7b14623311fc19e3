import { setTimeout as sleep } from 'node:timers/promises'
import { expect, it } from 'vitest'
import { describeStores } from '../helpers/stores.js'
import { insertTeam, insertToken } from './seedRows.js'

const RACERS = 20
const ALICE = '0x00000000000000000000000000000000000a11ce'
const BOB = '0x0000000000000000000000000000000000000b0b'

describeStores('claimRegistrations', ({ store }) => {
  const seedToken = async () => insertToken(store(), await insertTeam(store(), []))
  const register = (tokenId: number, recipient: string, createdAt: number) =>
    store().claimRegistrations.insert({ tokenId, recipient, createdAt, allowedAt: createdAt + 10, expiresAt: createdAt + 100 })

  it('stores a registration and finds it by id and as the latest of its token and recipient', async () => {
    const tokenId = await seedToken()
    const first = await register(tokenId, ALICE, 1_000)
    const second = await register(tokenId, ALICE, 2_000)
    await register(tokenId, BOB, 3_000)
    const row = { id: second, tokenId, recipient: ALICE, createdAt: 2_000, allowedAt: 2_010, expiresAt: 2_100, usedAt: null }
    expect(await store().claimRegistrations.get(second)).toEqual(row)
    expect(await store().claimRegistrations.findLatest(tokenId, ALICE)).toEqual(row)
    expect((await store().claimRegistrations.get(first))?.createdAt).toBe(1_000)
    expect(await store().claimRegistrations.get(second + 100)).toBeUndefined()
    expect(await store().claimRegistrations.findLatest(tokenId, '0x0')).toBeUndefined()
  })

  it('finds the newest open registration: neither used nor expired', async () => {
    const tokenId = await seedToken()
    const a = await register(tokenId, ALICE, 1_000)
    const b = await register(tokenId, BOB, 1_050)
    expect((await store().claimRegistrations.findOpen(tokenId, 1_060))?.id).toBe(b)
    expect(await store().claimRegistrations.markUsed(b, 1_070)).toBe(true)
    expect(await store().claimRegistrations.findOpen(tokenId, 1_080)).toEqual({
      id: a, tokenId, recipient: ALICE, createdAt: 1_000, allowedAt: 1_010, expiresAt: 1_100, usedAt: null,
    })
    expect(await store().claimRegistrations.findOpen(tokenId, 1_100)).toBeUndefined()
    expect(await store().claimRegistrations.findOpen(tokenId + 1, 0)).toBeUndefined()
  })

  it('uses a registration once and gives a used one back once', async () => {
    const tokenId = await seedToken()
    const id = await register(tokenId, ALICE, 1_000)
    expect(await store().claimRegistrations.release(id)).toBe(false)
    expect(await store().claimRegistrations.markUsed(id, 1_020)).toBe(true)
    expect(await store().claimRegistrations.markUsed(id, 1_030)).toBe(false)
    expect((await store().claimRegistrations.get(id))?.usedAt).toBe(1_020)
    expect(await store().claimRegistrations.release(id)).toBe(true)
    expect(await store().claimRegistrations.release(id)).toBe(false)
    expect((await store().claimRegistrations.get(id))?.usedAt).toBeNull()
    expect(await store().claimRegistrations.markUsed(id + 100, 1)).toBe(false)
  })

  it('deletes a recipient\'s unused registrations of a token and says how many', async () => {
    const tokenId = await seedToken()
    const used = await register(tokenId, ALICE, 1_000)
    await store().claimRegistrations.markUsed(used, 1_020)
    await register(tokenId, ALICE, 1_100)
    await register(tokenId, ALICE, 1_200)
    const bob = await register(tokenId, BOB, 1_300)
    expect(await store().claimRegistrations.deleteUnused(tokenId, ALICE)).toBe(2)
    expect(await store().claimRegistrations.deleteUnused(tokenId, ALICE)).toBe(0)
    expect((await store().claimRegistrations.findLatest(tokenId, ALICE))?.id).toBe(used)
    expect((await store().claimRegistrations.get(bob))?.recipient).toBe(BOB)
  })

  it(`lets one of ${RACERS} concurrent claims use a registration`, async () => {
    const tokenId = await seedToken()
    const id = await register(tokenId, ALICE, 1_000)
    const won = await Promise.all(
      Array.from({ length: RACERS }, (_, i) => store().tx((tx) => tx.claimRegistrations.markUsed(id, 2_000 + i), { isolation: 'read committed' })),
    )
    expect(won.filter(Boolean)).toHaveLength(1)
    expect((await store().claimRegistrations.get(id))?.usedAt).toBe(2_000 + won.indexOf(true))
  })

  it(`gives a used registration back to one of ${RACERS} concurrent releases`, async () => {
    const tokenId = await seedToken()
    const id = await register(tokenId, ALICE, 1_000)
    await store().claimRegistrations.markUsed(id, 1_020)
    const released = await Promise.all(
      Array.from({ length: RACERS }, () => store().tx((tx) => tx.claimRegistrations.release(id), { isolation: 'read committed' })),
    )
    expect(released.filter(Boolean)).toHaveLength(1)
  })

  // No constraint holds this rule (an open registration depends on the time): the check-then-insert
  // transaction does, serialized by BEGIN IMMEDIATE on SQLite and by SERIALIZABLE (and its retries) on PG.
  it(`opens one registration per token when ${RACERS} recipients register at once`, async () => {
    const tokenId = await seedToken()
    const ids = await Promise.all(
      Array.from({ length: RACERS }, (_, i) =>
        store().tx(async (tx) => {
          if (await tx.claimRegistrations.findOpen(tokenId, 1_000)) return null
          // Every racer holding a connection has read before any inserts (without a rule, all of them would).
          await sleep(20)
          return tx.claimRegistrations.insert({ tokenId, recipient: `0x${String(i).padStart(40, '0')}`, createdAt: 1_000, allowedAt: 1_010, expiresAt: 1_100 })
        }),
      ),
    )
    const opened = ids.filter((id) => id !== null)
    expect(opened).toHaveLength(1)
    expect((await store().claimRegistrations.findOpen(tokenId, 1_000))?.id).toBe(opened[0])
  })
})
