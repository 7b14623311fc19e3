import fs from 'node:fs'
import { attendeesDownload, exportAttendees, type ExportFormat } from '../../attendees/exportAttendees.js'
import { importAttendees, type ImportAttendeesReport } from '../../attendees/importAttendees.js'
import { CsvTooLargeError, MAX_CSV_BYTES } from '../../attendees/readCsv.js'
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

/** The file, its size checked before it is read: a 2 GB file is refused, not loaded. */
function readGuestList(file: string): Buffer {
  let size: number
  try {
    size = fs.statSync(file).size
  } catch (error) {
    throw new ValidationError(`Cannot read ${file}`, { [file]: (error as Error).message })
  }
  if (size > MAX_CSV_BYTES) throw new CsvTooLargeError(size)
  return fs.readFileSync(file)
}

function summary(file: string, r: ImportAttendeesReport): string[] {
  return [
    `${file}: ${r.formatLabel}, ${r.imported} guest${r.imported === 1 ? '' : 's'} imported into event ${r.eventId} (${r.inserted} new, ${r.updated} updated), ${r.chipsBound} chip${r.chipsBound === 1 ? '' : 's'} bound`,
    ...r.skipped.map((s) => `  skipped line ${s.line} (${s.ticketCode || 'no ticket code'}): ${s.reason}`),
    ...r.warnings.map((w) => `  warning line ${w.line}, ${w.column}: ${w.message}`),
    ...(r.unpaid === 0
      ? []
      : [`  ${r.unpaid} not paid (the tool says the order waits for payment): the door refuses ${r.unpaid === 1 ? 'this guest' : 'them'} "not paid" unless tapgate event set --admit-unpaid yes`]),
    'Guests already on the list and not in this file stay, with their check-ins.',
  ]
}

/**
 * `tapgate attendees import --event ID [--map name=COL,…] FILE.csv`: a guest list into an event (all
 * of it, or nothing when a row is bad). `tapgate attendees export --event ID [--format csv|json]
 * [--out FILE]`: the list with what happened at the door.
 */
export async function run(positionals: string[], flags: Flags) {
  const action = positionals[0]
  if (action === 'import') {
    const file = onePositional(positionals.slice(1), 'guest list file (CSV)')
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
      const { body } = attendeesDownload(await exportAttendees(store, { eventId, now: Date.now() }), format)
      if (out === undefined) process.stdout.write(body)
      else fs.writeFileSync(out, body)
    })
    return
  }
  throw new UsageError(action === undefined ? 'attendees needs import or export' : `unknown attendees action "${action}"`)
}
