import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { type BackendGateway, call, createBackendGateway } from '../helpers/gateway.js'
import { seedGuestEvent } from './guestEvent.js'
import { hiEvents, hiEventsTicketName, LANGS, pretixCheckin, pretixPositions } from './translatedExports.js'

// Issue 25 point 1 through the API: pretix's check-in list and order positions and Hi.Events' attendees in
// each language their exporters ship, built from the catalogues' strings (translatedExports.ts names them).

const LANGUAGE = { en: '', de: ' (German)', fr: ' (French)', es: ' (Spanish)', nl: ' (Dutch)', it: ' (Italian)' } as const

let gw: BackendGateway
let eventId: number
let apiKey: string

beforeEach(async () => {
  gw = await createBackendGateway()
  const seeded = await seedGuestEvent(gw)
  apiKey = seeded.apiKey
  eventId = seeded.eventId
})
afterEach(() => gw.close())

const upload = (body: string) =>
  call(gw, { method: 'POST', url: `/events/${eventId}/attendees/import`, headers: { 'x-service-api-key': apiKey, 'content-type': 'text/csv' }, payload: body })

const guests = async () =>
  (await gw.store.attendees.list(eventId, { limit: 100, offset: 0 })).attendees
    .map((a) => ({ code: a.ticketCode, name: a.name, type: a.ticketType, email: a.email, paid: a.paid === 1, attention: a.needsAttention === 1, note: a.note }))
    .sort((a, b) => a.code.localeCompare(b.code))

describe('pretix check-in list', () => {
  test.each(LANGS)('%s', async (lang) => {
    const res = await upload(pretixCheckin(lang))
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ format: 'pretix-checkin', formatLabel: `pretix check-in list${LANGUAGE[lang]}`, imported: 2, unpaid: 1 })
    expect(res.body.skipped).toEqual([{ line: 4, ticketCode: 'x6kd2mp8qv4hn9wc3tr7bza5eyfsg2ju', reason: 'blocked in pretix' }])
    expect(await guests()).toEqual([
      // The invoice name the list falls back to was empty: imported nameless, flagged; its Paid is No.
      { code: 'p3rw9nq2c7xk5hd8mzt4yvb6aegs2fju', name: '', type: 'Konferenz', email: null, paid: false, attention: true, note: 'Rollstuhl' },
      { code: 'u8m2kq4x7ts9hbnw3cyv6ea5rdpf2jgz', name: 'Zoë Müller', type: 'Konferenz', email: 'zoe@example.org', paid: true, attention: false, note: null },
    ])
  })
})

describe('pretix order positions', () => {
  test.each(LANGS)('%s', async (lang) => {
    const res = await upload(pretixPositions(lang))
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ format: 'pretix-positions', formatLabel: `pretix order positions${LANGUAGE[lang]}`, imported: 2, unpaid: 1 })
    const reasons = (res.body.skipped as { line: number; reason: string }[]).map((s) => [s.line, s.reason])
    expect(reasons).toHaveLength(3)
    // The T-shirt: no attendee, an add-on (English, whose sheet has the column) or in an order whose ticket is named.
    expect(reasons[0]![0]).toBe(3)
    expect(reasons[0]![1]).toMatch(lang === 'en' ? /^add-on to position 1 without an attendee \(T-Shirt\)/ : /^no attendee \(T-Shirt\), while order Q7PFR's tickets have names/)
    expect(reasons.slice(1)).toEqual([
      [5, expect.stringMatching(/^order /)],
      [6, expect.stringMatching(/^order /)],
    ])
    expect(await guests()).toEqual([
      { code: 'u8m2kq4x7ts9hbnw3cyv6ea5rdpf2jgz', name: 'Zoë Müller', type: 'Konferenz – Frühbucher', email: 'zoe@example.org', paid: true, attention: false, note: null },
      // A ticket nobody named, its order pending: imported nameless with the buyer's email, flagged, not paid.
      { code: 'x6kd2mp8qv4hn9wc3tr7bza5eyfsg2ju', name: '', type: 'Konferenz', email: 'kim@example.com', paid: false, attention: true, note: 'Rechnung folgt' },
    ])
  })
})

describe('Hi.Events attendees', () => {
  test.each(LANGS)('%s', async (lang) => {
    const res = await upload(hiEvents(lang))
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ format: 'hievents', formatLabel: `Hi.Events attendees${LANGUAGE[lang]}`, imported: 2, unpaid: 1 })
    expect(res.body.skipped).toEqual([{ line: 4, ticketCode: 'A-R2VY6HD', reason: 'cancelled' }])
    expect(await guests()).toEqual([
      { code: 'A-7KQ2M9X', name: 'Chloé Dubois', type: 'Entrée générale', email: 'chloe@example.fr', paid: true, attention: false, note: 'Végétarienne' },
      { code: 'A-P4ZT8WN', name: 'Tom Baker', type: 'VIP', email: 'tom@example.com', paid: false, attention: false, note: null },
    ])
  })

  test('the Dec 2024 – Feb 2025 export: Ticket Name is the ticket type; an empty one falls back to the ticket id', async () => {
    const res = await upload(hiEventsTicketName)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ format: 'hievents', formatLabel: 'Hi.Events attendees', imported: 2, skipped: [] })
    expect((await guests()).map((g) => [g.code, g.name, g.type])).toEqual([
      ['A-EB7TN2Q', 'Ines Duarte', 'Early Bird'],
      ['A-GN4XK9P', 'Omar Haddad', 'Ticket 5'],
    ])
  })
})

test('a real error in a translated file still imports nothing: a bad email in a German check-in list', async () => {
  const body = pretixCheckin('de').replace('zoe@example.org', 'zoe at example')
  const res = await upload(body)
  expect(res.status).toBe(400)
  expect(res.body).toMatchObject({ error: 'csv_rows_invalid', errors: { 'line 2, E-Mail': '"zoe at example" is not an email address' } })
  expect(await guests()).toEqual([])
})
