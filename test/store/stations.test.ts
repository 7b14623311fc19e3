import { expect, it } from 'vitest'
import { describeStores } from '../helpers/stores.js'

describeStores('stations', ({ store }) => {
  const seed = async () => {
    const teamId = await store().teams.insert({ name: 'Team', redirectUrl: null, now: 1 })
    const other = await store().teams.insert({ name: 'Other', redirectUrl: null, now: 1 })
    return { teamId, other }
  }

  it('inserts, reads and lists stations with numbers for ids, times and the in-process flag', async () => {
    const { teamId, other } = await seed()
    const a = await store().stations.insert({ teamId, name: 'Door', prefix: 'tgst_aa', hash: 'h-a', now: 1_700_000_000_001 })
    const b = await store().stations.insertInProcess({ teamId, name: 'Gateway readers', prefix: 'tgst_bb', hash: 'h-b', now: 1_700_000_000_002 })
    await store().stations.insert({ teamId: other, name: 'Elsewhere', prefix: 'tgst_cc', hash: 'h-c', now: 3 })
    expect(b).toBe(a + 1)
    const door = { id: a, teamId, name: 'Door', prefix: 'tgst_aa', createdAt: 1_700_000_000_001, revokedAt: null, mode: null, eventId: null, inProcess: 0, testUntil: null,
      ticketTypes: null, bindAttendeeId: null, bindRebind: 0, bindUntil: null }
    const readers = { ...door, id: b, name: 'Gateway readers', prefix: 'tgst_bb', createdAt: 1_700_000_000_002, inProcess: 1 }
    expect(await store().stations.get(a)).toEqual(door)
    expect(await store().stations.get(999)).toBeUndefined()
    expect(await store().stations.listByTeam(teamId)).toEqual([door, readers])
    expect(await store().stations.listByTeam(12345)).toEqual([])
    expect(await store().stations.findActiveByHash('h-a')).toEqual(door)
    expect(await store().stations.findActiveByHash('nope')).toBeUndefined()
    expect(await store().stations.findInProcess(teamId)).toEqual(readers)
    expect(await store().stations.findInProcess(other)).toBeUndefined()
  })

  it('sets the mode, event and test window, and clears them', async () => {
    const { teamId } = await seed()
    const id = await store().stations.insert({ teamId, name: 'Door', prefix: 'p', hash: 'h', now: 1 })
    await store().stations.setMode(id, 'closed', null)
    await store().stations.setTestUntil(id, 1_700_000_060_000)
    expect(await store().stations.get(id)).toMatchObject({ mode: 'closed', eventId: null, testUntil: 1_700_000_060_000 })
    await store().stations.setMode(id, null, null)
    await store().stations.setTestUntil(id, null)
    expect(await store().stations.get(id)).toMatchObject({ mode: null, eventId: null, testUntil: null })
  })

  it('sets the ticket types a door admits, arms a bind door with a guest, and lets one tap take the arming before it expires', async () => {
    const { teamId } = await seed()
    const s = store()
    const id = await s.stations.insert({ teamId, name: 'Bind', prefix: 'p', hash: 'h', now: 1 })
    const contractId = (await s.guestbook.insertContract({ teamId, name: 'B', symbol: 'B', chainId: 31337, address: '0x00000000000000000000000000000000000000bb', now: 1 }))
    const eventId = await s.guestbook.insertEvent({ teamId, contractId, name: 'E', tokenId: '1', metadata: '{}', now: 1 })
    await s.attendees.upsertMany(eventId, [{ name: 'Ada', email: null, ticketType: 'VIP', ticketCode: 'T1', wallet: null, note: null, needsAttention: null }], 1)
    const ada = (await s.attendees.findByCode(eventId, 'T1'))!.id
    await s.stations.setMode(id, 'bind', eventId)
    await s.stations.setTicketTypes(id, ['VIP', 'Press'])
    expect(await s.stations.get(id)).toMatchObject({ mode: 'bind', ticketTypes: '["VIP","Press"]' })
    await s.stations.setTicketTypes(id, null)
    expect((await s.stations.get(id))!.ticketTypes).toBeNull()
    await s.stations.arm(id, { attendeeId: ada, rebind: true, until: 1000 })
    expect(await s.stations.get(id)).toMatchObject({ bindAttendeeId: ada, bindRebind: 1, bindUntil: 1000 })
    // Expired, or armed with someone else: nothing to take.
    expect(await s.stations.takeArmed(id, ada, 1000)).toBe(false)
    expect(await s.stations.takeArmed(id, ada + 1, 999)).toBe(false)
    const takes = await Promise.all(Array.from({ length: 20 }, () => s.tx((tx) => tx.stations.takeArmed(id, ada, 999), { isolation: 'read committed' })))
    expect(takes.filter(Boolean)).toHaveLength(1)
    expect(await s.stations.get(id)).toMatchObject({ bindAttendeeId: null, bindRebind: 0, bindUntil: null })
    await s.stations.arm(id, { attendeeId: ada, rebind: false, until: 1000 })
    await s.stations.arm(id, null)
    expect(await s.stations.get(id)).toMatchObject({ bindAttendeeId: null, bindRebind: 0, bindUntil: null })
  })

  it('revokes by prefix and by hash, counting only the rows this call revoked', async () => {
    const { teamId } = await seed()
    const a = await store().stations.insert({ teamId, name: 'A', prefix: 'tgst_same', hash: 'h-a', now: 1 })
    await store().stations.insert({ teamId, name: 'B', prefix: 'tgst_same', hash: 'h-b', now: 1 })
    const c = await store().stations.insert({ teamId, name: 'C', prefix: 'tgst_c', hash: 'h-c', now: 1 })
    expect(await store().stations.revokeByHash('h-a', 50)).toBe(1)
    expect(await store().stations.revokeByHash('h-a', 60)).toBe(0)
    expect(await store().stations.revokeByPrefix('tgst_same', 70)).toBe(1)
    expect(await store().stations.revokeByPrefix('tgst_same', 80)).toBe(0)
    expect(await store().stations.revokeByPrefix('tgst_none', 80)).toBe(0)
    expect((await store().stations.get(a))?.revokedAt).toBe(50)
    expect((await store().stations.listByTeam(teamId)).map((s) => s.revokedAt)).toEqual([50, 70, null])
    expect(await store().stations.findActiveByHash('h-a')).toBeUndefined()
    expect((await store().stations.findActiveByHash('h-c'))?.id).toBe(c)
  })

  it('revokes a station once when 20 transactions race to revoke it', async () => {
    const { teamId } = await seed()
    await store().stations.insert({ teamId, name: 'A', prefix: 'tgst_r', hash: 'h-r', now: 1 })
    const counts = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store().tx((tx) => tx.stations.revokeByPrefix('tgst_r', 100 + i), { isolation: 'read committed' })),
    )
    expect(counts.reduce((a, b) => a + b, 0)).toBe(1)
    const revokedAt = (await store().stations.findActiveByHash('h-r'))?.revokedAt
    expect(revokedAt).toBeUndefined()
    const [row] = await store().stations.listByTeam(teamId)
    expect(row!.revokedAt).toBe(100 + counts.indexOf(1))
  })
})
