import { expect, it } from 'vitest'
import { isUniqueViolation } from '../../src/db/storeErrors.js'
import { describeStores } from '../helpers/stores.js'

describeStores('chipGroups', ({ store }) => {
  it('inserts groups per team, finds one by name and lists a team\'s in id order', async () => {
    const s = store()
    const teamA = await s.teams.insert({ name: 'A', redirectUrl: null, now: 1 })
    const teamB = await s.teams.insert({ name: 'B', redirectUrl: null, now: 1 })
    const lobby = await s.chipGroups.insert({ teamId: teamA, name: 'lobby', now: 1_700_000_000_001 })
    const other = await s.chipGroups.insert({ teamId: teamB, name: 'lobby', now: 2 })
    const stage = await s.chipGroups.insert({ teamId: teamA, name: 'stage', now: 3 })
    expect([lobby, other, stage]).toEqual([1, 2, 3])

    expect(await s.chipGroups.getByName(teamA, 'lobby')).toEqual({ id: lobby, teamId: teamA, name: 'lobby', createdAt: 1_700_000_000_001 })
    expect(await s.chipGroups.getByName(teamB, 'lobby')).toEqual({ id: other, teamId: teamB, name: 'lobby', createdAt: 2 })
    expect(await s.chipGroups.getByName(teamB, 'stage')).toBeUndefined()
    expect(await s.chipGroups.listByTeam(teamA)).toEqual([
      { id: lobby, teamId: teamA, name: 'lobby', createdAt: 1_700_000_000_001 },
      { id: stage, teamId: teamA, name: 'stage', createdAt: 3 },
    ])
    expect(await s.chipGroups.listByTeam(999)).toEqual([])
  })

  it('refuses a second group of the same name in one team and keeps the first', async () => {
    const s = store()
    const teamId = await s.teams.insert({ name: 'A', redirectUrl: null, now: 1 })
    await s.chipGroups.insert({ teamId, name: 'lobby', now: 1 })
    const error = await s.chipGroups.insert({ teamId, name: 'lobby', now: 2 }).catch((e: unknown) => e)
    expect(isUniqueViolation(error)).toBe(true)
    expect(await s.chipGroups.listByTeam(teamId)).toEqual([{ id: 1, teamId, name: 'lobby', createdAt: 1 }])
  })

  it('creates one group when 20 importers race to create it', async () => {
    const s = store()
    const teamId = await s.teams.insert({ name: 'A', redirectUrl: null, now: 1 })
    // The importer's get-or-insert, each in its own serializable transaction: the losers fail on the
    // unique key (or retry and find the row), never make a second group.
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        s.tx(async (tx) => (await tx.chipGroups.getByName(teamId, 'lobby'))?.id ?? tx.chipGroups.insert({ teamId, name: 'lobby', now: i })),
      ),
    )
    for (const o of outcomes) if (o.status === 'rejected') expect(isUniqueViolation(o.reason)).toBe(true)
    const groups = await s.chipGroups.listByTeam(teamId)
    expect(groups).toHaveLength(1)
    const ids = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []))
    expect(ids.length).toBeGreaterThan(0)
    expect(new Set(ids)).toEqual(new Set([groups[0]!.id]))
  })
})
