import fs from 'node:fs'
import path from 'node:path'
import { parse } from 'csv-parse/sync'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { scannedGuest } from '../../src/door/doorGuest.js'
import { type BackendGateway, createBackendGateway, testDir } from '../helpers/gateway.js'
import { seedGuestEvent } from './guestEvent.js'
import { backendCli } from '../helpers/backendCli.js'

// Issue 25 points 3 and 4 as users run it: `tapgate attendees import|export` and `tapgate event set
// --admit-unpaid`, the real bin on this run's engine (the data dir's SQLite file, or the test's
// PostgreSQL database through TAPGATE_DATABASE_URL).

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

/** The Hi.Events fixture with Tom's order awaiting payment, as a file to import. */
function hiEventsAwaiting(): string {
  const file = path.join(testDir(), 'hievents-awaiting.csv')
  fs.writeFileSync(file, fs.readFileSync(path.join(fixtures, 'hievents.csv'), 'utf8').replace('tom.baker@example.com,ACTIVE,', 'tom.baker@example.com,AWAITING_PAYMENT,'))
  return file
}

test('import says how many are not paid; the export keeps it, and the export read back with --map …,paid=paid keeps it too', async () => {
  const file = hiEventsAwaiting()
  const imported = await cli('attendees', 'import', '--event', String(eventId), file)
  expect(imported).toMatchObject({ code: 0, stderr: '' })
  expect(imported.stdout).toContain('Hi.Events attendees, 2 guests imported')
  expect(imported.stdout).toContain('  1 not paid (the tool says the order waits for payment): the door refuses this guest "not paid" unless tapgate event set --admit-unpaid yes\n')
  expect(JSON.parse((await cli('attendees', 'import', '--event', String(eventId), '--json', file)).stdout)).toMatchObject({ imported: 2, updated: 2, unpaid: 1 })

  const exported = await cli('attendees', 'export', '--event', String(eventId))
  expect(exported.code).toBe(0)
  const lines = exported.stdout.split('\r\n')
  expect(lines[0]).toContain(',needs_attention,paid,chips,')
  const rows = parse(exported.stdout, { bom: true, columns: true }) as Record<string, string>[]
  expect(rows.map((r) => [r.ticket_code, r.name, r.needs_attention, r.paid])).toEqual([['A-7KQ2M9X', 'Chloé Dubois', 'no', 'yes'], ['A-P4ZT8WN', 'Tom Baker', 'no', 'no']])

  // The round trip: tapgate's own export, read back with a map, into a fresh event of the same gateway's list.
  const out = path.join(testDir(), 'guests.csv')
  fs.writeFileSync(out, exported.stdout)
  await gw.store.tx(async (tx) => tx.attendees.upsertMany(eventId, [{ name: 'Tom Baker', email: null, ticketType: 'VIP', ticketCode: 'A-P4ZT8WN', wallet: null, note: null, needsAttention: null, paid: true }], 1))
  expect((await gw.store.attendees.findByCode(eventId, 'A-P4ZT8WN'))!.paid).toBe(1)
  const back = await cli('attendees', 'import', '--event', String(eventId), '--json', '--map', 'name=name,email=email,ticket=ticket_code,type=ticket_type,paid=paid', out)
  expect(back).toMatchObject({ code: 0, stderr: '' })
  expect(JSON.parse(back.stdout)).toMatchObject({ format: 'map', imported: 2, updated: 2, unpaid: 1 })
  expect((await gw.store.attendees.findByCode(eventId, 'A-P4ZT8WN'))!.paid).toBe(0)
  expect((await gw.store.attendees.findByCode(eventId, 'A-7KQ2M9X'))!.paid).toBe(1)
})

test('event set --admit-unpaid yes|no on this engine; a bad value exits 2 and changes nothing', async () => {
  const event = ['event', 'set', '--event', String(eventId)]
  const yes = await cli(...event, '--admit-unpaid', 'yes')
  expect(yes).toMatchObject({ code: 0 })
  expect(JSON.parse(yes.stdout)).toEqual({ eventId, name: 'Opening', reentry: true, publicNames: 'first', admitUnpaid: true })
  expect((await gw.store.guestbook.getEvent(eventId))!.admitUnpaid).toBe(1)
  expect(await cli(...event, '--admit-unpaid', 'maybe')).toMatchObject({ code: 2, stderr: expect.stringContaining('--admit-unpaid takes yes or no') })
  expect((await gw.store.guestbook.getEvent(eventId))!.admitUnpaid).toBe(1)
  expect(JSON.parse((await cli(...event, '--admit-unpaid', 'no')).stdout)).toMatchObject({ admitUnpaid: false })
  expect((await gw.store.guestbook.getEvent(eventId))!.admitUnpaid).toBe(0)
})

test("point 4 through the bin: a Luma list imported by tapgate attendees import is found by the QR URL a scanner types; an Eventbrite Barcode # column is the code", async () => {
  expect(await cli('attendees', 'import', '--event', String(eventId), path.join(fixtures, 'luma.csv'))).toMatchObject({ code: 0, stderr: '' })
  expect((await scannedGuest(gw.store, eventId, 'https://luma.com/check-in/evt-NKXctR3fMVfX24o?pk=k7Qx2pLm\r'))?.name).toBe('Åsa Lindqvist')
  expect(await scannedGuest(gw.store, eventId, 'https://luma.com/check-in/evt-NKXctR3fMVfX24o?pk=nobody00')).toBeUndefined()
  const [header, ...rows] = fs.readFileSync(path.join(fixtures, 'eventbrite.csv'), 'utf8').trim().split(/\r?\n/)
  const file = path.join(testDir(), 'eventbrite-barcodes.csv')
  fs.writeFileSync(file, [`${header},Barcode #`, ...rows.map((row, i) => `${row},98765432100${i}`)].join('\n'))
  expect(JSON.parse((await cli('attendees', 'import', '--event', String(eventId), '--json', file)).stdout)).toMatchObject({ format: 'eventbrite', imported: 3 })
  expect((await scannedGuest(gw.store, eventId, '987654321001'))?.name).toBe('Jane Doe')
})
