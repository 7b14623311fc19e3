import { expect, it } from 'vitest'
import { isUniqueViolation } from '../../src/db/storeErrors.js'
import { describeStores } from '../helpers/stores.js'
import { insertChainTx } from './seedRows.js'

const address = (n: number) => `0x${n.toString(16).padStart(40, '0')}`

describeStores('phygitalContracts', ({ store }) => {
  const seed = async () => {
    const s = store()
    const teamId = await s.teams.insert({ name: 'Team', redirectUrl: null, now: 1 })
    const otherTeam = await s.teams.insert({ name: 'Other', redirectUrl: null, now: 1 })
    return { teamId, otherTeam }
  }

  it('stores contracts and finds them by name and chain, by address, and per team in id order', async () => {
    const { teamId, otherTeam } = await seed()
    const s = store()
    const deployTxId = await insertChainTx(s)
    const one = { teamId, name: 'Shoes', symbol: 'SHOE', chainId: 31337, address: address(1), deployTxId, createdAt: 1_700_000_000_000 }
    const a = await s.phygitalContracts.insert(one)
    const two = { teamId, name: 'Shoes', symbol: 'SHOE', chainId: 1, address: address(1), deployTxId: null, createdAt: 5 }
    const b = await s.phygitalContracts.insert(two)
    const c = await s.phygitalContracts.insert({ ...two, teamId: otherTeam, chainId: 31337, address: address(3) })
    expect(await s.phygitalContracts.findByName(teamId, 'Shoes', 31337)).toEqual({ id: a, ...one })
    expect(await s.phygitalContracts.findByName(teamId, 'Shoes', 1)).toEqual({ id: b, ...two })
    expect(await s.phygitalContracts.findByName(teamId, 'Shoes', 5)).toBeUndefined()
    expect(await s.phygitalContracts.findByAddress(31337, address(1))).toEqual({ id: a, ...one })
    expect(await s.phygitalContracts.findByAddress(31337, address(3))).toEqual({ id: c, ...two, teamId: otherTeam, chainId: 31337, address: address(3) })
    expect(await s.phygitalContracts.findByAddress(31337, address(9))).toBeUndefined()
    expect(await s.phygitalContracts.list(teamId)).toEqual([{ id: a, ...one }, { id: b, ...two }])
    expect(await s.phygitalContracts.list(999)).toEqual([])
    // One address per chain, one name per team and chain.
    for (const clash of [{ ...two, name: 'Hats', chainId: 31337 }, { ...two, address: address(7) }]) {
      expect(isUniqueViolation(await s.phygitalContracts.insert(clash).catch((e: unknown) => e))).toBe(true)
    }
    expect(await s.phygitalContracts.list(teamId)).toHaveLength(2)
  })

  const racers = 20
  it(`records a contract once when ${racers} deploy requests race on one name`, async () => {
    const { teamId } = await seed()
    const s = store()
    const outcomes = await Promise.allSettled(
      Array.from({ length: racers }, (_, i) =>
        s.tx((tx) => tx.phygitalContracts.insert({ teamId, name: 'Race', symbol: 'R', chainId: 31337, address: address(100 + i), deployTxId: null, createdAt: i })),
      ),
    )
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1)
    expect(outcomes.every((o) => o.status === 'fulfilled' || isUniqueViolation(o.reason))).toBe(true)
    expect(await s.phygitalContracts.list(teamId)).toHaveLength(1)
  })
})
