import { parse } from 'csv-parse/sync'
import writeXlsxFile from 'write-excel-file/node'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { type BackendGateway, call, createBackendGateway } from '../helpers/gateway.js'
import { seedGuestEvent } from './guestEvent.js'
import { hiEventsRows, pretixPositions } from './translatedExports.js'

// Issue 25 point 5 through the API: the .xlsx that pretix offers first ("Order data") and Hi.Events only
// (AttendeesExport is an .xlsx), made here with write-excel-file from the same catalogue strings as the CSV
// tests; and a CSV saved by Excel's plain "CSV" on Windows (Windows-1252).

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'

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

const upload = (payload: Buffer | string, type: string) =>
  call(gw, { method: 'POST', url: `/events/${eventId}/attendees/import`, headers: { 'x-service-api-key': apiKey, 'content-type': type }, payload })

const guests = async () =>
  (await gw.store.attendees.list(eventId, { limit: 100, offset: 0 })).attendees.map((a) => [a.ticketCode, a.name, a.ticketType, a.needsAttention === 1]).sort()

type Cell = string | number | null
/** A workbook of sheets as pretix's and Hi.Events' exporters write them: text and number cells. */
const workbook = (sheets: { sheet: string; data: Cell[][] }[]) =>
  writeXlsxFile(sheets.map(({ sheet, data }) => ({ sheet, data: data.map((row) => row.map((value) => (value === null ? null : { value }))) }))).toBuffer()

const rowsOf = (csv: string) => parse(csv) as string[][]

describe('.xlsx', () => {
  test("pretix's order data in German: the sheet Bestellzeilen (Order positions) is read, not the first (Bestellungen); positions' ids are number cells", async () => {
    const [header, ...rows] = rowsOf(pretixPositions('de'))
    const positions = [header!, ...rows.map((row) => row.map((cell, i) => (i === 2 ? Number(cell) : cell)))]
    const file = await workbook([
      { sheet: 'Bestellungen', data: [['Bestellnummer', 'Status'], ['Q7PFR', 'bezahlt']] },
      { sheet: 'Bestellzeilen', data: positions },
    ])
    const res = await upload(file, XLSX)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ fileType: 'xlsx', sheet: 'Bestellzeilen', format: 'pretix-positions', formatLabel: 'pretix order positions (German)', imported: 2, nameless: 1, unpaid: 1 })
    expect(res.body.skipped.map((s: { line: number }) => s.line)).toEqual([3, 5, 6])
    expect(await guests()).toEqual([
      ['u8m2kq4x7ts9hbnw3cyv6ea5rdpf2jgz', 'Zoë Müller', 'Konferenz – Frühbucher', false],
      ['x6kd2mp8qv4hn9wc3tr7bza5eyfsg2ju', '', 'Konferenz', true],
    ])
  })

  test('Hi.Events attendees in French, its only sheet; the same file sent as text/csv is still read as a workbook (told by its bytes)', async () => {
    const [header, ...rows] = hiEventsRows('fr')
    const file = await workbook([{ sheet: 'Attendees', data: [header!, ...rows.map((row) => row.map((cell, i) => (i === 0 ? Number(cell) : cell)))] }])
    const res = await upload(file, 'text/csv')
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ fileType: 'xlsx', sheet: 'Attendees', format: 'hievents', formatLabel: 'Hi.Events attendees (French)', imported: 2, unpaid: 1 })
    expect(await guests()).toEqual([
      ['A-7KQ2M9X', 'Chloé Dubois', 'Entrée générale', false],
      ['A-P4ZT8WN', 'Tom Baker', 'VIP', false],
    ])
  })

  test('a bad row in a workbook imports nothing, named by its sheet row; a duplicate code too', async () => {
    const [header, ...rows] = hiEventsRows('de')
    const bad = rows.map((row) => [...row])
    bad[1]![3] = 'tom at example'
    const res = await upload(await workbook([{ sheet: 'Teilnehmer', data: [header!, ...bad] }]), XLSX)
    expect(res).toMatchObject({ status: 400, body: { error: 'csv_rows_invalid', errors: { 'line 3, E-Mail': '"tom at example" is not an email address' } } })
    const twice = rows.map((row) => [...row])
    twice[1]![9] = twice[0]![9]!
    const again = await upload(await workbook([{ sheet: 'Teilnehmer', data: [header!, ...twice] }]), XLSX)
    expect(again).toMatchObject({ status: 400, body: { error: 'csv_rows_invalid', errors: { 'line 3, Öffentliche ID': expect.stringContaining('is on line 2 too') } } })
    expect(await guests()).toEqual([])
  })

  test('a field past the bound is a 413 as in a CSV; a zip that is no workbook, or unpacks past 64 MiB, is a clear 400', async () => {
    const [header, ...rows] = hiEventsRows('en')
    const long = rows.map((row) => [...row])
    long[0]![13] = 'x'.repeat(10_001)
    const res = await upload(await workbook([{ sheet: 'Attendees', data: [header!, ...long] }]), XLSX)
    expect(res).toMatchObject({ status: 413, body: { error: 'csv_field_too_large' } })
    const notXlsx = Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(200, 7)])
    const broken = await upload(notXlsx, XLSX)
    expect(broken).toMatchObject({ status: 400, body: { error: 'csv_unreadable' } })
    expect(broken.body.message).toContain('not a readable one')
    // A workbook whose zip directory says a part unpacks to 112 MiB (a zip bomb, or a list too big for a
    // workbook read whole): refused before it is unpacked, pointing at CSV.
    const bomb = await workbook([{ sheet: 'Attendees', data: [header!, ...rows] }])
    const directory = bomb.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]))
    bomb.writeUInt32LE(112 * 1024 * 1024, directory + 24)
    const refused = await upload(bomb, XLSX)
    expect(refused).toMatchObject({ status: 400, body: { error: 'csv_unreadable' } })
    expect(refused.body.message).toMatch(/^The workbook unpacks to 11\d MB; an \.xlsx is read up to 64 MB unpacked .*save the guest sheet as CSV/)
    expect(await guests()).toEqual([])
  })
})

describe('Windows-1252 (Excel\'s plain "CSV")', () => {
  // A German Hi.Events list saved by Excel as "CSV (Trennzeichen-getrennt)": semicolons, cp1252 (ü = 0xFC, ö = 0xF6, é = 0xE9).
  const german = [
    'ID;Vorname;Nachname;E-Mail;Status;Check Ins;Produkt-ID;Produktname;Veranstaltungs-ID;Öffentliche ID;Kurz-ID;Erstellungsdatum;Letztes Aktualisierungsdatum;Notizen',
    '1;Jürgen;Großmann;juergen@example.de;ACTIVE;;12;Eintritt für zwei;3;A-JG1;s1;2025-05-02 14:11:09;2025-05-02 14:11:09;Rollstuhl – Rampe, „Spende“ 5 €',
    '2;Zoë;Schröder;zoe@example.de;ACTIVE;;12;Eintritt für zwei;3;A-ZS2;s2;2025-05-02 14:11:09;2025-05-02 14:11:09;Café',
  ].join('\r\n')
  // Latin-1 for U+00A0-U+00FF, and the Windows-1252 bytes of the few others used here (the code page's own table).
  const HIGH: Record<string, number> = { '€': 0x80, '–': 0x96, '„': 0x84, '“': 0x93 }
  const cp1252 = (text: string) => Buffer.from([...text].map((c) => HIGH[c] ?? (c.charCodeAt(0) <= 0xff ? c.charCodeAt(0) : expect.fail(`no cp1252 byte for ${c}`))))

  test('read as Windows-1252, said in the report; names, header and note as typed', async () => {
    const bytes = cp1252(german)
    expect(() => new TextDecoder('utf-8', { fatal: true }).decode(bytes)).toThrow()
    const res = await upload(bytes, 'text/csv')
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ fileType: 'csv', encoding: 'windows-1252', format: 'hievents', formatLabel: 'Hi.Events attendees (German)', imported: 2 })
    expect(await guests()).toEqual([
      ['A-JG1', 'Jürgen Großmann', 'Eintritt für zwei', false],
      ['A-ZS2', 'Zoë Schröder', 'Eintritt für zwei', false],
    ])
    expect((await gw.store.attendees.findByCode(eventId, 'A-JG1'))!.note).toBe('Rollstuhl – Rampe, „Spende“ 5 €')
  })

  test('the same file in UTF-8 says utf-8; one mixing UTF-8 and Windows-1252 is refused, nothing stored', async () => {
    const utf8 = await upload(german, 'text/csv')
    expect(utf8.body).toMatchObject({ encoding: 'utf-8', imported: 2 })
    const [head, first, second] = german.split('\r\n')
    const mixed = Buffer.concat([Buffer.from(`${head}\r\n${first}\r\n`.replace('A-JG1', 'A-JG9')), cp1252(second!.replace('A-ZS2', 'A-ZS9'))])
    const res = await upload(mixed, 'text/csv')
    expect(res).toMatchObject({ status: 400, body: { error: 'csv_unreadable' } })
    expect(res.body.message).toContain('neither UTF-8 nor Windows-1252')
    expect(await gw.store.attendees.findByCode(eventId, 'A-JG9')).toBeUndefined()
  })
})
