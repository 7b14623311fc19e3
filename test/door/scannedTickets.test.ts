import fs from 'node:fs'
import { afterEach, describe, expect, test } from 'vitest'
import { type BackendGateway, call, createBackendGateway } from '../helpers/gateway.js'
import { UIDS } from '../kiosk-gateway/kioskFixture.js'
import { addDoor, seedDoor, staffClient, tapper } from './doorFixture.js'

// Issue 25 point 4: what a USB scanner types from each tool's QR code or barcode finds the guest, at the
// staff API's bind (by ticket code) and search.

let gw: BackendGateway
afterEach(async () => gw?.close())

const fixture = (name: string) => fs.readFileSync(new URL(`../fixtures/attendees/${name}`, import.meta.url), 'utf8')
// Åsa's and Ada's QR codes in the Luma fixture: the check-in URL the import took their pk from.
const ASA_QR = 'https://luma.com/check-in/evt-NKXctR3fMVfX24o?pk=k7Qx2pLm'
const ADA_QR = 'https://luma.com/check-in/evt-NKXctR3fMVfX24o?pk=Zt8wQ1nc'

async function seedTools() {
  const s = await seedDoor(gw)
  const bind = await addDoor(gw, s, 'bind', 'Bind desk')
  for (const file of ['luma.csv', 'pretix-checkin.csv', 'hievents.csv', 'eventbrite.csv']) {
    const res = await call(gw, { method: 'POST', url: `/events/${s.eventId}/attendees/import`, headers: { 'x-service-api-key': s.apiKey, 'content-type': 'text/csv' }, payload: fixture(file) })
    expect(res.status, file).toBe(200)
  }
  return { ...s, bind, staff: await staffClient(gw, bind.kiosk) }
}

describe('a scanned code at the staff API', () => {
  test('a Luma QR URL, as the scanner types it, arms the bind door with that guest; the tap binds and checks them in', async () => {
    gw = await createBackendGateway()
    const s = await seedTools()
    const asa = (await gw.store.attendees.findByCode(s.eventId, 'k7Qx2pLm'))!
    expect(asa.name).toBe('Åsa Lindqvist')
    const armed = await s.staff.post('/kiosk/staff/bind', { ticketCode: ` ${ASA_QR}\r` })
    expect(armed).toMatchObject({ status: 200, body: { armed: { attendee: { id: asa.id, ticketCode: 'k7Qx2pLm' } } } })
    const bound = await tapper()(gw, s.bind.token, UIDS[0]!)
    expect(bound.body.checkIn).toMatchObject({ state: 'bound', attendee: { displayName: 'Åsa' } })
    // Another pk of the same event's URL is another guest; a URL no guest's code is in is 404, naming what was scanned.
    expect(await s.staff.post('/kiosk/staff/bind', { ticketCode: ADA_QR })).toMatchObject({ status: 200, body: { armed: { attendee: { name: 'Lovelace, Ada' } } } })
    expect(await s.staff.post('/kiosk/staff/bind', { ticketCode: 'https://luma.com/check-in/evt-NKXctR3fMVfX24o?pk=nobody00' })).toMatchObject({
      status: 404,
      body: { error: 'attendee_not_found', message: "No guest of this door's event has ticket code https://luma.com/check-in/evt-NKXctR3fMVfX24o?pk=nobody00" },
    })
  })

  test("pretix's secret, Hi.Events' public ID and Eventbrite's barcode digits arm it as they are", async () => {
    gw = await createBackendGateway()
    const s = await seedTools()
    for (const [code, name] of [
      ['u8m2kq4x7ts9hbnw3cyv6ea5rdpf2jgz', 'Zoë Müller'],
      ['A-P4ZT8WN', 'Tom Baker'],
      ['1121198721318441700883001', 'Jane Doe'],
    ] as const) {
      const armed = await s.staff.post('/kiosk/staff/bind', { ticketCode: code })
      expect(armed, code).toMatchObject({ status: 200, body: { armed: { attendee: { name, ticketCode: code } } } })
    }
  })

  test("a search for a scanned Luma URL lists that guest first (the field of a check-in door searches); a plain search is unchanged", async () => {
    gw = await createBackendGateway()
    const s = await seedTools()
    const staff = await staffClient(gw, s.kiosk)
    const found = await staff.get(`/kiosk/staff/attendees?q=${encodeURIComponent(ASA_QR)}`)
    expect(found).toMatchObject({ status: 200 })
    expect(found.body.attendees).toEqual([expect.objectContaining({ name: 'Åsa Lindqvist', ticketCode: 'k7Qx2pLm' })])
    expect((await staff.get(`/kiosk/staff/attendees?q=${encodeURIComponent('https://luma.com/check-in/evt-NKXctR3fMVfX24o?pk=nobody00')}`)).body.attendees).toEqual([])
    expect((await staff.get('/kiosk/staff/attendees?q=k7qx2')).body.attendees).toEqual([expect.objectContaining({ ticketCode: 'k7Qx2pLm' })])
  })
})
