import type { StagedAttendee } from '../db/attendeeImports.js'
import { ValidationError } from '../errors.js'
import { Address, ChipUid } from '../schemas/common.js'
import { type ColumnMap, mappedFormat, parseColumnMap } from './columnMap.js'
import { type Cell, type Columns, columnsOf } from './csvColumns.js'
import { detectFormat, type FormatId, type GuestListFormat, type RawAttendee } from './guestListFormats.js'
import { MAX_LISTED_ERRORS, readCsv } from './readCsv.js'

/** A guest ready to store (checked, trimmed, the chip UID and wallet in their canonical form), with where it came from. */
export type GuestListEntry = StagedAttendee

/** A row not imported on purpose: the tool says its ticket admits no one. */
export type SkippedRow = { line: number; ticketCode: string; reason: string }

/** Something in a row that was left out instead of stopping the import (a wallet a guest typed wrong into Luma). */
export type RowWarning = { line: number; column: string; message: string }

export type GuestList = { format: FormatId; formatLabel: string; entries: GuestListEntry[]; skipped: SkippedRow[]; warnings: RowWarning[] }

/** The ticket type of a guest whose file names none (a `--map` without type=, an empty cell). */
export const DEFAULT_TICKET_TYPE = 'General'

export const LIMITS = { name: 200, email: 254, ticketCode: 200, ticketType: 100, note: 2000 }
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const CONTROL = /[\u0000-\u001f\u007f]/
// A `--map paid=` column: our export's yes/no, or a sheet's true/false/1/0/paid/unpaid. Empty: paid.
const PAID_YES = /^(yes|true|1|paid)$/i
const PAID_NO = /^(no|false|0|unpaid|not paid)$/i

/**
 * Reads a guest list file: the tool from its header (pretix, Eventbrite, Luma, Hi.Events, Tito), or the
 * columns `map` names (`name=COL,ticket=COL,…`, which wins over detection), then checks every row.
 * Nothing is written: the caller stores all of it or, on any error, nothing.
 *
 * @throws ValidationError `csv_unreadable`, `csv_format_unknown`, `csv_map_invalid`, `csv_map_unknown_column`,
 *   `csv_no_rows`, or `csv_rows_invalid` with every bad row as `"line 7, Email": "…"` (the first 50)
 * @example
 * const list = parseGuestList(fs.readFileSync('tito.csv'))
 * list.format // 'tito'
 */
export function parseGuestList(input: Uint8Array | string, options: { map?: string } = {}): GuestList {
  // The map first: a malformed --map is the caller's mistake whatever the file holds.
  const map = options.map === undefined ? undefined : parseColumnMap(options.map)
  const table = readCsv(input)
  const { format, columns } = guestListFormat(table.header, map)
  if (table.rows.length === 0) throw noRows()
  return checkRows(format.id, format.label, format.read(columns, table.rows))
}

/** 400 `csv_no_rows`. */
export const noRows = () => new ValidationError('The file has a header but no guests', { file: 'No row after the header' }, 'csv_no_rows')

/**
 * The tool a header comes from, or the columns a `--map` names (which wins over detection).
 *
 * @throws ValidationError `csv_format_unknown`, `csv_map_unknown_column`
 */
export function guestListFormat(header: readonly string[], map: ColumnMap | undefined): { format: GuestListFormat; columns: Columns } {
  const columns = columnsOf(header)
  const detected = map ? { format: mappedFormat(map, columns), columns } : detectFormat(columns)
  if (!detected) {
    const shown = header.slice(0, 12).map((name) => `"${name}"`).join(', ')
    throw new ValidationError(
      'The header row is not one of a known tool (pretix check-in list or order positions, Eventbrite, Luma, Hi.Events, Tito; pretix and Hi.Events in English, German, French, Spanish, Dutch or Italian): name the columns with --map name=COL,ticket=COL,…',
      { header: `${shown}${header.length > 12 ? `, … (${header.length} columns)` : ''}` },
      'csv_format_unknown',
    )
  }
  return { format: detected.format, columns: detected.columns }
}

/** Where a row's problems go: counted, the first MAX_LISTED_ERRORS listed as `"line 7, Email": "…"`. */
export type RowProblems = {
  fail(line: number, column: string, message: string): void
  readonly count: number
  /** `csv_rows_invalid` with the listed problems, when there is one. */
  throwIfAny(formatLabel: string): void
}

export function rowProblems(): RowProblems {
  const errors: Record<string, string> = {}
  let count = 0
  return {
    fail(line, column, message) {
      count++
      const key = `line ${line}, ${column}`
      if (Object.keys(errors).length < MAX_LISTED_ERRORS) errors[key] ??= message
    },
    get count() {
      return count
    },
    throwIfAny(formatLabel) {
      if (count === 0) return
      if (count > MAX_LISTED_ERRORS) errors.more = `${count - Object.keys(errors).length} more problems not listed`
      throw new ValidationError(`${count} problem${count === 1 ? '' : 's'} in the ${formatLabel} file; nothing was imported`, errors, 'csv_rows_invalid')
    },
  }
}

/**
 * One row's checks, on its own (a ticket code or a chip on two lines is the caller's to find: a map
 * in memory here, the staging table's unique indexes in an import): lengths, required cells, email,
 * chip UID and wallet forms. Returns the guest, or null when a problem was reported.
 */
export function checkRow(raw: RawAttendee, problems: RowProblems, warn: (warning: RowWarning) => void): GuestListEntry | null {
  const { line } = raw
  const before = problems.count
  const fail = (column: string, message: string) => problems.fail(line, column, message)
  const text = (cell: Cell | null, limit: number, what: string, required: boolean): string | null => {
    if (cell === null || cell.value === '') {
      if (required) fail(cell?.column ?? what, `The ${what} is empty`)
      return null
    }
    if (cell.value.length > limit) fail(cell.column, `The ${what} is ${cell.value.length} characters long; at most ${limit}`)
    return cell.value
  }
  // A name or a type is one line on the kiosk: a quoted line break in the sheet becomes a space.
  const oneLine = (value: string | null) => value?.replace(/\s+/g, ' ') ?? null
  // A ticket nobody has named yet (pretix, Tito) comes in nameless, flagged: staff see its type and code.
  const nameless = raw.nameOptional === true && raw.name.value === ''
  const name = nameless ? '' : oneLine(text(raw.name, LIMITS.name, 'name', true))
  const ticketCode = text(raw.ticket, LIMITS.ticketCode, 'ticket code', true)
  const ticketType = oneLine(text(raw.type, LIMITS.ticketType, 'ticket type', false)) ?? DEFAULT_TICKET_TYPE
  const email = text(raw.email, LIMITS.email, 'email', false)
  const note = text(raw.note, LIMITS.note, 'note', false)
  if (ticketCode !== null && CONTROL.test(ticketCode)) fail(raw.ticket.column, 'The ticket code holds a line break or another control character')
  if (email !== null && !EMAIL.test(email)) fail(raw.email!.column, `"${email}" is not an email address`)
  let chipUid: string | null = null
  if (raw.chip) {
    const parsed = ChipUid.safeParse(raw.chip.value)
    if (!parsed.success) fail(raw.chip.column, `"${raw.chip.value}" is not a chip UID (14 hex digits, ":" allowed, or its decimal form of 15-17 digits)`)
    else chipUid = parsed.data
  }
  let wallet: string | null = null
  if (raw.wallet) {
    const parsed = Address.safeParse(raw.wallet.value)
    if (parsed.success) wallet = parsed.data
    else if (raw.walletIsOptional) warn({ line, column: raw.wallet.column, message: `"${raw.wallet.value}" is not a 0x address: no wallet set` })
    else fail(raw.wallet.column, `"${raw.wallet.value}" is not a wallet address (0x and 40 hex digits)`)
  }
  let paid = true
  if (typeof raw.paid === 'boolean') paid = raw.paid
  else if (raw.paid !== undefined && raw.paid.value !== '') {
    if (PAID_NO.test(raw.paid.value)) paid = false
    else if (!PAID_YES.test(raw.paid.value)) fail(raw.paid.column, `"${raw.paid.value}" is not yes or no (is the order paid?)`)
  }
  if (name === null || ticketCode === null || problems.count > before) return null
  const needsAttention = nameless ? true : raw.needsAttention
  return { line, name, email, ticketType, ticketCode, wallet, note, needsAttention, paid, chipUid, chipColumn: raw.chip?.column ?? null }
}

/** The message of a ticket code or a chip a file gives twice. */
export function repeatedMessage(what: 'ticket' | 'chip', value: string, firstLine: number): string {
  return what === 'ticket' ? `Ticket code "${value}" is on line ${firstLine} too: each ticket once` : `Chip ${value} is on line ${firstLine} too: a chip belongs to one guest`
}

function checkRows(format: FormatId, formatLabel: string, raws: RawAttendee[]): GuestList {
  const problems = rowProblems()
  const entries: GuestListEntry[] = []
  const skipped: SkippedRow[] = []
  const warnings: RowWarning[] = []
  const ticketLines = new Map<string, number>()
  const chipLines = new Map<string, number>()
  for (const raw of raws) {
    if (raw.skip !== null) {
      skipped.push({ line: raw.line, ticketCode: raw.ticket.value, reason: raw.skip })
      continue
    }
    const entry = checkRow(raw, problems, (warning) => warnings.push(warning))
    // Repeats are looked for in the rows that passed, as an import's staging table sees them.
    if (entry === null) continue
    const firstTicket = ticketLines.get(entry.ticketCode)
    if (firstTicket !== undefined) {
      problems.fail(entry.line, raw.ticket.column, repeatedMessage('ticket', entry.ticketCode, firstTicket))
      continue
    }
    if (entry.chipUid !== null) {
      const firstChip = chipLines.get(entry.chipUid)
      if (firstChip !== undefined) {
        problems.fail(entry.line, raw.chip!.column, repeatedMessage('chip', entry.chipUid, firstChip))
        continue
      }
      chipLines.set(entry.chipUid, entry.line)
    }
    ticketLines.set(entry.ticketCode, entry.line)
    entries.push(entry)
  }
  problems.throwIfAny(formatLabel)
  return { format, formatLabel, entries, skipped, warnings }
}
