import { expect, it } from 'vitest'
import { describeStores } from '../helpers/stores.js'

describeStores('proofEvents', ({ store }) => {
  const seed = async () => {
    const s = store()
    const teamId = await s.teams.insert({ name: 'Team', redirectUrl: null, now: 1 })
    const otherTeam = await s.teams.insert({ name: 'Other', redirectUrl: null, now: 1 })
    for (const uid of ['04AA000000000A', '04AA000000000B']) await s.chips.insert({ uid, teamId, groupId: null, kind: 'ntag424', redirectUrl: null, now: 1 })
    return { teamId, otherTeam }
  }

  it('upserts an event by (team, POAP event id): an update keeps its id and creation time', async () => {
    const { teamId, otherTeam } = await seed()
    const s = store()
    const id = await s.proofEvents.upsert({ teamId, proofEventId: 190_000, name: 'Meetup', status: 'pending-approval', now: 1_700_000_000_000 })
    expect(await s.proofEvents.get(id)).toEqual({ id, teamId, proofEventId: 190_000, name: 'Meetup', status: 'pending-approval', createdAt: 1_700_000_000_000, guestbookEventId: null })
    expect(await s.proofEvents.upsert({ teamId, proofEventId: 190_000, name: 'Meetup 2', status: 'active', now: 9 })).toBe(id)
    expect(await s.proofEvents.get(id)).toEqual({ id, teamId, proofEventId: 190_000, name: 'Meetup 2', status: 'active', createdAt: 1_700_000_000_000, guestbookEventId: null })
    // The same POAP event id in another team is another row.
    const other = await s.proofEvents.upsert({ teamId: otherTeam, proofEventId: 190_000, name: 'Theirs', status: 'future', now: 3 })
    expect(other).not.toBe(id)
    expect(await s.proofEvents.get(other)).toEqual({ id: other, teamId: otherTeam, proofEventId: 190_000, name: 'Theirs', status: 'future', createdAt: 3, guestbookEventId: null })
    expect(await s.proofEvents.get(999)).toBeUndefined()
  })

  it('links chips once and lists a chip\'s events in id order', async () => {
    const { teamId } = await seed()
    const s = store()
    const first = await s.proofEvents.upsert({ teamId, proofEventId: 2, name: 'Two', status: 'active', now: 2 })
    const second = await s.proofEvents.upsert({ teamId, proofEventId: 1, name: 'One', status: 'expired', now: 3 })
    await s.proofEvents.linkChip(second, '04AA000000000A')
    await s.proofEvents.linkChip(first, '04AA000000000A')
    await s.proofEvents.linkChip(first, '04AA000000000A')
    await s.proofEvents.linkChip(second, '04AA000000000B')
    expect(await s.proofEvents.listByChip('04AA000000000A')).toEqual([
      { id: first, teamId, proofEventId: 2, name: 'Two', status: 'active', createdAt: 2, guestbookEventId: null },
      { id: second, teamId, proofEventId: 1, name: 'One', status: 'expired', createdAt: 3, guestbookEventId: null },
    ])
    expect(await s.proofEvents.listByChip('04AA000000000B')).toEqual([{ id: second, teamId, proofEventId: 1, name: 'One', status: 'expired', createdAt: 3, guestbookEventId: null }])
    expect(await s.proofEvents.listByChip('04AA00000000FF')).toEqual([])
  })

  it('makes one event and one link when 20 imports of it race', async () => {
    const { teamId } = await seed()
    const s = store()
    const ids = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        s.tx(async (tx) => {
          const id = await tx.proofEvents.upsert({ teamId, proofEventId: 7, name: `Seven ${i}`, status: 'active', now: i })
          await tx.proofEvents.linkChip(id, '04AA000000000A')
          return id
        }),
      ),
    )
    expect(new Set(ids).size).toBe(1)
    const events = await s.proofEvents.listByChip('04AA000000000A')
    expect(events).toHaveLength(1)
    expect(events[0]!.id).toBe(ids[0])
  })
  it("keeps the guestbook event a proof event is minted as (set once) and the team's proof events guestbook per chain (migration 019)", async () => {
    const { teamId, otherTeam } = await seed()
    const s = store()
    const id = await s.proofEvents.upsert({ teamId, proofEventId: 5, name: 'Five', status: 'active', now: 1 })
    const contractId = await s.guestbook.insertContract({ teamId, name: 'Proof events', symbol: 'PROOF', chainId: 31337, address: null, plannedAddress: null, deployTxId: null, now: 1 })
    const eventId = await s.guestbook.insertEvent({ teamId, contractId, name: 'Five', tokenId: '5', metadata: '{}', now: 1 })
    const other = await s.guestbook.insertEvent({ teamId, contractId, name: 'Five again', tokenId: '55', metadata: '{}', now: 1 })
    expect(await s.proofEvents.contractOf(teamId, 31337)).toBeUndefined()
    await s.proofEvents.setContract(teamId, 31337, contractId)
    expect(await s.proofEvents.contractOf(teamId, 31337)).toBe(contractId)
    expect(await s.proofEvents.contractOf(teamId, 1)).toBeUndefined()
    expect(await s.proofEvents.contractOf(otherTeam, 31337)).toBeUndefined()
    // One per team and chain.
    await expect(s.proofEvents.setContract(teamId, 31337, contractId)).rejects.toThrow()
    expect(await s.proofEvents.setGuestbookEvent(id, eventId)).toBe(true)
    // Set once: a second first mint does not move it.
    expect(await s.proofEvents.setGuestbookEvent(id, other)).toBe(false)
    expect(await s.proofEvents.get(id)).toMatchObject({ guestbookEventId: eventId })
  })
})
