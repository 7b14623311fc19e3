import { afterEach, describe, expect, test } from 'vitest'
import { publicView } from '../../src/wire/feedProtocol.js'
import { type BackendGateway, createBackendGateway, queryRows } from '../helpers/gateway.js'
import { secondGateway, UIDS } from '../kiosk-gateway/kioskFixture.js'
import { addDoor, seedDoor, staffClient, tapper } from './doorFixture.js'

// Issue 19: wristbands bound at a bind door, and the staff view's door API.

let gw: BackendGateway
afterEach(async () => gw?.close())

const lastTap = async (stationId: number) => (await gw.store.stationEvents.after(stationId, 0)).filter((e) => e.kind === 'tap').at(-1)!
const bindings = () => queryRows(gw.store, 'SELECT attendee_id AS attendee, chip_uid AS chip, station_id AS station FROM attendee_chips WHERE unbound_at IS NULL ORDER BY id')

describe('a bind door', () => {
  test('staff scan a ticket code; the next tap binds that wristband and checks the guest in; nothing armed waits; armed expires after 2 minutes', async () => {
    gw = await createBackendGateway()
    const s = await seedDoor(gw)
    const bind = await addDoor(gw, s, 'bind', 'Bind desk')
    const staff = await staffClient(gw, bind.kiosk)
    const tap = tapper()
    // Dan has no chip yet; UIDS[0] is on nobody's ticket.
    await gw.store.attendees.upsertMany(s.eventId, [{ name: 'Dan Dare', email: 'dan@example.org', ticketType: 'GA', ticketCode: 'T-DAN', wallet: null, note: null, needsAttention: null }], gw.clock.now)
    const dan = (await gw.store.attendees.findByCode(s.eventId, 'T-DAN'))!
    expect((await tap(gw, bind.token, UIDS[0]!)).body.checkIn).toMatchObject({ state: 'bind_waiting', checkIn: null })

    const armed = await staff.post('/kiosk/staff/bind', { ticketCode: 'T-DAN' })
    expect(armed).toMatchObject({
      status: 200,
      body: { armed: { rebind: false, expiresAt: new Date(gw.clock.now + 120_000).toISOString(), attendee: { id: dan.id, name: 'Dan Dare', ticketCode: 'T-DAN', chips: [], checkIn: null, inside: false } } },
    })
    gw.clock.now += 120_000
    expect((await tap(gw, bind.token, UIDS[0]!)).body.checkIn.state).toBe('bind_waiting')
    const again = await staffClient(gw, bind.kiosk)
    await again.post('/kiosk/staff/bind', { ticketCode: 'T-DAN' })
    const bound = await tap(gw, bind.token, UIDS[0]!)
    expect(bound.body.checkIn).toMatchObject({ state: 'bound', checkIn: { stationName: 'Bind desk', attendee: { displayName: 'Dan' } }, attendee: { displayName: 'Dan', ticketType: 'GA' } })
    expect(await bindings()).toContainEqual({ attendee: dan.id, chip: UIDS[0], station: bind.stationId })
    // The arming is spent: the next tap waits again; the new wristband opens the check-in door ("already" inside).
    expect((await tap(gw, bind.token, UIDS[0]!)).body.checkIn.state).toBe('bind_waiting')
    expect((await tap(gw, s.door.token, UIDS[0]!)).body.checkIn).toMatchObject({ state: 'already', checkIn: { id: bound.body.checkIn.checkIn.id } })
    expect(await queryRows(gw.store, 'SELECT attendee_id AS attendee FROM check_ins')).toEqual([{ attendee: dan.id }])
    // Staff see it bound; the staff feed names the action.
    const found = await again.get('/kiosk/staff/attendees?q=dare')
    expect(found.body.attendees).toEqual([expect.objectContaining({ id: dan.id, chips: [UIDS[0]], inside: true, checkIn: expect.objectContaining({ id: bound.body.checkIn.checkIn.id }) })])
    const actions = (await gw.store.stationEvents.after(bind.stationId, 0)).flatMap((e) => (e.kind === 'staff' ? [e.data.action] : []))
    expect(actions.filter((a) => a === 'bind')).toHaveLength(2)
  })

  test("a wristband bound to another guest is bind_taken: that guest's name to staff only; the door stays armed for the right one", async () => {
    gw = await createBackendGateway()
    const s = await seedDoor(gw)
    const bind = await addDoor(gw, s, 'bind', 'Bind desk')
    const staff = await staffClient(gw, bind.kiosk)
    const tap = tapper()
    await gw.store.attendees.upsertMany(s.eventId, [{ name: 'Dan Dare', email: null, ticketType: 'GA', ticketCode: 'T-DAN', wallet: null, note: null, needsAttention: null }], gw.clock.now)
    await staff.post('/kiosk/staff/bind', { ticketCode: 'T-DAN' })
    const taken = await tap(gw, bind.token, UIDS[1]!) // Ada's
    expect(taken.body.checkIn).toEqual({ state: 'bind_taken', test: false, checkIn: null })
    const row = await lastTap(bind.stationId)
    expect(row.data).toMatchObject({ state: 'bind_taken', boundTo: 'Ada Lovelace', uid: UIDS[1] })
    expect(JSON.stringify(publicView(row))).not.toMatch(/Ada|Lovelace|T-ADA/)
    expect(await queryRows(gw.store, 'SELECT count(*) AS n FROM check_ins')).toEqual([{ n: 0 }])
    expect((await tap(gw, bind.token, UIDS[0]!)).body.checkIn.state).toBe('bound')
  })

  test('rebind (lost badge): without rebind 409 already_bound; with it the old chip stops working at once', async () => {
    gw = await createBackendGateway()
    const s = await seedDoor(gw)
    const bind = await addDoor(gw, s, 'bind', 'Bind desk')
    const staff = await staffClient(gw, bind.kiosk)
    const tap = tapper()
    expect(await staff.post('/kiosk/staff/bind', { attendeeId: s.bob.id })).toMatchObject({ status: 409, body: { error: 'already_bound' } })
    expect(await staff.post('/kiosk/staff/bind', { ticketCode: 'NOPE' })).toMatchObject({ status: 404, body: { error: 'attendee_not_found' } })
    expect(await staff.post('/kiosk/staff/bind', { attendeeId: s.bob.id, rebind: true })).toMatchObject({ status: 200, body: { armed: { rebind: true, attendee: { chips: [UIDS[2]] } } } })
    const bound = await tap(gw, bind.token, UIDS[0]!)
    expect(bound.body.checkIn).toMatchObject({ state: 'bound', attendee: { displayName: 'Bob' } })
    expect((await bindings()).filter((b) => (b as { attendee: number }).attendee === s.bob.id)).toEqual([{ attendee: s.bob.id, chip: UIDS[0], station: bind.stationId }])
    // The lost one is on nobody's ticket now.
    expect((await tap(gw, s.door.token, UIDS[2]!)).body.checkIn.state).toBe('not_on_list')
    expect((await tap(gw, s.door.token, UIDS[0]!)).body.checkIn.state).toBe('already')
    const actions = (await gw.store.stationEvents.after(bind.stationId, 0)).flatMap((e) => (e.kind === 'staff' ? [e.data.action] : []))
    expect(actions).toContain('rebind')
    // A check-in door cannot be armed; cancel disarms.
    const door = await staffClient(gw, s.kiosk)
    expect(await door.post('/kiosk/staff/bind', { ticketCode: 'T-ADA' })).toMatchObject({ status: 409, body: { error: 'station_not_bind' } })
    await staff.post('/kiosk/staff/bind', { attendeeId: s.ada.id, rebind: true })
    expect(await staff.post('/kiosk/staff/bind/cancel')).toMatchObject({ status: 200, body: { success: true } })
    expect((await tap(gw, bind.token, UIDS[3]!)).body.checkIn.state).toBe('bind_waiting')
  })

  test('the same ticket bound at two bind doors on two gateways at once: one wristband bound, the other refused', async () => {
    gw = await createBackendGateway()
    const s = await seedDoor(gw)
    const one = await addDoor(gw, s, 'bind', 'Bind 1')
    const two = await addDoor(gw, s, 'bind', 'Bind 2')
    await gw.store.attendees.upsertMany(s.eventId, [{ name: 'Dan Dare', email: null, ticketType: 'GA', ticketCode: 'T-DAN', wallet: null, note: null, needsAttention: null }], gw.clock.now)
    // Two fresh chips: unbind the imported ones of Ada and Cleo so UIDS[1] and UIDS[3] are free.
    await gw.store.attendeeChips.unbindAttendee(s.ada.id, gw.clock.now)
    await gw.store.attendeeChips.unbindAttendee(s.cleo.id, gw.clock.now)
    for (const door of [one, two]) await (await staffClient(gw, door.kiosk)).post('/kiosk/staff/bind', { ticketCode: 'T-DAN' })
    const other = await secondGateway(gw)
    try {
      const tap = tapper()
      const [a, b] = await Promise.all([tap(gw, one.token, UIDS[1]!), tap(other, two.token, UIDS[3]!)])
      expect([a.body.checkIn.state, b.body.checkIn.state].sort()).toEqual(['bind_taken', 'bound'])
      const dan = (await gw.store.attendees.findByCode(s.eventId, 'T-DAN'))!
      expect((await gw.store.attendeeChips.ofAttendee(dan.id)).map((c) => c.chipUid)).toEqual([a.body.checkIn.state === 'bound' ? UIDS[1] : UIDS[3]])
      expect(await queryRows(gw.store, 'SELECT count(*) AS n FROM check_ins')).toEqual([{ n: 1 }])
      const loser = a.body.checkIn.state === 'bound' ? two : one
      expect((await lastTap(loser.stationId)).data).toMatchObject({ state: 'bind_taken', boundTo: 'Dan Dare' })
    } finally {
      await other.close()
    }
  })
})

describe("the staff view's door API", () => {
  test('search needs 2 characters and lists 20 at most, with chips and check-in; a manual check-in by the door rules; the stats', async () => {
    gw = await createBackendGateway()
    const s = await seedDoor(gw)
    const staff = await staffClient(gw, s.kiosk)
    expect(await staff.get('/kiosk/staff/attendees?q=a')).toMatchObject({ status: 400, body: { error: 'query_too_short' } })
    expect(await staff.get('/kiosk/staff/attendees?q=%20%20')).toMatchObject({ status: 400, body: { error: 'query_too_short' } })
    // Issue 24 point 8: counted after accents are folded off. Two combining accents fold to nothing,
    // which matched every guest; an accented letter and a blank are one character.
    for (const q of ['\u0301\u0301', 'a\u0301', '\u0301 \u0301', ' e\u0308 ', '\u0301'])
      expect(await staff.get(`/kiosk/staff/attendees?q=${encodeURIComponent(q)}`), JSON.stringify(q)).toMatchObject({
        status: 400,
        body: { error: 'query_too_short', message: expect.stringContaining('2 characters'), errors: { q: expect.any(String) } },
      })
    expect(await staff.get('/kiosk/staff/attendees')).toMatchObject({ status: 400, body: { error: 'validation_failed' } })
    // Two letters with their accents are a term: Zoë-style names are still found by their accented spelling.
    expect((await staff.get(`/kiosk/staff/attendees?q=${encodeURIComponent('Ádá')}`)).body.attendees.map((a: { name: string }) => a.name)).toEqual(['Ada Lovelace'])
    // The document says what the rule is.
    const doc = (await gw.app.inject({ url: '/openapi.json' })).json() as { paths: Record<string, { get: { parameters: Array<{ name: string; schema: { minLength?: number; description?: string } }> } }> }
    const q = doc.paths['/kiosk/staff/attendees']!.get.parameters.find((p) => p.name === 'q')!
    expect(q.schema.minLength).toBe(2)
    const many = Array.from({ length: 30 }, (_, i) => ({ name: `Zed ${String(i).padStart(2, '0')}`, email: null, ticketType: 'GA', ticketCode: `Z-${i}`, wallet: null, note: null, needsAttention: null }))
    await gw.store.attendees.upsertMany(s.eventId, many, gw.clock.now)
    expect((await staff.get('/kiosk/staff/attendees?q=zed')).body.attendees).toHaveLength(20)
    const ada = await staff.get('/kiosk/staff/attendees?q=ADA@example')
    expect(ada.body.attendees).toEqual([
      { id: s.ada.id, name: 'Ada Lovelace', email: 'ada@example.org', ticketType: 'VIP', ticketCode: 'T-ADA', note: 'speaker', needsAttention: false, paid: true, chips: [UIDS[1]], checkIn: null, inside: false },
    ])
    const manual = await staff.post('/kiosk/staff/attendees/check-in', { attendeeId: s.ada.id })
    expect(manual).toMatchObject({ status: 200, body: { success: true, state: 'accepted', checkIn: { manual: true, attendee: { name: 'Ada Lovelace' }, tx: { status: 'queued' } } } })
    expect((await staff.post('/kiosk/staff/attendees/check-in', { attendeeId: s.ada.id })).body).toMatchObject({ state: 'already', checkIn: { id: manual.body.checkIn.id } })
    expect(await staff.post('/kiosk/staff/attendees/check-in', { attendeeId: 999_999 })).toMatchObject({ status: 404, body: { error: 'attendee_not_found' } })
    expect(await queryRows(gw.store, 'SELECT chip_uid AS chip, attendee_id AS attendee FROM check_ins')).toEqual([{ chip: null, attendee: s.ada.id }])
    // Ada's chip finds her checked in.
    expect((await tapper()(gw, s.side.token, UIDS[1]!)).body.checkIn.state).toBe('already')

    gw.clock.now += 11 * 60_000
    const later = await staffClient(gw, s.kiosk) // the idle session ended
    await later.post('/kiosk/staff/attendees/check-in', { attendeeId: s.bob.id })
    const stats = await later.get('/kiosk/staff/stats')
    const first = Date.parse(manual.body.checkIn.at)
    const bucket = (t: number) => new Date(t - (t % 300_000)).toISOString()
    expect(stats.body.stats).toMatchObject({ expected: 33, checkedIn: 2, percent: 6.1, inside: 2, since: manual.body.checkIn.at })
    const arrivals = stats.body.stats.arrivals as Array<{ at: string; count: number }>
    expect(arrivals[0]).toEqual({ at: bucket(first), count: 1 })
    expect(arrivals.at(-1)).toEqual({ at: bucket(gw.clock.now), count: 1 })
    expect(arrivals.reduce((n, a) => n + a.count, 0)).toBe(2)
    expect(arrivals.length).toBeGreaterThanOrEqual(3)
  })

  test("staff download the event's export (CSV or JSON): what happened at the door", async () => {
    gw = await createBackendGateway()
    const s = await seedDoor(gw)
    const staff = await staffClient(gw, s.kiosk)
    await staff.post('/kiosk/staff/attendees/check-in', { attendeeId: s.ada.id })
    const csv = await gw.app.inject({ method: 'GET', url: '/kiosk/staff/attendees/export', headers: { 'x-kiosk-token': s.kiosk, 'x-staff-session': (await staffSession()) } })
    expect(csv.statusCode).toBe(200)
    expect(csv.headers['content-type']).toMatch(/^text\/csv/)
    expect(csv.headers['content-disposition']).toMatch(/^attachment; filename=/)
    expect(csv.body).toContain('Ada Lovelace')
    const json = await staff.get('/kiosk/staff/attendees/export?format=json')
    expect(json.status).toBe(200)
    const ada = json.body.attendees.find((a: { ticketCode: string }) => a.ticketCode === 'T-ADA')
    expect(ada).toMatchObject({ name: 'Ada Lovelace' })
    expect(JSON.stringify(ada)).toContain(new Date(gw.clock.now).toISOString())
    // Without a staff session: nothing.
    expect((await gw.app.inject({ method: 'GET', url: '/kiosk/staff/attendees/export', headers: { 'x-kiosk-token': s.kiosk } })).statusCode).toBe(401)

    async function staffSession() {
      const res = await gw.app.inject({ method: 'POST', url: '/kiosk/staff/session', headers: { 'x-kiosk-token': s.kiosk }, payload: { pin: '482913' } })
      return JSON.parse(res.body).session as string
    }
  })
})
