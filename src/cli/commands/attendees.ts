import fs from 'node:fs'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { attendeesDownload, type ExportFormat } from '../../attendees/exportAttendees.js'
import { importAttendees, type ImportAttendeesReport } from '../../attendees/importAttendees.js'
import { CsvTooLargeError, MAX_CSV_BYTES } from '../../attendees/readCsv.js'
import { csvFile } from '../../attendees/readCsvStream.js'
import { ValidationError } from '../../errors.js'
import { UsageError, type Flags } from '../usage.js'
import { noPositionals, onePositional, printJson, required, text, withStore } from './context.js'

function eventIdOf(flags: Flags): number {
  const raw = required(flags, 'event')
  if (!/^[1-9]\d{0,15}$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw new UsageError('--event takes an event id (a positive integer)')
  return Number(raw)
}

function formatOf(flags: Flags): ExportFormat {
  const raw = text(flags, 'format') ?? 'csv'
  if (raw !== 'csv' && raw !== 'json') throw new UsageError('--format takes csv or json')
  return raw
}

/** The file as a stream, its size checked before it is opened: a 2 GB file is refused, not read. */
function readGuestList(file: string): AsyncIterable<Uint8Array> {
  let size: number
  try {
    size = fs.statSync(file).size
  } catch (error) {
    throw new ValidationError(`Cannot read ${file}`, { [file]: (error as Error).message })
  }
  if (size > MAX_CSV_BYTES) throw new CsvTooLargeError(size)
  return csvFile(file)
}

/**
 * The --out file, created new with mode 0600 (a guest list holds names and emails): an existing path
 * is refused, a symbolic link too, dangling or not (O_EXCL never follows one), as `--record` does.
 */
function createOut(file: string): number {
  try {
    return fs.openSync(file, 'wx', 0o600)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') throw new UsageError(`--out: ${file} already exists; give a new file name (an export never writes over a file, nor through a link)`)
    throw new UsageError(`--out: cannot create ${file} (${code ?? (error as Error).message})`)
  }
}

function summary(file: string, r: ImportAttendeesReport): string[] {
  return [
    `${file}: ${r.formatLabel}, ${r.imported} guest${r.imported === 1 ? '' : 's'} imported into event ${r.eventId} (${r.inserted} new, ${r.updated} updated), ${r.chipsBound} chip${r.chipsBound === 1 ? '' : 's'} bound`,
    ...(r.sheet === null ? [] : [`  read sheet "${r.sheet}" of the workbook`]),
    ...(r.encoding === 'windows-1252' ? ['  read as Windows-1252 (Excel\'s plain "CSV"): the file is not UTF-8'] : []),
    ...r.skipped.map((s) => `  skipped line ${s.line} (${s.ticketCode || 'no ticket code'}): ${s.reason}`),
    ...r.warnings.map((w) => `  warning line ${w.line}, ${w.column}: ${w.message}`),
    ...(r.unpaid === 0
      ? []
      : [`  ${r.unpaid} not paid (the tool says the order waits for payment): the door refuses ${r.unpaid === 1 ? 'this guest' : 'them'} "not paid" unless tapgate event set --admit-unpaid yes`]),
    ...(r.nameless === 0
      ? []
      : [`  ${r.nameless} without a name (a ticket nobody has named yet): flagged for staff, who see ${r.nameless === 1 ? 'it' : 'them'} as "ticket type · ticket code"`]),
    'Guests already on the list and not in this file stay, with their check-ins.',
  ]
}

/**
 * `tapgate attendees import --event ID [--map name=COL,…] FILE.csv|FILE.xlsx`: a guest list into an event (all
 * of it, or nothing when a row is bad). `tapgate attendees export --event ID [--format csv|json]
 * [--out FILE]`: the list with what happened at the door.
 */
export async function run(positionals: string[], flags: Flags) {
  const action = positionals[0]
  if (action === 'import') {
    const file = onePositional(positionals.slice(1), 'guest list file (CSV or .xlsx)')
    const eventId = eventIdOf(flags)
    const input = readGuestList(file)
    await withStore(flags, async (store) => {
      const report = await importAttendees(store, { eventId, input, map: text(flags, 'map'), now: Date.now() })
      if (flags.json) printJson(report)
      else console.log(summary(file, report).join('\n'))
    })
    return
  }
  if (action === 'export') {
    noPositionals(positionals.slice(1))
    const eventId = eventIdOf(flags)
    const format = formatOf(flags)
    const out = text(flags, 'out')
    await withStore(flags, async (store) => {
      // The event is checked before the file is created: a wrong --event leaves no empty file behind.
      const { body } = await attendeesDownload(store, { eventId, now: Date.now() }, format)
      if (out === undefined) {
        await pipeline(Readable.from(body), process.stdout, { end: false })
        return
      }
      const fd = createOut(out)
      try {
        await pipeline(Readable.from(body), fs.createWriteStream('', { fd }))
      } catch (error) {
        // Half an export is no export: the file goes, the error stays.
        fs.rmSync(out, { force: true })
        throw error
      }
    })
    return
  }
  throw new UsageError(action === undefined ? 'attendees needs import or export' : `unknown attendees action "${action}"`)
}
