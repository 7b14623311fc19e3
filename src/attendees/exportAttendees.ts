import { stringify } from 'csv-stringify/sync'
import type { AttendeeExportPass, AttendeeExportRow } from '../db/attendees.js'
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

/**
 * An event's guest list with what happened at the door: every guest, their chips, the check-in
 * (time, door, manual or tapped, left), exits and re-entries, and the event token's mint state.
 *
 * @throws NotFoundError `event_not_found` (another team's event too, when `teamId` is given)
 * @example
 * const data = await exportAttendees(store, { eventId: 3, now: Date.now() })
 * fs.writeFileSync('guests.csv', attendeesCsv(data))
 */
export async function exportAttendees(store: Repositories, p: { eventId: number; teamId?: number; now: number }): Promise<AttendeeExport> {
  const event = await attendeeEvent(store, p.eventId, p.teamId)
  const [rows, passes] = await Promise.all([store.attendees.exportRows(event.id), store.attendees.exportPasses(event.id)])
  const byCheckIn = new Map<number, ExportedPass[]>()
  for (const pass of passes as AttendeeExportPass[]) {
    const list = byCheckIn.get(pass.checkInId) ?? []
    list.push({ direction: pass.direction, at: iso(pass.createdAt), station: pass.stationName })
    byCheckIn.set(pass.checkInId, list)
  }
  return {
    eventId: event.id,
    eventName: event.name,
    exportedAt: iso(p.now),
    attendees: rows.map((row) => exported(row, row.checkInId === null ? [] : (byCheckIn.get(row.checkInId) ?? []))),
  }
}

const CSV_COLUMNS = [
  'ticket_code', 'name', 'email', 'ticket_type', 'wallet', 'note', 'needs_attention', 'paid', 'chips', 'checked_in_at', 'check_in_station',
  'check_in_method', 'left_at', 'exits', 'reentries', 'mint_state', 'mint_tx_hash',
] as const

const times = (passes: ExportedPass[], direction: 'in' | 'out') =>
  passes.filter((pass) => pass.direction === direction).map((pass) => `${pass.at} ${pass.station}`).join('; ')

/**
 * The export as CSV for a spreadsheet: UTF-8 with a BOM (Excel reads the accents right), one row per
 * guest, several chips separated by spaces, exits and re-entries as "time door; time door". A cell
 * starting with = + - @, a tab or a carriage return gets a leading ' (OWASP CSV injection: the
 * spreadsheet shows the text instead of running it as a formula); the JSON export has the raw values.
 */
export function attendeesCsv(data: AttendeeExport): string {
  const records = data.attendees.map((a) => [
    a.ticketCode, a.name, a.email ?? '', a.ticketType, a.wallet ?? '', a.note ?? '', a.needsAttention ? 'yes' : 'no', a.paid ? 'yes' : 'no', a.chips.join(' '),
    a.checkIn?.at ?? '', a.checkIn?.station ?? '', a.checkIn?.method ?? '', a.checkIn?.leftAt ?? '', times(a.passes, 'out'), times(a.passes, 'in'),
    a.mint.state, a.mint.txHash ?? '',
  ])
  return stringify([[...CSV_COLUMNS], ...records], { bom: true, escape_formulas: true, record_delimiter: 'windows' })
}

/** The body and headers of a download of the export, as the CLI writes it and the API sends it. */
export function attendeesDownload(data: AttendeeExport, format: ExportFormat): { body: string; contentType: string; filename: string } {
  const filename = `attendees-event-${data.eventId}.${format}`
  return format === 'csv'
    ? { body: attendeesCsv(data), contentType: 'text/csv; charset=utf-8', filename }
    : { body: `${JSON.stringify(data, null, 2)}\n`, contentType: 'application/json; charset=utf-8', filename }
}
