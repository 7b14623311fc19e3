import fs from 'node:fs'
import path from 'node:path'
import { parse } from 'csv-parse/sync'
import writeXlsxFile from 'write-excel-file/node'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { type BackendGateway, createBackendGateway, testDir } from '../helpers/gateway.js'
import { seedGuestEvent } from './guestEvent.js'
import { backendCli } from '../helpers/backendCli.js'
import { hiEventsRows, hiEventsTicketName, pretixCheckin, pretixPositions } from './translatedExports.js'

// Issue 25 points 1, 2 and 5 as organisers run them: `tapgate attendees import` from the bin on this run's
// engine, one run per tool and variant (files built from the catalogues' strings: translatedExports.ts).

const fixtures = path.join(import.meta.dirname, '../fixtures/attendees')

let gw: BackendGateway
let eventId: number

beforeEach(async () => {
  gw = await createBackendGateway()
  eventId = (await seedGuestEvent(gw)).eventId
})
afterEach(async () => {
  killAll()
  await gw.close()
})

const { run: cli, killAll } = backendCli(() => gw)

const write = (name: string, body: string | Buffer) => {
  const file = path.join(testDir(), name)
  fs.writeFileSync(file, body)
  return file
}
const importFile = (file: string) => cli('attendees', 'import', '--event', String(eventId), file)

test('pretix check-in list in German (CSV): detected, the blocked ticket skipped, the nameless one imported and said', async () => {
  const file = write('checkin-de.csv', pretixCheckin('de'))
  const result = await importFile(file)
  expect(result).toMatchObject({ code: 0, stderr: '' })
  expect(result.stdout).toContain(`${file}: pretix check-in list (German), 2 guests imported into event ${eventId} (2 new, 0 updated)`)
  expect(result.stdout).toContain('  skipped line 4 (x6kd2mp8qv4hn9wc3tr7bza5eyfsg2ju): blocked in pretix\n')
  expect(result.stdout).toContain('  1 without a name (a ticket nobody has named yet): flagged for staff, who see it as "ticket type · ticket code"\n')
  expect(result.stdout).toContain('  1 not paid')
})

test("pretix order data in Dutch (.xlsx, the sheet Bestelde producten): the T-shirt skipped with its reason", async () => {
  const [header, ...rows] = parse(pretixPositions('nl')) as string[][]
  const cells = (data: string[][]) => data.map((row) => row.map((value) => ({ value })))
  const book = await writeXlsxFile([
    { sheet: 'Bestellingen', data: cells([['Bestelcode'], ['Q7PFR']]) },
    { sheet: 'Bestelde producten', data: cells([header!, ...rows]) },
  ]).toBuffer()
  const file = write('orderdata-nl.xlsx', book)
  const result = await importFile(file)
  expect(result).toMatchObject({ code: 0, stderr: '' })
  expect(result.stdout).toContain('pretix order positions (Dutch), 2 guests imported')
  expect(result.stdout).toContain('  read sheet "Bestelde producten" of the workbook\n')
  expect(result.stdout).toContain("  skipped line 3 (p3rw9nq2c7xk5hd8mzt4yvb6aegs2fju): no attendee (T-Shirt), while order Q7PFR's tickets have names: a product that admits no one\n")
  expect(result.stdout).toContain('  skipped line 5 (a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1): order geannuleerd\n')
  expect(result.stdout).toContain('  skipped line 6 (b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2): order verlopen\n')
})

test('Hi.Events attendees in Italian (.xlsx, its only export) and Spanish as Windows-1252 CSV (Excel\'s plain "CSV")', async () => {
  const [header, ...rows] = hiEventsRows('it')
  const book = await writeXlsxFile([header!, ...rows].map((row) => row.map((value) => ({ value }))), { sheet: 'Partecipanti' }).toBuffer()
  const xlsx = await importFile(write('attendees-it.xlsx', book))
  expect(xlsx).toMatchObject({ code: 0, stderr: '' })
  expect(xlsx.stdout).toContain('Hi.Events attendees (Italian), 2 guests imported')
  expect(xlsx.stdout).toContain('  skipped line 4 (A-R2VY6HD): cancelled\n')

  // Latin-1 covers every character of this file, and Windows-1252 is Latin-1 there.
  const es = parse(fs.readFileSync(path.join(fixtures, 'hievents.csv'), 'utf8')) as string[][]
  const spanish = hiEventsRows('es')[0]!.join(';') + '\r\n' + es.slice(1, 3).map((row) => row.slice(0, 14).join(';').replace('Chloé', 'Begoña')).join('\r\n') + '\r\n'
  const csv = await importFile(write('attendees-es.csv', Buffer.from(spanish, 'latin1')))
  expect(csv).toMatchObject({ code: 0, stderr: '' })
  expect(csv.stdout).toContain('Hi.Events attendees (Spanish), 2 guests imported')
  expect(csv.stdout).toContain('  read as Windows-1252 (Excel\'s plain "CSV"): the file is not UTF-8\n')
  expect((await gw.store.attendees.findByCode(eventId, 'A-7KQ2M9X'))!.name).toBe('Begoña Dubois')
})

test('Tito with a ticket not assigned yet, and a bad file still refused whole', async () => {
  const tito = fs.readFileSync(path.join(fixtures, 'tito.csv'), 'utf8').replace('Björn Åkesson,Björn,Åkesson,bjorn@example.se,,,DevConf', ',,,,,,DevConf')
  const result = await importFile(write('tito.csv', tito))
  expect(result).toMatchObject({ code: 0, stderr: '' })
  expect(result.stdout).toContain('Tito tickets, 3 guests imported')
  expect(result.stdout).toContain('  1 without a name')
  expect((await gw.store.attendees.findByCode(eventId, 'GIAO-1'))).toMatchObject({ name: '', ticketType: 'Standard Ticket', needsAttention: 1 })
  const bad = await importFile(write('tito-bad.csv', tito.replace('lena@example.de', 'lena(at)example.de').replace('GIAO-1', 'GIAO-9')))
  expect(bad.code).toBe(1)
  expect(bad.stderr).toContain('1 problem in the Tito tickets file; nothing was imported')
  expect(await gw.store.attendees.findByCode(eventId, 'GIAO-9')).toBeUndefined()
})

test('Hi.Events of Dec 2024 – Feb 2025 (Ticket Name): the ticket type is the name, not Ticket <id>', async () => {
  const result = await importFile(write('hievents-2025-01.csv', hiEventsTicketName))
  expect(result).toMatchObject({ code: 0, stderr: '' })
  expect(result.stdout).toContain('Hi.Events attendees, 2 guests imported')
  expect((await gw.store.attendees.findByCode(eventId, 'A-EB7TN2Q'))!.ticketType).toBe('Early Bird')
  expect((await gw.store.attendees.findByCode(eventId, 'A-GN4XK9P'))!.ticketType).toBe('Ticket 5')
})
