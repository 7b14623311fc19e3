import { expect, it } from 'vitest'
import type { TokenWrite } from '../../src/db/tokens.js'
import { describeStores } from '../helpers/stores.js'
import { insertTeam } from './seedRows.js'

const RACERS = 20
const key = { chainId: 31337, contractAddress: '0x00000000000000000000000000000000000000c0', tokenId: '7' }
const write = (teamId: number, over: Partial<TokenWrite> = {}): TokenWrite => ({
  ...key, teamId, metadata: '{"name":"Shoe"}', twoTapClaim: true, claimDelaySeconds: 30, claimWindowSeconds: 600, now: 1_700_000_000_001, ...over,
})

describeStores('tokens', ({ store }) => {
  const seed = () => insertTeam(store(), ['04A1000000000A', '04A2000000000A', '04A3000000000A'])

  it('inserts a token and finds it by id, key and chip with 0/1 flags and numbers', async () => {
    const teamId = await seed()
    const id = await store().tokens.insert(write(teamId))
    const row = {
      id, teamId, ...key, metadata: '{"name":"Shoe"}', twoTapClaim: 1, claimDelaySeconds: 30, claimWindowSeconds: 600,
      createdAt: 1_700_000_000_001, updatedAt: 1_700_000_000_001, minted: 0, moves: 0, outsideMoves: null,
    }
    expect(await store().tokens.get(id)).toEqual(row)
    expect(await store().tokens.findByKey(key)).toEqual(row)
    expect(await store().tokens.findByKey({ ...key, tokenId: '8' })).toBeUndefined()
    expect(await store().tokens.get(id + 100)).toBeUndefined()
    expect(await store().tokens.findByChip('04A1000000000A')).toBeUndefined()
    await store().tokens.linkChip(id, '04A1000000000A', 5)
    expect(await store().tokens.findByChip('04A1000000000A')).toEqual(row)
  })

  it('updates the settings, metadata and minted flag', async () => {
    const teamId = await seed()
    const id = await store().tokens.insert(write(teamId))
    await store().tokens.update(id, write(teamId, { metadata: null, twoTapClaim: false, claimDelaySeconds: 0, claimWindowSeconds: 60, now: 50 }))
    expect(await store().tokens.get(id)).toMatchObject({ metadata: null, twoTapClaim: 0, claimDelaySeconds: 0, claimWindowSeconds: 60, createdAt: 1_700_000_000_001, updatedAt: 50 })
    await store().tokens.setMetadata(id, '{"name":"Boot"}', 60)
    expect(await store().tokens.get(id)).toMatchObject({ metadata: '{"name":"Boot"}', updatedAt: 60, minted: 0 })
    await store().tokens.setMinted(id, true)
    expect((await store().tokens.get(id))?.minted).toBe(1)
    await store().tokens.setMinted(id, false)
    expect((await store().tokens.get(id))?.minted).toBe(0)
  })

  it('lists a token\'s chips by link time and moves a chip to its new token, keeping a repeated link\'s time', async () => {
    const teamId = await seed()
    const a = await store().tokens.insert(write(teamId))
    const b = await store().tokens.insert(write(teamId, { tokenId: '8' }))
    await store().tokens.linkChip(a, '04A3000000000A', 10)
    await store().tokens.linkChip(a, '04A2000000000A', 10)
    await store().tokens.linkChip(a, '04A1000000000A', 5)
    expect(await store().tokens.chipUids(a)).toEqual(['04A1000000000A', '04A2000000000A', '04A3000000000A'])
    await store().tokens.linkChip(a, '04A1000000000A', 99)
    expect(await store().tokens.chipUids(a)).toEqual(['04A1000000000A', '04A2000000000A', '04A3000000000A'])
    await store().tokens.linkChip(b, '04A2000000000A', 20)
    expect(await store().tokens.chipUids(a)).toEqual(['04A1000000000A', '04A3000000000A'])
    expect(await store().tokens.chipUids(b)).toEqual(['04A2000000000A'])
    expect((await store().tokens.findByChip('04A2000000000A'))?.id).toBe(b)
    expect(await store().tokens.chipUids(b + 100)).toEqual([])
  })

  it('counts outside moves from the first read on, and only their rises', async () => {
    const teamId = await seed()
    const id = await store().tokens.insert(write(teamId))
    expect(await store().tokens.noteOutsideMoves(id, 3)).toBe(0)
    expect(await store().tokens.addMove(id)).toBe(1)
    expect(await store().tokens.noteOutsideMoves(id, 5)).toBe(3)
    expect(await store().tokens.noteOutsideMoves(id, 4)).toBe(3)
    expect(await store().tokens.noteOutsideMoves(id, 5)).toBe(3)
    expect(await store().tokens.noteOutsideMoves(id, 6)).toBe(4)
  })

  it(`gives ${RACERS} concurrent moves ${RACERS} distinct counts`, async () => {
    const teamId = await seed()
    const id = await store().tokens.insert(write(teamId))
    const counts = await Promise.all(
      Array.from({ length: RACERS }, () => store().tx((tx) => tx.tokens.addMove(id), { isolation: 'read committed' })),
    )
    expect([...counts].sort((x, y) => x - y)).toEqual(Array.from({ length: RACERS }, (_, i) => i + 1))
    expect((await store().tokens.get(id))?.moves).toBe(RACERS)
  })

  it(`counts one outside rise once when ${RACERS} readers report it at once`, async () => {
    const teamId = await seed()
    const id = await store().tokens.insert(write(teamId))
    await store().tokens.noteOutsideMoves(id, 2)
    const counts = await Promise.all(
      Array.from({ length: RACERS }, () => store().tx((tx) => tx.tokens.noteOutsideMoves(id, 7), { isolation: 'read committed' })),
    )
    expect(counts.every((n) => n === 5)).toBe(true)
    expect((await store().tokens.get(id))?.moves).toBe(5)
  })

  it('lock: transfers of one token take turns, so the second sees the first one\'s mint (read committed)', async () => {
    const teamId = await seed()
    const id = await store().tokens.insert(write(teamId))
    // Each racer does what a transfer does: read the token under the lock, mint if not minted yet.
    const minters = await Promise.all(
      Array.from({ length: RACERS }, () =>
        store().tx(async (tx) => {
          const token = (await tx.tokens.lock(id))!
          await new Promise((resolve) => setTimeout(resolve, 2))
          if (token.minted === 1) return false
          await tx.tokens.setMinted(id, true)
          return true
        }, { isolation: 'read committed' }),
      ),
    )
    expect(minters.filter(Boolean)).toHaveLength(1)
    expect(await store().tokens.lock(id + 100)).toBeUndefined()
  })
})
