import fs from 'node:fs'
import { afterEach, describe, expect, test } from 'vitest'
import { setEventDoorSettings } from '../../src/door/eventDoorSettings.js'
import { publicView } from '../../src/wire/feedProtocol.js'
import { type BackendGateway, call, createBackendGateway, queryRows, seedTeam } from '../helpers/gateway.js'
import { UIDS } from '../kiosk-gateway/kioskFixture.js'
import { addDoor, seedDoor, staffClient, tapper } from './doorFixture.js'

// Issue 25 point 3: a guest whose order is not paid is on the list, and the door refuses them "not paid"
// (as pretix's and Hi.Events' own doors do) unless the event admits unpaid guests.

let gw: BackendGateway
afterEach(async () => gw?.close())

const fixture = (name: string) => fs.readFileSync(new URL(`../fixtures/attendees/${name}`, import.meta.url), 'utf8')
const count = async (sql: string) => (await queryRows<{ n: number }>(gw.store, sql))[0]!.n
const lastTap = async (stationId: number) => (await gw.store.stationEvents.after(stationId, 0)).filter((e) => e.kind === 'tap').at(-1)!

/** Hi.Events' attendee export (the fixture's header) with one guest per status, UIDS[0] on the unpaid one. */
const hiEvents = (danaStatus: string) =>
  [
    'ID,First Name,Last Name,Email,Status,Check Ins,Product ID,Product Name,Event ID,Public ID,Short ID,Created Date,Last Updated Date,Chip',
    `201,Dana,Dee,dana@example.org,${danaStatus},,12,General Admission,3,A-DANA001,aDana,2025-05-02 14:11:09,2025-05-02 14:11:09,${UIDS[0]}`,
    '202,Eve,Early,eve@example.org,ACTIVE,,12,General Admission,3,A-EVE0002,aEve,2025-05-02 14:11:09,2025-05-02 14:11:09,',
  ].join('\n')

async function seedUnpaid() {
  const s = await seedDoor(gw)
  const importCsv = (body: string) =>
    call(gw, { method: 'POST', url: `/events/${s.eventId}/attendees/import`, headers: { 'x-service-api-key': s.apiKey, 'content-type': 'text/csv' }, payload: body })
  const imported = await importCsv(hiEvents('AWAITING_PAYMENT'))
  expect(imported).toMatchObject({ status: 200, body: { format: 'hievents', imported: 2, inserted: 2, chipsBound: 1 } })
  const dana = (await gw.store.attendees.findByCode(s.eventId, 'A-DANA001'))!
  return { ...s, dana, importCsv }
}

describe('an unpaid guest at an entry door', () => {
  test('is refused not_paid: counted, no check-in, no mint; the kiosk is told (amber), staff see why; paid on re-import, they get in', async () => {
    gw = await createBackendGateway()
    const s = await seedUnpaid()
    expect(s.dana.paid).toBe(0)
    const tap = tapper()
    const refused = await tap(gw, s.door.token, UIDS[0]!)
    expect(refused.status).toBe(200)
    expect(refused.body.checkIn).toMatchObject({ state: 'not_paid', checkIn: null, attendee: { displayName: 'Dana', ticketType: 'General Admission' } })
    const row = await lastTap(s.door.stationId)
    expect(row.data).toMatchObject({ state: 'not_paid', reason: 'not_paid', detail: "Dana Dee's order (ticket A-DANA001) is not paid", attendee: { name: 'Dana Dee' } })
    // The public screen gets the state and the first name, never why in detail.
    expect(JSON.stringify(publicView(row))).not.toMatch(/A-DANA001|Dee|dana@/)
    expect(await count('SELECT count(*) AS n FROM check_ins')).toBe(0)
    // UIDS[0] has a wallet of its own: a check-in would have minted to it.
    expect(await count('SELECT count(*) AS n FROM guestbook_mints')).toBe(0)
    expect(await queryRows(gw.store, 'SELECT reason, attendee_id AS attendee, chip_uid AS chip FROM door_refusals')).toEqual([{ reason: 'not_paid', attendee: s.dana.id, chip: UIDS[0] }])

    const staff = await staffClient(gw, s.kiosk)
    expect((await staff.get('/kiosk/staff/attendees?q=dana')).body.attendees).toEqual([expect.objectContaining({ id: s.dana.id, paid: false, checkIn: null, inside: false })])
    expect((await staff.get('/kiosk/staff/attendees?q=eve')).body.attendees).toEqual([expect.objectContaining({ paid: true })])
    expect((await staff.get('/kiosk/staff/stats')).body.stats.refused).toEqual({ notAllowed: 0, noReentry: 0, notOnList: 0, notPaid: 1 })
    // Staff checking them in by hand meet the same rule.
    expect((await staff.post('/kiosk/staff/attendees/check-in', { attendeeId: s.dana.id })).body).toMatchObject({ success: true, state: 'not_paid', checkIn: null })
    expect(await count('SELECT count(*) AS n FROM check_ins')).toBe(0)
    // The API's list says it too.
    const listed = await call(gw, { method: 'GET', url: `/events/${s.eventId}/attendees?q=A-DANA`, headers: { 'x-service-api-key': s.apiKey } })
    expect(listed.body.attendees).toEqual([expect.objectContaining({ ticketCode: 'A-DANA001', paid: false })])

    // The order is paid now: the same export again, Dana ACTIVE, updates her in place and the door lets her in.
    expect((await s.importCsv(hiEvents('ACTIVE'))).body).toMatchObject({ imported: 2, inserted: 0, updated: 2, chipsBound: 0 })
    expect((await gw.store.attendees.get(s.dana.id))!.paid).toBe(1)
    expect((await tap(gw, s.door.token, UIDS[0]!)).body.checkIn).toMatchObject({ state: 'accepted', attendee: { displayName: 'Dana' } })
    expect(await count('SELECT count(*) AS n FROM guestbook_mints')).toBe(1)
  })

  test('the event admitting unpaid guests (PATCH /events/:id/door) lets them in as before; back to the default, they are refused again', async () => {
    gw = await createBackendGateway()
    const s = await seedUnpaid()
    const tap = tapper()
    const door = (payload: object, key = s.apiKey, eventId = s.eventId) =>
      call(gw, { method: 'PATCH', url: `/events/${eventId}/door`, headers: { 'x-service-api-key': key }, payload })
    expect(await door({ admitUnpaid: true })).toMatchObject({
      status: 200,
      body: { success: true, eventId: s.eventId, name: 'Opening night', admitUnpaid: true, reentry: true, publicNames: 'first' },
    })
    // Bad input changes nothing: an empty body, a word for a flag, an unknown setting, another event of nobody's.
    expect(await door({})).toMatchObject({ status: 400, body: { error: 'nothing_to_set' } })
    expect(await door({ admitUnpaid: 'yes' })).toMatchObject({ status: 400, body: { error: 'validation_failed' } })
    expect(await door({ admitUnpaid: false, vip: true })).toMatchObject({ status: 400 })
    expect(await door({ admitUnpaid: false }, s.apiKey, 999_999)).toMatchObject({ status: 404, body: { error: 'event_not_found' } })
    const other = await seedTeam(gw, { name: 'Other team' })
    expect(await door({ admitUnpaid: false }, other.apiKey)).toMatchObject({ status: 404, body: { error: 'event_not_found' } })
    expect((await gw.store.guestbook.getEvent(s.eventId))!.admitUnpaid).toBe(1)
    expect((await tap(gw, s.door.token, UIDS[0]!)).body.checkIn).toMatchObject({ state: 'accepted', attendee: { displayName: 'Dana' } })
    expect(await count('SELECT count(*) AS n FROM door_refusals')).toBe(0)
    // Inside now; an exit and the strict rule back: no way back in unpaid.
    const exit = await addDoor(gw, s, 'exit', 'Exit')
    expect((await tap(gw, exit.token, UIDS[0]!)).body.checkIn.state).toBe('exit')
    expect((await door({ admitUnpaid: false })).body).toMatchObject({ admitUnpaid: false })
    expect((await tap(gw, s.door.token, UIDS[0]!)).body.checkIn).toMatchObject({ state: 'not_paid' })
    expect(() => setEventDoorSettings(gw.store, { eventId: s.eventId, now: gw.clock.now })).toThrow(expect.objectContaining({ code: 'nothing_to_set' }))
  })

  test('a bind door binds an unpaid guest a wristband (armed by their code), and its tap says not_paid: bound, not checked in', async () => {
    gw = await createBackendGateway()
    const s = await seedDoor(gw)
    const bind = await addDoor(gw, s, 'bind', 'Bind desk')
    const staff = await staffClient(gw, bind.kiosk)
    await gw.store.attendees.upsertMany(s.eventId, [{ name: 'Fay Fee', email: null, ticketType: 'GA', ticketCode: 'T-FAY', wallet: null, note: null, needsAttention: null, paid: false }], gw.clock.now)
    const fay = (await gw.store.attendees.findByCode(s.eventId, 'T-FAY'))!
    expect(await staff.post('/kiosk/staff/bind', { ticketCode: 'T-FAY' })).toMatchObject({ status: 200, body: { armed: { attendee: { id: fay.id, paid: false } } } })
    const tapped = await tapper()(gw, bind.token, UIDS[0]!)
    expect(tapped.body.checkIn).toMatchObject({ state: 'not_paid', checkIn: null })
    expect(await queryRows(gw.store, 'SELECT attendee_id AS attendee, chip_uid AS chip FROM attendee_chips WHERE unbound_at IS NULL AND attendee_id = ' + fay.id)).toEqual([{ attendee: fay.id, chip: UIDS[0] }])
    expect(await count('SELECT count(*) AS n FROM check_ins')).toBe(0)
  })
})

describe('what each tool says is unpaid, through the API', () => {
  test("pretix's order positions: Status pending (any of its languages) is not paid, paid is; the export carries it", async () => {
    gw = await createBackendGateway()
    const s = await seedDoor(gw)
    // The fixture's two paid positions, the first made pending, the second's status in German ("bezahlt").
    const [header, first, second] = fixture('pretix-positions.csv').split(/\r?\n/)
    const csv = [header, first!.replace(',Paid,', ',pending,'), second!.replace(',Paid,', ',bezahlt,'), ''].join('\n')
    const res = await call(gw, { method: 'POST', url: `/events/${s.eventId}/attendees/import`, headers: { 'x-service-api-key': s.apiKey, 'content-type': 'text/csv' }, payload: csv })
    expect(res.body).toMatchObject({ format: 'pretix-positions', imported: 2 })
    const exported = await call(gw, { method: 'GET', url: `/events/${s.eventId}/attendees/export?format=json`, headers: { 'x-service-api-key': s.apiKey } })
    const byCode = Object.fromEntries((exported.body.attendees as { ticketCode: string; paid: boolean }[]).map((a) => [a.ticketCode, a.paid]))
    expect(byCode).toMatchObject({ u8m2kq4x7ts9hbnw3cyv6ea5rdpf2jgz: false, p3rw9nq2c7xk5hd8mzt4yvb6aegs2fju: true, 'T-ADA': true })
    const csvExport = await gw.app.inject({ method: 'GET', url: `/events/${s.eventId}/attendees/export?format=csv`, headers: { 'x-service-api-key': s.apiKey } })
    expect(csvExport.payload).toMatch(/\r\nu8m2kq4x7ts9hbnw3cyv6ea5rdpf2jgz,Zoë Müller,[^\r]*,no,no,/)
  })

  test("pretix's check-in list: the Paid column's No is not paid, Yes is; a list without the column is all paid", async () => {
    gw = await createBackendGateway()
    const s = await seedDoor(gw)
    const lines = fixture('pretix-checkin.csv').trim().split(/\r?\n/)
    const csv = [`${lines[0]},"Paid"`, `${lines[1]},"No"`, `${lines[2]},"Yes"`, `${lines[3]},"Nein"`].join('\n')
    const importCsv = (body: string) =>
      call(gw, { method: 'POST', url: `/events/${s.eventId}/attendees/import`, headers: { 'x-service-api-key': s.apiKey, 'content-type': 'text/csv' }, payload: body })
    const imported = await importCsv(csv)
    expect(imported.body, JSON.stringify(imported.body)).toMatchObject({ format: 'pretix-checkin', imported: 3 })
    const paid = async (code: string) => (await gw.store.attendees.findByCode(s.eventId, code))!.paid
    expect([await paid('u8m2kq4x7ts9hbnw3cyv6ea5rdpf2jgz'), await paid('p3rw9nq2c7xk5hd8mzt4yvb6aegs2fju'), await paid('x6kd2mp8qv4hn9wc3tr7bza5eyfsg2ju')]).toEqual([0, 1, 0])
    // The list without its Paid column (a list of paid orders only): everyone admissible again.
    expect((await importCsv(fixture('pretix-checkin.csv'))).body).toMatchObject({ updated: 3 })
    expect([await paid('u8m2kq4x7ts9hbnw3cyv6ea5rdpf2jgz'), await paid('x6kd2mp8qv4hn9wc3tr7bza5eyfsg2ju')]).toEqual([1, 1])
  })

  test('a --map paid= column that is not yes or no is an error naming the row; nothing is imported', async () => {
    gw = await createBackendGateway()
    const s = await seedDoor(gw)
    const res = await call(gw, {
      method: 'POST',
      url: `/events/${s.eventId}/attendees/import?map=${encodeURIComponent('name=Guest,ticket=Code,paid=Paid')}`,
      headers: { 'x-service-api-key': s.apiKey, 'content-type': 'text/csv' },
      payload: 'Guest,Code,Paid\nGil Gee,G-1,no\nHal Hue,G-2,maybe\n',
    })
    expect(res).toMatchObject({ status: 400, body: { error: 'csv_rows_invalid', errors: { 'line 3, Paid': '"maybe" is not yes or no (is the order paid?)' } } })
    expect(await gw.store.attendees.findByCode(s.eventId, 'G-1')).toBeUndefined()
  })
})
