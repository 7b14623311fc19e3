import { expect, it } from 'vitest'
import { describeStores } from '../helpers/stores.js'
import { insertChainTx, insertRow } from './seedRows.js'

describeStores('checkIns', ({ store }) => {
  const seed = async () => {
    const s = store()
    const teamId = await s.teams.insert({ name: 'Team', redirectUrl: null, now: 1 })
    for (const uid of ['04AABBCCDDEEFF', '04BBCCDDEEFF00']) await s.chips.insert({ uid, teamId, groupId: null, kind: 'ntag424', redirectUrl: null, now: 1 })
    const contractId = await insertRow(s, 'guestbook_contracts', {
      team_id: teamId, name: 'Book', symbol: 'BK', chain_id: 31337, address: '0x00000000000000000000000000000000000000bb', status: 'confirmed', created_at: 1,
    })
    const event = (name: string, tokenId: string) =>
      insertRow(s, 'guestbook_events', { team_id: teamId, contract_id: contractId, name, token_id: tokenId, metadata: '{}', created_at: 1, updated_at: 1 })
    const eventId = await event('Opening', '1')
    const otherEvent = await event('Closing', '2')
    const door = await s.stations.insert({ teamId, name: 'Door', prefix: 'tgst_d', hash: 'h-d', now: 1 })
    const bar = await s.stations.insert({ teamId, name: 'Bar', prefix: 'tgst_b', hash: 'h-b', now: 1 })
    await s.stations.setMode(door, 'checkin', eventId)
    await s.stations.setMode(bar, 'checkin', eventId)
    return { teamId, eventId, otherEvent, door, bar }
  }

  it('inserts a check-in and reads it with its event and station names', async () => {
    const { eventId, door } = await seed()
    const id = await store().checkIns.insert({ eventId, chipUid: '04AABBCCDDEEFF', stationId: door, manual: true, now: 1_700_000_000_001 })
    const row = {
      id, eventId, chipUid: '04AABBCCDDEEFF', stationId: door, manual: 1, mintId: null, chainTxId: null, createdAt: 1_700_000_000_001, undoneAt: null,
      attendeeId: null, leftAt: null, eventName: 'Opening', stationName: 'Door',
    }
    expect(await store().checkIns.get(id!)).toEqual(row)
    expect(await store().checkIns.get(999)).toBeUndefined()
    expect(await store().checkIns.findActive(eventId, '04AABBCCDDEEFF')).toEqual(row)
    expect(await store().checkIns.findActive(eventId, '04BBCCDDEEFF00')).toBeUndefined()
    expect(await store().checkIns.lastAtStation(door)).toEqual(row)
    const second = await store().checkIns.insert({ eventId, chipUid: '04BBCCDDEEFF00', stationId: door, manual: false, now: 1_700_000_000_001 })
    // Same time: the higher id is the last.
    expect(await store().checkIns.lastAtStation(door)).toEqual({ ...row, id: second, chipUid: '04BBCCDDEEFF00', manual: 0 })
  })

  it('refuses a second check-in of a chip to an event until the first is undone (undo once)', async () => {
    const { eventId, otherEvent, door, bar } = await seed()
    const first = await store().checkIns.insert({ eventId, chipUid: '04AABBCCDDEEFF', stationId: door, manual: false, now: 10 })
    expect(first).not.toBeNull()
    expect(await store().checkIns.insert({ eventId, chipUid: '04AABBCCDDEEFF', stationId: bar, manual: false, now: 11 })).toBeNull()
    expect(await store().checkIns.insert({ eventId: otherEvent, chipUid: '04AABBCCDDEEFF', stationId: bar, manual: false, now: 12 })).not.toBeNull()
    expect(await store().checkIns.undo(first!, 20)).toBe(true)
    expect(await store().checkIns.undo(first!, 21)).toBe(false)
    expect((await store().checkIns.get(first!))?.undoneAt).toBe(20)
    expect(await store().checkIns.findActive(eventId, '04AABBCCDDEEFF')).toBeUndefined()
    expect(await store().checkIns.lastAtStation(door)).toBeUndefined()
    const again = await store().checkIns.insert({ eventId, chipUid: '04AABBCCDDEEFF', stationId: bar, manual: true, now: 30 })
    expect(again).not.toBeNull()
    expect((await store().checkIns.findActive(eventId, '04AABBCCDDEEFF'))?.id).toBe(again)
  })

  it('links a mint and its transaction, finds the newest check-in of a transaction, and drops the mint', async () => {
    const { eventId, door } = await seed()
    const txId = await insertChainTx(store())
    const mintId = await insertRow(store(), 'guestbook_mints', { event_id: eventId, recipient: '0x01', chip_uid: '04AABBCCDDEEFF', chain_tx_id: txId, created_at: 1 })
    const first = (await store().checkIns.insert({ eventId, chipUid: '04AABBCCDDEEFF', stationId: door, manual: false, now: 10 }))!
    await store().checkIns.setMint(first, mintId, txId)
    await store().checkIns.undo(first, 11)
    const second = (await store().checkIns.insert({ eventId, chipUid: '04AABBCCDDEEFF', stationId: door, manual: false, now: 12 }))!
    await store().checkIns.setMint(second, mintId, txId)
    expect(await store().checkIns.findByTx(txId)).toMatchObject({ id: second, mintId, chainTxId: txId })
    expect(await store().checkIns.findByTx(txId + 1)).toBeUndefined()
    await store().checkIns.dropMintOfTx(txId)
    expect(await store().checkIns.get(first)).toMatchObject({ mintId: null, chainTxId: txId })
    expect(await store().checkIns.get(second)).toMatchObject({ mintId: null, chainTxId: txId })
    await store().checkIns.setMint(second, null, null)
    expect(await store().checkIns.get(second)).toMatchObject({ mintId: null, chainTxId: null })
  })

  it('counts per event and per station, undone check-ins excepted, recent ones since a time', async () => {
    const { teamId, eventId, otherEvent, door, bar } = await seed()
    const a = await store().checkIns.insert({ eventId, chipUid: '04AABBCCDDEEFF', stationId: door, manual: false, now: 100 })
    await store().checkIns.insert({ eventId, chipUid: '04BBCCDDEEFF00', stationId: door, manual: false, now: 200 })
    await store().checkIns.insert({ eventId: otherEvent, chipUid: '04AABBCCDDEEFF', stationId: bar, manual: false, now: 300 })
    expect(await store().checkIns.countEvent(eventId)).toBe(2)
    expect(await store().checkIns.countStation(door, eventId, 150)).toEqual({ n: 2, recent: 1 })
    expect(await store().checkIns.countStation(bar, eventId, 0)).toEqual({ n: 0, recent: 0 })
    expect(await store().checkIns.perEvent(teamId)).toEqual([{ eventId, name: 'Opening', n: 2 }, { eventId: otherEvent, name: 'Closing', n: 1 }])
    // A station counts the check-ins of its own event only (bar's is for the other event).
    expect(await store().checkIns.perStation(teamId, 150)).toEqual([{ stationId: door, n: 2, recent: 1 }, { stationId: bar, n: 0, recent: 0 }])
    await store().checkIns.undo(a!, 400)
    expect(await store().checkIns.countEvent(eventId)).toBe(1)
    expect(await store().checkIns.countStation(door, eventId, 0)).toEqual({ n: 1, recent: 1 })
    expect(await store().checkIns.perEvent(12345)).toEqual([])
  })

  for (const isolation of ['read committed', 'serializable'] as const) {
    it(`checks a chip in once when 20 transactions at two stations race (${isolation})`, async () => {
      const { eventId, door, bar } = await seed()
      const ids = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store().tx((tx) => tx.checkIns.insert({ eventId, chipUid: '04AABBCCDDEEFF', stationId: i % 2 ? door : bar, manual: false, now: 100 + i }), { isolation }),
        ),
      )
      const winners = ids.filter((id) => id !== null)
      expect(winners).toHaveLength(1)
      expect(await store().checkIns.countEvent(eventId)).toBe(1)
      expect((await store().checkIns.findActive(eventId, '04AABBCCDDEEFF'))?.id).toBe(winners[0])
    })
  }

  const guests = async (eventId: number) => {
    await store().attendees.upsertMany(eventId, [
      { name: 'Ada Lovelace', email: null, ticketType: 'VIP', ticketCode: 'T1', wallet: null, note: null, needsAttention: null },
      { name: 'Bob Byte', email: null, ticketType: 'GA', ticketCode: 'T2', wallet: null, note: null, needsAttention: null },
    ], 1)
    return [(await store().attendees.findByCode(eventId, 'T1'))!.id, (await store().attendees.findByCode(eventId, 'T2'))!.id] as const
  }

  it("checks a guest in once per event, with a chip or by name, and records going out and coming back once", async () => {
    const { eventId, door, bar } = await seed()
    const [ada, bob] = await guests(eventId)
    const s = store()
    // By name: no chip. Then one of her chips at another door: the guest's index refuses it.
    const byName = (await s.checkIns.insert({ eventId, chipUid: null, attendeeId: ada, stationId: door, manual: true, now: 10 }))!
    expect(await s.checkIns.insert({ eventId, chipUid: '04AABBCCDDEEFF', attendeeId: ada, stationId: bar, manual: false, now: 11 })).toBeNull()
    expect(await s.checkIns.findActiveByAttendee(eventId, ada)).toMatchObject({ id: byName, chipUid: null, attendeeId: ada, leftAt: null, manual: 1 })
    expect(await s.checkIns.findActiveByAttendee(eventId, bob)).toBeUndefined()
    expect(await s.checkIns.markBack(byName)).toBe(false)
    expect(await s.checkIns.markLeft(byName, 20)).toBe(true)
    expect(await s.checkIns.markLeft(byName, 21)).toBe(false)
    expect((await s.checkIns.get(byName))!.leftAt).toBe(20)
    expect(await s.checkIns.markBack(byName)).toBe(true)
    expect(await s.checkIns.markBack(byName)).toBe(false)
    expect((await s.checkIns.get(byName))!.leftAt).toBeNull()
    // An undone check-in neither leaves nor comes back, and the guest may check in again.
    await s.checkIns.undo(byName, 30)
    expect(await s.checkIns.markLeft(byName, 31)).toBe(false)
    expect(await s.checkIns.insert({ eventId, chipUid: '04AABBCCDDEEFF', attendeeId: ada, stationId: bar, manual: false, now: 32 })).not.toBeNull()
  })

  it("counts the event's door: checked in, with a guest, inside, per ticket type, arrivals per bucket since a time", async () => {
    const { eventId, otherEvent, door, bar } = await seed()
    const [ada, bob] = await guests(eventId)
    const s = store()
    const empty = { checkedIn: 0, withAttendee: 0, inside: 0, first: null }
    expect(await s.checkIns.doorCounts(eventId)).toEqual(empty)
    const a = (await s.checkIns.insert({ eventId, chipUid: null, attendeeId: ada, stationId: door, manual: true, now: 600_000 }))!
    await s.checkIns.insert({ eventId, chipUid: '04BBCCDDEEFF00', attendeeId: bob, stationId: bar, manual: false, now: 650_000 })
    // A chip on no list (checked in before the list came), another event's.
    await s.checkIns.insert({ eventId, chipUid: '04AABBCCDDEEFF', stationId: bar, manual: false, now: 1_000_000 })
    await s.checkIns.insert({ eventId: otherEvent, chipUid: '04AABBCCDDEEFF', stationId: bar, manual: false, now: 5 })
    await s.checkIns.markLeft(a, 700_000)
    expect(await s.checkIns.doorCounts(eventId)).toEqual({ checkedIn: 3, withAttendee: 2, inside: 2, first: 600_000 })
    expect(await s.checkIns.perTicketType(eventId)).toEqual([{ ticketType: 'GA', checkedIn: 1 }, { ticketType: 'VIP', checkedIn: 1 }])
    expect(await s.checkIns.arrivals(eventId, 300_000, 0)).toEqual([{ at: 600_000, count: 2 }, { at: 900_000, count: 1 }])
    expect(await s.checkIns.arrivals(eventId, 300_000, 640_000)).toEqual([{ at: 600_000, count: 1 }, { at: 900_000, count: 1 }])
    await s.checkIns.undo(a, 800_000)
    expect(await s.checkIns.doorCounts(eventId)).toEqual({ checkedIn: 2, withAttendee: 1, inside: 2, first: 650_000 })
    expect(await s.checkIns.perTicketType(eventId)).toEqual([{ ticketType: 'GA', checkedIn: 1 }])
    expect(await s.checkIns.doorCounts(12345)).toEqual(empty)
  })

  it('checks a guest with two chips in once when 20 transactions at two doors race, and lets one of 20 exits out', async () => {
    const { eventId, door, bar } = await seed()
    const [ada] = await guests(eventId)
    const chips = ['04AABBCCDDEEFF', '04BBCCDDEEFF00']
    const ids = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store().tx((tx) => tx.checkIns.insert({ eventId, chipUid: chips[i % 2]!, attendeeId: ada, stationId: i % 2 ? door : bar, manual: false, now: 100 + i }), { isolation: 'read committed' }),
      ),
    )
    const winners = ids.filter((id) => id !== null)
    expect(winners).toHaveLength(1)
    const exits = await Promise.all(Array.from({ length: 20 }, (_, i) => store().tx((tx) => tx.checkIns.markLeft(winners[0]!, 200 + i), { isolation: 'read committed' })))
    expect(exits.filter(Boolean)).toHaveLength(1)
  })

  it('undoes a check-in once when 20 transactions race', async () => {
    const { eventId, door } = await seed()
    const id = (await store().checkIns.insert({ eventId, chipUid: '04AABBCCDDEEFF', stationId: door, manual: false, now: 1 }))!
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store().tx((tx) => tx.checkIns.undo(id, 100 + i), { isolation: 'read committed' })),
    )
    expect(outcomes.filter(Boolean)).toHaveLength(1)
    expect((await store().checkIns.get(id))?.undoneAt).toBe(100 + outcomes.indexOf(true))
  })
})
