import { afterEach, describe, expect, test } from 'vitest'
import { publicView } from '../../src/wire/feedProtocol.js'
import { type BackendGateway, createBackendGateway, queryRows } from '../helpers/gateway.js'
import { secondGateway, UIDS, WALLET } from '../kiosk-gateway/kioskFixture.js'
import { ADA_WALLET, addDoor, seedDoor, staffClient, tapper } from './doorFixture.js'

// Issue 19, at the door: taps of chips on the guest list at check-in and exit doors.

let gw: BackendGateway
afterEach(async () => gw?.close())

const count = async (sql: string) => (await queryRows<{ n: number }>(gw.store, sql))[0]!.n
const lastTap = async (stationId: number) => (await gw.store.stationEvents.after(stationId, 0)).filter((e) => e.kind === 'tap').at(-1)!

describe('an entry door of an event with a guest list', () => {
  test("shows the guest's first name and ticket type; the public screen never gets the email, surname, UID or ticket code; the mint goes to the guest's wallet", async () => {
    gw = await createBackendGateway()
    const s = await seedDoor(gw)
    const tap = tapper()
    const res = await tap(gw, s.door.token, UIDS[1]!)
    expect(res.status).toBe(200)
    expect(res.body.checkIn).toMatchObject({ state: 'accepted', attendee: { id: s.ada.id, displayName: 'Ada', ticketType: 'VIP', needsAttention: false } })
    // The station's answer is a screen's too: the public view of the guest.
    expect(JSON.stringify(res.body.checkIn)).not.toMatch(/Lovelace|ada@example|T-ADA/)
    const row = await lastTap(s.door.stationId)
    // Staff get everything.
    expect(row.data).toMatchObject({ state: 'accepted', uid: UIDS[1], attendee: { name: 'Ada Lovelace', email: 'ada@example.org', ticketCode: 'T-ADA', note: 'speaker' } })
    expect(row.data).toMatchObject({ checkIn: { attendee: { displayName: 'Ada', name: 'Ada Lovelace' }, leftAt: null } })
    const shown = JSON.stringify(publicView(row))
    expect(shown).toContain('"displayName":"Ada"')
    for (const secret of ['Lovelace', 'ada@example.org', 'T-ADA', UIDS[1]!, 'speaker']) expect(shown).not.toContain(secret)
    // The mint of a guest with a wallet goes to the guest's wallet (the chip has none).
    expect(await queryRows(gw.store, 'SELECT recipient, chip_uid AS chip FROM guestbook_mints')).toEqual([{ recipient: ADA_WALLET, chip: UIDS[1] }])
    expect(res.body.checkIn.checkIn.tx).toMatchObject({ status: 'queued' })
  })

  test("publicNames 'full' shows the whole name, still no email or code; needs attention checks in and flags the guest", async () => {
    gw = await createBackendGateway()
    const s = await seedDoor(gw)
    await gw.store.guestbook.setDoorSettings(s.eventId, { publicNames: 'full', now: gw.clock.now })
    const tap = tapper()
    const res = await tap(gw, s.door.token, UIDS[3]!)
    expect(res.body.checkIn).toMatchObject({ state: 'accepted', attendee: { displayName: 'Cleo Park', ticketType: 'GA', needsAttention: true } })
    expect(publicView(await lastTap(s.door.stationId))).toMatchObject({ data: { state: 'accepted', attendee: { displayName: 'Cleo Park', needsAttention: true } } })
    expect(JSON.stringify(publicView(await lastTap(s.door.stationId)))).not.toMatch(/T-CLEO|check ID/)
    expect(await count('SELECT count(*) AS n FROM check_ins WHERE undone_at IS NULL')).toBe(1)
  })

  test('a chip on nobody\'s ticket is refused not_on_list and counted; a rebound (lost) chip too', async () => {
    gw = await createBackendGateway()
    const s = await seedDoor(gw)
    const tap = tapper()
    const res = await tap(gw, s.door.token, UIDS[0]!)
    expect(res.body.checkIn).toEqual({ state: 'not_on_list', test: false, checkIn: null })
    expect((await lastTap(s.door.stationId)).data).toMatchObject({ state: 'not_on_list', reason: 'not_on_list', uid: UIDS[0] })
    expect(await count('SELECT count(*) AS n FROM check_ins')).toBe(0)
    // UIDS[0] has a wallet: nothing is minted for a refusal.
    expect(await count('SELECT count(*) AS n FROM guestbook_mints')).toBe(0)
    expect(await queryRows(gw.store, 'SELECT reason, chip_uid AS chip FROM door_refusals')).toEqual([{ reason: 'not_on_list', chip: UIDS[0] }])
    expect(WALLET).toBeTruthy()
  })

  test('a GA ticket at the VIP door is not_allowed: counted apart, no check-in, no mint; the VIP gets in', async () => {
    gw = await createBackendGateway()
    const s = await seedDoor(gw)
    const vip = await addDoor(gw, s, 'checkin', 'VIP door', ['VIP', 'Press'])
    const tap = tapper()
    const bob = await tap(gw, vip.token, UIDS[2]!)
    expect(bob.body.checkIn).toMatchObject({ state: 'not_allowed', checkIn: null, attendee: { displayName: 'Bob', ticketType: 'GA' } })
    expect((await lastTap(vip.stationId)).data).toMatchObject({ state: 'not_allowed', reason: 'not_allowed', detail: expect.stringContaining('GA is not admitted') })
    expect(await count('SELECT count(*) AS n FROM check_ins')).toBe(0)
    expect(await count('SELECT count(*) AS n FROM chain_txs WHERE kind = \'guestbook_mint\'')).toBe(0)
    expect(await count('SELECT count(*) AS n FROM claims')).toBe(0)
    expect(await queryRows(gw.store, 'SELECT reason, attendee_id AS attendee FROM door_refusals')).toEqual([{ reason: 'not_allowed', attendee: s.bob.id }])
    expect((await tap(gw, vip.token, UIDS[1]!)).body.checkIn).toMatchObject({ state: 'accepted', attendee: { ticketType: 'VIP' } })
    const staff = await staffClient(gw, vip.kiosk)
    expect((await staff.get('/kiosk/staff/state')).body.counts).toMatchObject({ event: 1, expected: 3, inside: 1, refused: 1 })
  })

  test('an exit then a re-entry (allowed), then no re-entry when the event allows none; one exit of two racing exit doors', async () => {
    gw = await createBackendGateway()
    const s = await seedDoor(gw)
    const exit = await addDoor(gw, s, 'exit', 'Exit')
    const exit2 = await addDoor(gw, s, 'exit', 'Exit 2')
    const tap = tapper()
    expect((await tap(gw, exit.token, UIDS[2]!)).body.checkIn).toMatchObject({ state: 'not_inside', checkIn: null })
    const first = await tap(gw, s.door.token, UIDS[2]!)
    expect(first.body.checkIn.state).toBe('accepted')
    gw.clock.now += 60_000
    // Bob's second chip (two taps of one chip at once would race for its counter, not for the door).
    await gw.store.attendeeChips.bind({ eventId: s.eventId, attendeeId: s.bob.id, chipUid: UIDS[0]!, stationId: null, now: gw.clock.now })
    const [a, b] = await Promise.all([tap(gw, exit.token, UIDS[2]!), tap(gw, exit2.token, UIDS[0]!)])
    expect([a.body.checkIn.state, b.body.checkIn.state].sort()).toEqual(['exit', 'not_inside'])
    const out = a.body.checkIn.state === 'exit' ? a : b
    expect(out.body.checkIn).toMatchObject({ checkIn: { id: first.body.checkIn.checkIn.id, leftAt: new Date(gw.clock.now).toISOString() }, attendee: { displayName: 'Bob' } })
    const staff = await staffClient(gw, s.kiosk)
    expect((await staff.get('/kiosk/staff/state')).body.counts).toMatchObject({ event: 1, inside: 0 })
    gw.clock.now += 60_000
    const back = await tap(gw, s.side.token, UIDS[2]!)
    expect(back.body.checkIn).toMatchObject({ state: 'reentry', checkIn: { id: first.body.checkIn.checkIn.id, leftAt: null } })
    // Inside: "already", with the first check-in's time and door.
    expect((await tap(gw, s.door.token, UIDS[2]!)).body.checkIn).toMatchObject({ state: 'already', checkIn: { stationName: 'Door A', at: first.body.checkIn.checkIn.at } })
    expect(await queryRows(gw.store, 'SELECT direction, station_id AS station FROM door_passes ORDER BY id')).toEqual([
      { direction: 'out', station: (a.body.checkIn.state === 'exit' ? exit : exit2).stationId },
      { direction: 'in', station: s.side.stationId },
    ])
    // One check-in, one mint attempt at most: a re-entry is no second arrival.
    expect(await count('SELECT count(*) AS n FROM check_ins')).toBe(1)

    await gw.store.guestbook.setDoorSettings(s.eventId, { reentry: false, now: gw.clock.now })
    expect((await tap(gw, exit.token, UIDS[2]!)).body.checkIn.state).toBe('exit')
    const refused = await tap(gw, s.door.token, UIDS[2]!)
    expect(refused.body.checkIn).toMatchObject({ state: 'no_reentry', checkIn: { leftAt: expect.any(String) } })
    expect(await queryRows(gw.store, 'SELECT reason FROM door_refusals')).toEqual([{ reason: 'no_reentry' }])
    expect((await staff.get('/kiosk/staff/state')).body.counts).toMatchObject({ event: 1, inside: 0, refused: 1 })
  })
})

describe('several doors, several gateways', () => {
  test('a guest with two chips tapped at two doors on two gateways at once is checked in once', async () => {
    gw = await createBackendGateway()
    const s = await seedDoor(gw)
    // Ada's second chip, from the list too.
    await gw.store.attendeeChips.bind({ eventId: s.eventId, attendeeId: s.ada.id, chipUid: UIDS[0]!, stationId: null, now: gw.clock.now })
    const other = await secondGateway(gw)
    try {
      const tap = tapper()
      const [a, b] = await Promise.all([tap(gw, s.door.token, UIDS[1]!), tap(other, s.side.token, UIDS[0]!)])
      expect([a.body.checkIn.state, b.body.checkIn.state].sort()).toEqual(['accepted', 'already'])
      expect(a.body.checkIn.checkIn.id).toBe(b.body.checkIn.checkIn.id)
      expect(await count('SELECT count(*) AS n FROM check_ins')).toBe(1)
      expect(await count('SELECT count(*) AS n FROM guestbook_mints')).toBe(1)
    } finally {
      await other.close()
    }
  })

  test("the counts are the event's: two stations' taps, one station's counts include both", async () => {
    gw = await createBackendGateway()
    const s = await seedDoor(gw)
    const tap = tapper()
    await tap(gw, s.door.token, UIDS[1]!)
    await tap(gw, s.side.token, UIDS[2]!)
    await tap(gw, s.side.token, UIDS[0]!) // not on the list
    const staff = await staffClient(gw, s.kiosk)
    expect((await staff.get('/kiosk/staff/state')).body.counts).toEqual({ event: 2, station: 1, last5Minutes: 1, claimed: 0, expected: 3, inside: 2, refused: 1 })
    const stats = (await staff.get('/kiosk/staff/stats')).body.stats
    expect(stats).toMatchObject({ eventId: s.eventId, expected: 3, checkedIn: 2, percent: 66.7, inside: 2, refused: { notAllowed: 0, noReentry: 0, notOnList: 1 } })
    expect(stats.perType).toEqual([{ ticketType: 'GA', expected: 2, checkedIn: 1 }, { ticketType: 'VIP', expected: 1, checkedIn: 1 }])
  })
})
