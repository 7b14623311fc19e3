import fs from 'node:fs'
import path from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { type BackendGateway, call, createBackendGateway } from '../helpers/gateway.js'
import { addDoor, seedDoor, staffClient } from '../door/doorFixture.js'
import { pretixCheckin } from './translatedExports.js'

// Issue 25 point 2 at the door: a Tito ticket the buyer has not assigned yet (Ticket Full Name, First, Last
// Name and Email empty, as Tito's tickets export leaves them; the rest from test/fixtures/attendees/tito.csv)
// and a pretix check-in list's ticket whose invoice name is empty come in nameless and flagged; staff see
// them as "<ticket type> · <code>", the public screen by their ticket type only (a code gets someone in).

const fixtures = path.join(import.meta.dirname, '../fixtures/attendees')
let gw: BackendGateway
afterEach(() => gw.close())

const UNASSIGNED = '4,2025-04-05 09:00:00 +0100,Standard Ticket,,,,,,,DevConf 2025,,150.0,GIAO-3,,https://ti.to/tickets/ti_Un4ss1gn3dXx,https://ti.to/devconf/2025/order/or_8hGf2KsQ,GIAO,Björn Åkesson,bjorn@example.se,,,,203.0.113.5,2025-04-01 10:12:03 +0100,2025-04-01 10:12:40 +0100,ch_3Ab12Cd,'

test('a Tito ticket not assigned yet: imported flagged, found by its code, staff see type and code, the public screen the type', async () => {
  gw = await createBackendGateway()
  const s = await seedDoor(gw)
  const tito = `${fs.readFileSync(path.join(fixtures, 'tito.csv'), 'utf8').trimEnd()}\n${UNASSIGNED}\n`
  const res = await call(gw, { method: 'POST', url: `/events/${s.eventId}/attendees/import`, headers: { 'x-service-api-key': s.apiKey, 'content-type': 'text/csv' }, payload: tito })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  expect(res.body).toMatchObject({ format: 'tito', imported: 4, nameless: 1, skipped: [] })
  const stored = (await gw.store.attendees.findByCode(s.eventId, 'GIAO-3'))!
  expect(stored).toMatchObject({ name: '', email: null, ticketType: 'Standard Ticket', needsAttention: 1 })

  const bind = await addDoor(gw, s, 'bind', 'Bind desk')
  const staff = await staffClient(gw, bind.kiosk)
  const found = await staff.get('/kiosk/staff/attendees?q=GIAO-3')
  expect(found.body.attendees).toEqual([expect.objectContaining({ id: stored.id, name: 'Standard Ticket · GIAO-3', ticketCode: 'GIAO-3', needsAttention: true })])
  const armed = await staff.post('/kiosk/staff/bind', { ticketCode: 'GIAO-3' })
  expect(armed).toMatchObject({ status: 200, body: { armed: { attendee: { id: stored.id, name: 'Standard Ticket · GIAO-3' } } } })
  const checkedIn = await staff.post('/kiosk/staff/attendees/check-in', { attendeeId: stored.id })
  expect(checkedIn).toMatchObject({ status: 200, body: { state: 'accepted', checkIn: { attendee: { name: 'Standard Ticket · GIAO-3', displayName: 'Standard Ticket', needsAttention: true } } } })

  // The API's list keeps the stored (empty) name, so an export and a re-import round-trip it.
  const listed = await call(gw, { method: 'GET', url: `/events/${s.eventId}/attendees?q=GIAO-3`, headers: { 'x-service-api-key': s.apiKey } })
  expect(listed.body.attendees).toEqual([expect.objectContaining({ name: '', ticketCode: 'GIAO-3', needsAttention: true })])
  // Named later in Tito: the re-import names the guest.
  const named = tito.replace(',Standard Ticket,,,,,,,DevConf', ',Standard Ticket,Ana Ruiz,Ana,Ruiz,ana@example.es,,,DevConf')
  expect((await call(gw, { method: 'POST', url: `/events/${s.eventId}/attendees/import`, headers: { 'x-service-api-key': s.apiKey, 'content-type': 'text/csv' }, payload: named })).body).toMatchObject({ nameless: 0, updated: 4 })
  expect((await gw.store.attendees.findByCode(s.eventId, 'GIAO-3'))!.name).toBe('Ana Ruiz')
})

test('a real error still imports nothing: a nameless row without a code, a duplicate code', async () => {
  gw = await createBackendGateway()
  const s = await seedDoor(gw)
  const post = (payload: string) => call(gw, { method: 'POST', url: `/events/${s.eventId}/attendees/import`, headers: { 'x-service-api-key': s.apiKey, 'content-type': 'text/csv' }, payload })
  const noCode = pretixCheckin('en').replace('"p3rw9nq2c7xk5hd8mzt4yvb6aegs2fju"', '""')
  expect(await post(noCode)).toMatchObject({ status: 400, body: { error: 'csv_rows_invalid', errors: { 'line 3, Secret': 'The ticket code is empty' } } })
  const twice = pretixCheckin('en').replace('"p3rw9nq2c7xk5hd8mzt4yvb6aegs2fju"', '"u8m2kq4x7ts9hbnw3cyv6ea5rdpf2jgz"')
  expect(await post(twice)).toMatchObject({ status: 400, body: { error: 'csv_rows_invalid', errors: { 'line 3, Secret': expect.stringContaining('is on line 2 too') } } })
  expect(await gw.store.attendees.findByCode(s.eventId, 'u8m2kq4x7ts9hbnw3cyv6ea5rdpf2jgz')).toBeUndefined()
})
