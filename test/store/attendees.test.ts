import { expect, it } from 'vitest'
import type { AttendeeInput } from '../../src/db/attendees.js'
import { EXPORT_START, searchText } from '../../src/db/attendees.js'
import { describeStores } from '../helpers/stores.js'
import { insertChainTx, insertRow } from './seedRows.js'

const guest = (ticketCode: string, over: Partial<AttendeeInput> = {}): AttendeeInput => ({
  name: `Guest ${ticketCode}`, email: null, ticketType: 'GA', ticketCode, wallet: null, note: null, needsAttention: null, ...over,
})

describeStores('attendees', ({ store }) => {
  const seed = async () => {
    const s = store()
    const teamId = await s.teams.insert({ name: 'Team', redirectUrl: null, now: 1 })
    for (const uid of ['04AA000000000A', '04AA000000000B', '04AA000000000C']) await s.chips.insert({ uid, teamId, groupId: null, kind: 'ntag424', redirectUrl: null, now: 1 })
    const contractId = await insertRow(s, 'guestbook_contracts', {
      team_id: teamId, name: 'Book', symbol: 'BK', chain_id: 31337, address: '0x00000000000000000000000000000000000000bb', status: 'confirmed', created_at: 1,
    })
    const event = (name: string, tokenId: string) =>
      insertRow(s, 'guestbook_events', { team_id: teamId, contract_id: contractId, name, token_id: tokenId, metadata: '{}', created_at: 1, updated_at: 1 })
    const door = await s.stations.insert({ teamId, name: 'Door', prefix: 'tgst_d', hash: 'h-d', now: 1 })
    return { eventId: await event('Opening', '1'), otherEvent: await event('Closing', '2'), door }
  }

  it('imports by ticket code: inserts, then updates in place what the file says and keeps what it leaves out', async () => {
    const { eventId, otherEvent } = await seed()
    const s = store()
    expect(await s.attendees.upsertMany(eventId, [guest('T1', { email: 'a@example.org', wallet: '0xabc', note: 'VIP host', needsAttention: true }), guest('T2')], 10)).toEqual({ inserted: 2, updated: 0 })
    // The same code at another event is another guest.
    expect(await s.attendees.upsertMany(otherEvent, [guest('T1')], 10)).toEqual({ inserted: 1, updated: 0 })
    // A second file without the email, wallet, note and flag columns: the name and type change, the rest stays.
    expect(await s.attendees.upsertMany(eventId, [guest('T1', { name: 'Ada Lovelace', ticketType: 'VIP' }), guest('T3')], 20)).toEqual({ inserted: 1, updated: 1 })
    const ada = (await s.attendees.findByCode(eventId, 'T1'))!
    expect(ada).toEqual({
      id: ada.id, eventId, name: 'Ada Lovelace', email: 'a@example.org', ticketType: 'VIP', ticketCode: 'T1', wallet: '0xabc', note: 'VIP host',
      needsAttention: 1, paid: 1, createdAt: 10, updatedAt: 20,
    })
    expect(await s.attendees.get(ada.id)).toEqual(ada)
    expect(await s.attendees.findByCode(eventId, 'nope')).toBeUndefined()
    expect(await s.attendees.countEvent(eventId)).toBe(3)
    expect(await s.attendees.perType(eventId)).toEqual([{ ticketType: 'GA', expected: 2 }, { ticketType: 'VIP', expected: 1 }])
    await s.attendees.setNeedsAttention(ada.id, false, 30)
    expect((await s.attendees.get(ada.id))!.needsAttention).toBe(0)
  })

  it('searches name, email and ticket code folded (case, accents), its own % and _ taken literally; lists by page', async () => {
    const { eventId } = await seed()
    const s = store()
    await s.attendees.upsertMany(eventId, [
      guest('A-100', { name: 'Zoë Ångström', email: 'zoe@example.org' }),
      guest('B-200', { name: 'Bob 100%', email: null }),
      guest('C-300', { name: 'carl_x', email: 'CARL@EXAMPLE.ORG' }),
    ], 1)
    const names = (rows: { name: string }[]) => rows.map((r) => r.name)
    expect(names(await s.attendees.search(eventId, 'zoe', 20))).toEqual(['Zoë Ångström'])
    expect(names(await s.attendees.search(eventId, 'ANGSTR', 20))).toEqual(['Zoë Ångström'])
    expect(names(await s.attendees.search(eventId, 'carl@', 20))).toEqual(['carl_x'])
    expect(names(await s.attendees.search(eventId, 'b-2', 20))).toEqual(['Bob 100%'])
    expect(names(await s.attendees.search(eventId, '0%', 20))).toEqual(['Bob 100%'])
    expect(names(await s.attendees.search(eventId, 'l_x', 20))).toEqual(['carl_x'])
    expect(names(await s.attendees.search(eventId, '_', 20))).toEqual(['carl_x'])
    expect(await s.attendees.search(eventId, 'nobody', 20)).toEqual([])
    // Byte order of names, as on SQLite: upper case first.
    expect(await s.attendees.list(eventId, { limit: 2, offset: 0 })).toMatchObject({ total: 3, attendees: [{ name: 'Bob 100%' }, { name: 'Zoë Ångström' }] })
    expect(await s.attendees.list(eventId, { limit: 2, offset: 2 })).toMatchObject({ total: 3, attendees: [{ name: 'carl_x' }] })
    expect(await s.attendees.list(eventId, { query: 'example', limit: 10, offset: 0 })).toMatchObject({ total: 2 })
    expect(searchText('Zoë', null, 'X-1')).toBe('zoe x-1')
  })

  it('binds a chip to one guest per event; a guest gets one wristband at a door, any number from the list; a rebind unbinds', async () => {
    const { eventId, otherEvent, door } = await seed()
    const s = store()
    await s.attendees.upsertMany(eventId, [guest('T1'), guest('T2')], 1)
    await s.attendees.upsertMany(otherEvent, [guest('T1')], 1)
    const t1 = (await s.attendees.findByCode(eventId, 'T1'))!.id
    const t2 = (await s.attendees.findByCode(eventId, 'T2'))!.id
    const other = (await s.attendees.findByCode(otherEvent, 'T1'))!.id
    const imported = await s.attendeeChips.bind({ eventId, attendeeId: t1, chipUid: '04AA000000000A', stationId: null, now: 2 })
    expect(imported).toEqual(expect.any(Number))
    // The chip is T1's at this event: not T2's too; at another event it may open another guest's door.
    expect(await s.attendeeChips.bind({ eventId, attendeeId: t2, chipUid: '04AA000000000A', stationId: door, now: 3 })).toBeNull()
    expect(await s.attendeeChips.bind({ eventId: otherEvent, attendeeId: other, chipUid: '04AA000000000A', stationId: door, now: 3 })).toEqual(expect.any(Number))
    // One wristband bound at a door per guest (the race of one ticket at two doors); the imported chip does not count.
    expect(await s.attendeeChips.bind({ eventId, attendeeId: t1, chipUid: '04AA000000000B', stationId: door, now: 4 })).toEqual(expect.any(Number))
    expect(await s.attendeeChips.bind({ eventId, attendeeId: t1, chipUid: '04AA000000000C', stationId: door, now: 5 })).toBeNull()
    expect((await s.attendeeChips.ofAttendee(t1)).map((c) => c.chipUid)).toEqual(['04AA000000000A', '04AA000000000B'])
    expect(await s.attendeeChips.findByChip(eventId, '04AA000000000B')).toMatchObject({ attendeeId: t1, stationId: door, boundAt: 4, unboundAt: null })
    // Lost badge: every chip of T1 stops working for the event, and the new one binds.
    expect(await s.attendeeChips.unbindAttendee(t1, 6)).toBe(2)
    expect(await s.attendeeChips.findByChip(eventId, '04AA000000000A')).toBeUndefined()
    expect(await s.attendeeChips.bind({ eventId, attendeeId: t1, chipUid: '04AA000000000C', stationId: door, now: 7 })).toEqual(expect.any(Number))
    expect((await s.attendeeChips.ofEvent(eventId)).map((c) => [c.attendeeId, c.chipUid])).toEqual([[t1, '04AA000000000C']])
    // A freed chip may go to another guest.
    expect(await s.attendeeChips.bind({ eventId, attendeeId: t2, chipUid: '04AA000000000A', stationId: door, now: 8 })).toEqual(expect.any(Number))
  })

  it("logs a check-in's exits and re-entries in order, and counts a door's refusals per reason", async () => {
    const { eventId, door } = await seed()
    const s = store()
    const checkInId = (await s.checkIns.insert({ eventId, chipUid: '04AA000000000A', stationId: door, manual: false, now: 1 }))!
    await s.doorLog.addPass({ checkInId, stationId: door, direction: 'out', now: 5 })
    await s.doorLog.addPass({ checkInId, stationId: door, direction: 'in', now: 9 })
    expect((await s.doorLog.passes(checkInId)).map((p) => [p.direction, p.createdAt, p.stationId])).toEqual([['out', 5, door], ['in', 9, door]])
    expect(await s.doorLog.refusals(eventId)).toEqual({ not_allowed: 0, no_reentry: 0, not_on_list: 0, not_paid: 0 })
    await s.doorLog.addRefusal({ eventId, stationId: door, attendeeId: null, chipUid: '04AA000000000B', reason: 'not_on_list', now: 2 })
    await s.doorLog.addRefusal({ eventId, stationId: door, attendeeId: null, chipUid: '04AA000000000B', reason: 'not_on_list', now: 3 })
    await s.doorLog.addRefusal({ eventId, stationId: door, attendeeId: null, chipUid: null, reason: 'not_allowed', now: 3 })
    expect(await s.doorLog.refusals(eventId)).toEqual({ not_allowed: 1, no_reentry: 0, not_on_list: 2, not_paid: 0 })
  })

  it('gives the export every guest by name: chips bound now, the active check-in with its door and mint transaction, exits and re-entries', async () => {
    const { eventId, door } = await seed()
    const s = store()
    await s.attendees.upsertMany(eventId, [guest('T1', { name: 'Ada' }), guest('T2', { name: 'Bob' }), guest('T3', { name: 'Cy' })], 1)
    const [ada, bob, cy] = await Promise.all(['T1', 'T2', 'T3'].map(async (code) => (await s.attendees.findByCode(eventId, code))!.id))
    await s.attendeeChips.bind({ eventId, attendeeId: ada!, chipUid: '04AA000000000A', stationId: null, now: 2 })
    await s.attendeeChips.bind({ eventId, attendeeId: ada!, chipUid: '04AA000000000B', stationId: door, now: 3 })
    await s.attendeeChips.bind({ eventId, attendeeId: cy!, chipUid: '04AA000000000C', stationId: null, now: 2 })
    await s.attendeeChips.unbindAttendee(cy!, 4)
    const adaIn = (await s.checkIns.insert({ eventId, chipUid: '04AA000000000B', attendeeId: ada!, stationId: door, manual: false, now: 10 }))!
    const txId = await insertChainTx(s, { status: 'mined', reverted: false })
    await s.checkIns.setMint(adaIn, null, txId)
    await s.doorLog.addPass({ checkInId: adaIn, stationId: door, direction: 'out', now: 20 })
    await s.doorLog.addPass({ checkInId: adaIn, stationId: door, direction: 'in', now: 30 })
    // Bob's check-in was undone: the export shows him not checked in, and the undone check-in's passes not at all.
    const bobIn = (await s.checkIns.insert({ eventId, chipUid: null, attendeeId: bob!, stationId: door, manual: true, now: 11 }))!
    await s.doorLog.addPass({ checkInId: bobIn, stationId: door, direction: 'out', now: 12 })
    await s.checkIns.undo(bobIn, 13)
    const rows = await s.attendees.exportPage(eventId, EXPORT_START, 10)
    expect(rows.map((r) => [r.name, r.chips, r.checkInId, r.checkedInAt, r.checkInStation, r.manual, r.leftAt, r.txStatus, r.txReverted])).toEqual([
      ['Ada', '04AA000000000A 04AA000000000B', adaIn, 10, 'Door', 0, null, 'mined', 0],
      ['Bob', null, null, null, null, null, null, null, null],
      ['Cy', null, null, null, null, null, null, null, null],
    ])
    expect(rows[0]).toMatchObject({ ticketCode: 'T1', ticketType: 'GA', needsAttention: 0, txHash: expect.stringMatching(/^0x/) })
    // A page after Ada starts at Bob: the keyset cursor, as the streamed export reads the list.
    expect((await s.attendees.exportPage(eventId, { name: 'Ada', id: rows[0]!.id }, 1)).map((r) => r.name)).toEqual(['Bob'])
    expect(await s.attendees.exportPasses(eventId, [ada!, bob!])).toEqual([
      { checkInId: adaIn, direction: 'out', createdAt: 20, stationName: 'Door' },
      { checkInId: adaIn, direction: 'in', createdAt: 30, stationName: 'Door' },
    ])
  })
})
