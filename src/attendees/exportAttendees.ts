import { stringify } from 'csv-stringify/sync'
import { type AttendeeExportRow, type ExportCursor, EXPORT_START } from '../db/attendees.js'
import type { Repositories } from '../db/types.js'
import type { TxStatus } from '../wire/feedProtocol.js'
import { iso } from '../ids.js'
import { txStatusOf } from '../feed/txProgress.js'
import { attendeeEvent } from './importAttendees.js'

/**
 * Where a guest's event token stands. none: not checked in; waiting_wallet: checked in, the token waits
 * for an address (no wallet on the guest or chip yet); else the mint transaction's status.
 */
export type MintState = 'none' | 'waiting_wallet' | TxStatus

export type ExportedPass = { direction: 'in' | 'out'; at: string; station: string }

/** One guest in the export, with raw values (the JSON export; the CSV writes the same, made safe for spreadsheets). */
export type ExportedAttendee = {
  ticketCode: string
  name: string
  email: string | null
  ticketType: string
  wallet: string | null
  note: string | null
  needsAttention: boolean
  /** false: the order is not paid (the CSV's `paid` column, which `--map …,paid=paid` reads back). */
  paid: boolean
  chips: string[]
  checkIn: { at: string; station: string; method: 'manual' | 'tap'; leftAt: string | null } | null
  /** Exits and re-entries after the check-in (the check-in itself is the first entry), oldest first. */
  passes: ExportedPass[]
  mint: { state: MintState; txHash: string | null }
}

export type AttendeeExport = { eventId: number; eventName: string; exportedAt: string; attendees: ExportedAttendee[] }

export type ExportFormat = 'csv' | 'json'

function exported(row: AttendeeExportRow, passes: ExportedPass[]): ExportedAttendee {
  const checkedIn = row.checkInId !== null && row.checkedInAt !== null
  const tx = row.txStatus === null || row.txHash === null || row.txInitialHash === null ? null : row
  return {
    ticketCode: row.ticketCode,
    name: row.name,
    email: row.email,
    ticketType: row.ticketType,
    wallet: row.wallet,
    note: row.note,
    needsAttention: row.needsAttention === 1,
    paid: row.paid === 1,
    chips: row.chips === null ? [] : row.chips.split(' '),
    checkIn: checkedIn
      ? { at: iso(row.checkedInAt!), station: row.checkInStation ?? '', method: row.manual === 1 ? 'manual' : 'tap', leftAt: row.leftAt === null ? null : iso(row.leftAt) }
      : null,
    passes: checkedIn ? passes : [],
    mint: !checkedIn
      ? { state: 'none', txHash: null }
      : tx === null
        ? { state: 'waiting_wallet', txHash: null }
        : { state: txStatusOf({ status: tx.txStatus!, reverted: tx.txReverted, txHash: tx.txHash!, initialTxHash: tx.txInitialHash! }), txHash: tx.txHash },
  }
}

/** Guests per page of the export: a page's rows and their CSV are all the export holds at a time. */
export const EXPORT_PAGE = 1000

/** The event's guests a page at a time, by name (keyset pages: a 2-million-guest list is read in 2,000 short queries). */
async function* exportedPages(store: Repositories, eventId: number): AsyncGenerator<ExportedAttendee[]> {
  let after: ExportCursor = EXPORT_START
  for (;;) {
    const rows = await store.attendees.exportPage(eventId, after, EXPORT_PAGE)
    if (rows.length === 0) return
    const checkIns = rows.flatMap((row) => (row.checkInId === null ? [] : [row.id]))
    const byCheckIn = new Map<number, ExportedPass[]>()
    for (const pass of checkIns.length === 0 ? [] : await store.attendees.exportPasses(eventId, checkIns)) {
      const list = byCheckIn.get(pass.checkInId) ?? []
      list.push({ direction: pass.direction, at: iso(pass.createdAt), station: pass.stationName })
      byCheckIn.set(pass.checkInId, list)
    }
    yield rows.map((row) => exported(row, row.checkInId === null ? [] : (byCheckIn.get(row.checkInId) ?? [])))
    const last = rows.at(-1)!
    after = { name: last.name, id: last.id }
    if (rows.length < EXPORT_PAGE) return
    // A socket that takes every write at once never makes the stream wait: a /health and a door tap get a turn here.
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
}

/**
 * An event's guest list with what happened at the door: every guest, their chips, the check-in
 * (time, door, manual or tapped, left), exits and re-entries, and the event token's mint state.
 * All of it in memory: for a test or a small list; a download streams (attendeesDownload).
 *
 * @throws NotFoundError `event_not_found` (another team's event too, when `teamId` is given)
 * @example
 * const data = await exportAttendees(store, { eventId: 3, now: Date.now() })
 * fs.writeFileSync('guests.csv', attendeesCsv(data))
 */
export async function exportAttendees(store: Repositories, p: { eventId: number; teamId?: number; now: number }): Promise<AttendeeExport> {
  const event = await attendeeEvent(store, p.eventId, p.teamId)
  const attendees: ExportedAttendee[] = []
  for await (const page of exportedPages(store, event.id)) attendees.push(...page)
  return { eventId: event.id, eventName: event.name, exportedAt: iso(p.now), attendees }
}

const CSV_COLUMNS = [
  'ticket_code', 'name', 'email', 'ticket_type', 'wallet', 'note', 'needs_attention', 'paid', 'chips', 'checked_in_at', 'check_in_station',
  'check_in_method', 'left_at', 'exits', 'reentries', 'mint_state', 'mint_tx_hash',
] as const

const times = (passes: ExportedPass[], direction: 'in' | 'out') =>
  passes.filter((pass) => pass.direction === direction).map((pass) => `${pass.at} ${pass.station}`).join('; ')

const csvRecord = (a: ExportedAttendee) => [
  a.ticketCode, a.name, a.email ?? '', a.ticketType, a.wallet ?? '', a.note ?? '', a.needsAttention ? 'yes' : 'no', a.paid ? 'yes' : 'no', a.chips.join(' '),
  a.checkIn?.at ?? '', a.checkIn?.station ?? '', a.checkIn?.method ?? '', a.checkIn?.leftAt ?? '', times(a.passes, 'out'), times(a.passes, 'in'),
  a.mint.state, a.mint.txHash ?? '',
]

// escape_formulas: a cell starting with = + - @, a tab or a carriage return gets a leading ' (OWASP CSV injection).
const csvLines = (records: string[][]) => stringify(records, { escape_formulas: true, record_delimiter: 'windows' })

/**
 * The export as CSV for a spreadsheet: UTF-8 with a BOM (Excel reads the accents right), one row per
 * guest, several chips separated by spaces, exits and re-entries as "time door; time door". A cell
 * starting with = + - @, a tab or a carriage return gets a leading ' (OWASP CSV injection: the
 * spreadsheet shows the text instead of running it as a formula); the JSON export has the raw values.
 */
export function attendeesCsv(data: AttendeeExport): string {
  return `\ufeff${csvLines([[...CSV_COLUMNS], ...data.attendees.map(csvRecord)])}`
}

/** The export's body a piece at a time: the header, then each page's rows. */
async function* csvPieces(pages: AsyncIterable<ExportedAttendee[]>): AsyncGenerator<string> {
  yield `\ufeff${csvLines([[...CSV_COLUMNS]])}`
  for await (const page of pages) yield csvLines(page.map(csvRecord))
}

// JSON.stringify(data, null, 2) written a guest at a time: the same text, never the whole of it in memory.
async function* jsonPieces(head: Omit<AttendeeExport, 'attendees'>, pages: AsyncIterable<ExportedAttendee[]>): AsyncGenerator<string> {
  const top = JSON.stringify(head, null, 2)
  yield `${top.slice(0, -2)},\n  "attendees": [`
  let first = true
  for await (const page of pages) {
    let piece = ''
    for (const a of page) {
      piece += `${first ? '' : ','}\n    ${JSON.stringify(a, null, 2).replaceAll('\n', '\n    ')}`
      first = false
    }
    yield piece
  }
  yield first ? ']\n}\n' : '\n  ]\n}\n'
}

export type AttendeesDownload = { body: AsyncIterable<string>; contentType: string; filename: string }

/**
 * The export as a download, as the CLI writes it and the API sends it: the event checked first (a 404
 * before any byte), then the body streamed a page of guests at a time, so memory stays flat whatever
 * the list's size. The pages are read as the body is consumed.
 *
 * @throws NotFoundError `event_not_found`
 * @example
 * const download = await attendeesDownload(store, { eventId: 3, now: Date.now() }, 'csv')
 * await pipeline(Readable.from(download.body), fs.createWriteStream(file))
 */
export async function attendeesDownload(
  store: Repositories,
  p: { eventId: number; teamId?: number; now: number },
  format: ExportFormat,
): Promise<AttendeesDownload> {
  const event = await attendeeEvent(store, p.eventId, p.teamId)
  const filename = `attendees-event-${event.id}.${format}`
  const pages = exportedPages(store, event.id)
  return format === 'csv'
    ? { body: csvPieces(pages), contentType: 'text/csv; charset=utf-8', filename }
    : { body: jsonPieces({ eventId: event.id, eventName: event.name, exportedAt: iso(p.now) }, pages), contentType: 'application/json; charset=utf-8', filename }
}
