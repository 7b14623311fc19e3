import type { GuestbookEventRow } from '../db/guestbook.js'
import type { Repositories, Store, TxOptions } from '../db/types.js'
import type { StagedAttendee } from '../db/attendeeImports.js'
import { NotFoundError, ValidationError } from '../errors.js'
import { parseColumnMap } from './columnMap.js'
import type { FormatId } from './guestListFormats.js'
import { checkRow, guestListFormat, noRows, repeatedMessage, rowProblems, type RowWarning, type SkippedRow } from './parseGuestList.js'
import { type CsvRow, MAX_LISTED_ERRORS } from './readCsv.js'
import { csvSource, type FileEncoding } from './readCsvStream.js'
import { readGuestFile } from './readGuestFile.js'

export type ImportAttendeesParameters = {
  eventId: number
  /** The API key's team: another team's event is not found. Undefined: the CLI, on the gateway's own machine. */
  teamId?: number
  /** The file: bytes or text in memory, or a stream (an upload, a file) read as it comes (see csvFile). */
  input: Uint8Array | string | AsyncIterable<Uint8Array>
  /** `--map name=COL,ticket=COL,…`: read these columns instead of detecting the tool. */
  map?: string
  now: number
}

export type ImportAttendeesReport = {
  eventId: number
  format: FormatId
  formatLabel: string
  /** Guests in the file (rows not skipped): each is now on the list. */
  imported: number
  inserted: number
  updated: number
  /** Rows the tool marks as admitting no one (cancelled, void, declined), or pretix positions of products that admit no one: not imported, nothing on the list changed for them. */
  skipped: SkippedRow[]
  chipsBound: number
  warnings: RowWarning[]
  /** Guests imported whose order is not paid (the door refuses them not_paid unless the event admits them). */
  unpaid: number
  /** What the file was: a CSV, or an .xlsx workbook (of which `sheet` was read). */
  fileType: 'csv' | 'xlsx'
  sheet: string | null
  /** How a CSV's text was read: UTF-8, or Windows-1252 (Excel's plain "CSV"). */
  encoding: FileEncoding
  /** Guests imported without a name (a ticket nobody has named yet): flagged for staff. */
  nameless: number
}

const eventNotFound = () => new NotFoundError('event_not_found', 'No guestbook event matches')

/** The event a guest list belongs to: the team's own when a team asks. */
export async function attendeeEvent(store: Repositories, eventId: number, teamId: number | undefined): Promise<GuestbookEventRow> {
  const event = await store.guestbook.getEvent(eventId)
  if (!event || (teamId !== undefined && event.teamId !== teamId)) throw eventNotFound()
  return event
}

/** Rows per staging or applying transaction: a few milliseconds of the write lock, then a door tap gets its turn. */
export const IMPORT_CHUNK = 1000

/** How many skipped rows and warnings a report lists: a 2-million-row file of cancelled tickets is not a 2-million-line answer. */
export const MAX_REPORTED = 1000

// A chunk's statements are single-row rules (unique indexes, ON CONFLICT), as a tap's are: under SERIALIZABLE,
// PostgreSQL's predicate locks on a thousand rows' index pages cost more than the rest of the chunk.
const CHUNK_TX: TxOptions = { isolation: 'read committed' }

// Lets the event loop run (a /health, a door tap's request) between two chunks, even when the file is in memory.
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * Imports a guest list file into an event, read as a stream: every row checked and staged (table
 * attendee_import_rows, a chunk per short transaction) before any reaches the list, then the staged
 * rows moved onto the list a chunk per transaction. New ticket codes are inserted, known ones updated
 * in place, the file's chips bound. A re-import never removes a guest the file leaves out, nor a
 * check-in, nor a chip. Any error while reading or checking imports nothing (the staged rows are
 * dropped). Once every row has passed, the move always finishes: a crash in the middle is resumed
 * at the next start (resumeAttendeeImports), and a door that binds one of the file's chips meanwhile
 * keeps its binding (a warning).
 *
 * @throws ValidationError as parseGuestList; `csv_rows_invalid` also for a chip that is not the event team's, or is bound to another guest
 * @throws CsvTooLargeError, CsvLimitError past the file's bounds (readCsv.ts)
 * @throws NotFoundError `event_not_found`
 * @example
 * const report = await importAttendees(store, { eventId: 3, input: fs.createReadStream('pretix.csv'), now: Date.now() })
 */
export async function importAttendees(store: Store, p: ImportAttendeesParameters): Promise<ImportAttendeesReport> {
  // The event first: a file for an event that is not there is a 404 whatever it holds; then a malformed --map.
  const event = await attendeeEvent(store, p.eventId, p.teamId)
  const map = p.map === undefined ? undefined : parseColumnMap(p.map)
  await resumeAttendeeImports(store, Date.now())
  const csv = await readGuestFile(csvSource(p.input))
  let chosen: ReturnType<typeof guestListFormat>
  let importId: number
  try {
    chosen = guestListFormat(csv.header, map)
    importId = await store.attendeeImports.create(event.id, p.now)
  } catch (error) {
    csv.close()
    throw error
  }
  const { format, columns } = chosen
  const skipped: SkippedRow[] = []
  const warnings: RowWarning[] = []
  let applying = false
  let unpaid = 0
  let nameless = 0
  try {
    const problems = rowProblems()
    let rows = 0
    const together = format.keepTogether?.(columns) ?? null
    let chunk: CsvRow[] = []
    const stageChunk = async (part: CsvRow[]) => {
      const entries: StagedAttendee[] = []
      const raws = format.read(columns, part)
      for (const raw of raws) {
        if (raw.skip !== null) {
          if (skipped.length < MAX_REPORTED) skipped.push({ line: raw.line, ticketCode: raw.ticket.value, reason: raw.skip })
          continue
        }
        const entry = checkRow(raw, problems, (warning) => void (warnings.length < MAX_REPORTED && warnings.push(warning)))
        if (entry === null) continue
        entries.push(entry)
        if (entry.paid === false) unpaid++
        if (entry.name === '') nameless++
      }
      const conflicts = await store.tx(async (tx) => {
        await tx.attendeeImports.touch(importId, Date.now())
        return tx.attendeeImports.stage(importId, entries)
      }, CHUNK_TX)
      for (const c of conflicts) {
        const raw = raws.find((r) => r.line === c.line)
        problems.fail(c.line, (c.what === 'ticket' ? raw?.ticket.column : raw?.chip?.column) ?? c.what, repeatedMessage(c.what, c.value, c.firstLine))
      }
      await yieldToLoop()
    }
    for await (const row of csv.rows) {
      rows++
      chunk.push(row)
      if (chunk.length < IMPORT_CHUNK) continue
      // A pretix order's rows stay in one chunk: the last order's rows wait for the next.
      let cut = chunk.length
      if (together) {
        const last = together(chunk[cut - 1]!)
        while (cut > 1 && together(chunk[cut - 1]!) === last) cut--
        if (cut === 1) cut = chunk.length
      }
      await stageChunk(chunk.slice(0, cut))
      chunk = chunk.slice(cut)
    }
    if (chunk.length > 0) await stageChunk(chunk)
    if (rows === 0) throw noRows()
    problems.throwIfAny(format.label)
    await checkChips(store, event, importId)
    await store.attendeeImports.setState(importId, 'applying')
    applying = true
    const applied = await applyImport(store, event.id, importId, p.now, warnings)
    return {
      eventId: event.id,
      format: format.id,
      formatLabel: format.label,
      imported: applied.rows,
      inserted: applied.inserted,
      updated: applied.rows - applied.inserted,
      skipped,
      chipsBound: applied.chipsBound,
      warnings,
      unpaid,
      fileType: csv.fileType,
      sheet: csv.sheet,
      encoding: csv.encoding(),
      nameless,
    }
  } finally {
    if (!applying) await discardImport(store, importId)
  }
}

/** Drops an import's staged rows, a chunk per statement. */
async function discardImport(store: Store, importId: number): Promise<void> {
  while ((await store.tx((tx) => tx.attendeeImports.discard(importId, IMPORT_CHUNK * 5))) > 0) await yieldToLoop()
}

/**
 * Moves an import's staged rows onto the list, a chunk per transaction: each chunk leaves the staging
 * table in the transaction that writes it to the list, so a crash resumes where it stopped.
 */
async function applyImport(store: Store, eventId: number, importId: number, now: number, warnings: RowWarning[]) {
  let rows = 0
  let inserted = 0
  let chipsBound = 0
  for (;;) {
    const chunk = await store.tx(async (tx) => {
      await tx.attendeeImports.touch(importId, Date.now())
      const applied = await tx.attendeeImports.applyChunk(importId, eventId, IMPORT_CHUNK, now)
      let bound = 0
      for (const chip of applied.chips) {
        const attendee = (await tx.attendees.findByCode(eventId, chip.ticketCode))!
        const holder = await tx.attendeeChips.findByChip(eventId, chip.chipUid)
        if (holder?.attendeeId === attendee.id) continue
        if ((await tx.attendeeChips.bind({ eventId, attendeeId: attendee.id, chipUid: chip.chipUid, stationId: null, now })) === null) {
          // checkChips saw it free; only a bind door can have taken it since. The door's binding is the newer word.
          if (warnings.length < MAX_REPORTED)
            warnings.push({ line: chip.line, column: chip.chipColumn, message: `Chip ${chip.chipUid} was bound at a door during the import: the door's binding kept` })
          continue
        }
        bound++
      }
      return { ...applied, bound }
    }, CHUNK_TX)
    if (chunk.rows === 0) break
    rows += chunk.rows
    inserted += chunk.inserted
    chipsBound += chunk.bound
    await yieldToLoop()
  }
  await store.attendeeImports.finish(importId)
  return { rows, inserted, chipsBound }
}

/** An import no chunk has touched for this long has no process working on it (a chunk takes milliseconds). */
export const STALE_IMPORT_MS = 60_000

/**
 * What a crash left: an import still being checked is dropped (nothing of it is on the list); one
 * whose rows had all passed is moved onto the list. Run at start-up and before each import; only
 * imports untouched for STALE_IMPORT_MS, so another gateway's import in progress is left alone.
 *
 * @example
 * await resumeAttendeeImports(store, Date.now())
 */
export async function resumeAttendeeImports(store: Store, now: number): Promise<{ dropped: number; finished: number }> {
  let dropped = 0
  let finished = 0
  for (const pending of await store.attendeeImports.pending(now - STALE_IMPORT_MS)) {
    if (pending.state === 'staging') {
      await discardImport(store, pending.id)
      dropped++
    } else {
      await applyImport(store, pending.eventId, pending.id, now, [])
      finished++
    }
  }
  return { dropped, finished }
}

/** A file's chip must be one of the event team's chips, and bound to no other guest of the event. */
async function checkChips(store: Store, event: GuestbookEventRow, importId: number): Promise<void> {
  const errors: Record<string, string> = {}
  let count = 0
  let after = 0
  for (;;) {
    const chips = await store.attendeeImports.chipsAfter(importId, after, IMPORT_CHUNK)
    if (chips.length === 0) break
    after = chips.at(-1)!.id
    for (const entry of chips) {
      const fail = (message: string) => {
        count++
        if (Object.keys(errors).length < MAX_LISTED_ERRORS) errors[`line ${entry.line}, ${entry.chipColumn}`] = message
      }
      const chip = await store.chips.get(entry.chipUid)
      if (!chip || chip.teamId !== event.teamId) {
        fail(`Chip ${entry.chipUid} is not one of this event's team's chips (register it first: tapgate import)`)
        continue
      }
      const bound = await store.attendeeChips.findByChip(event.id, entry.chipUid)
      if (!bound) continue
      const holder = await store.attendees.get(bound.attendeeId)
      if (holder && holder.ticketCode !== entry.ticketCode)
        fail(`Chip ${entry.chipUid} is bound to ${holder.name} (ticket ${holder.ticketCode}); rebind it at the door, or leave it out`)
    }
  }
  if (count > 0) throw new ValidationError(`${count} problem${count === 1 ? '' : 's'} with the file's chips; nothing was imported`, errors, 'csv_rows_invalid')
}
