import { CsvError, parse } from 'csv-parse/sync'
import { BaseError, ValidationError } from '../errors.js'

/**
 * The largest guest list file read: 50 MiB is 2 million short rows or about 250,000 rows of a wide
 * pretix export, far past a conference's list. Read as a stream and staged in the database, so the
 * bound is what an import may take from the disk and the door's time, not what fits in memory.
 */
export const MAX_CSV_BYTES = 50 * 1024 * 1024

/** The most guests (data rows) a file may hold: the 2 million short rows a 50 MiB file can carry, 8× the README's 250,000. */
export const MAX_ROWS = 2_000_000

/** The longest field: five times the longest one kept (a note, 2,000), room for a tool's long answers to its own questions. */
export const MAX_FIELD_CHARS = 10_000

// A single record over 64 KiB is no guest; a file of garbage without line breaks stops here, not at 50 MB of cells.
export const MAX_RECORD_BYTES = 64 * 1024
export const MAX_COLUMNS = 1000

/** One record past the header: its cells as read, and the file line it starts on (1 = the header). */
export type CsvRow = { line: number; cells: string[] }

export type CsvTable = { header: string[]; rows: CsvRow[]; delimiter: Delimiter }

export type Delimiter = ',' | ';' | '\t'

/** 413: the guest list file is larger than MAX_CSV_BYTES (streamed: refused once that much has arrived). */
export class CsvTooLargeError extends BaseError {
  override name = 'CsvTooLargeError'
  constructor(bytes: number, streamed = false) {
    super(
      413,
      'csv_too_large',
      streamed
        ? `The file is larger than ${MAX_CSV_BYTES / 1024 / 1024} MB, the most a guest list may be; nothing was imported`
        : `The file is ${(bytes / 1024 / 1024).toFixed(1)} MB; a guest list may be at most ${MAX_CSV_BYTES / 1024 / 1024} MB`,
    )
  }
}

/**
 * 413: a row longer than MAX_RECORD_BYTES (`csv_row_too_large`), a field longer than MAX_FIELD_CHARS
 * (`csv_field_too_large`), more than MAX_ROWS guests (`csv_too_many_rows`). Thrown at that row, before
 * the rest of the file is read; `errors` names the line.
 */
export class CsvLimitError extends BaseError {
  override name = 'CsvLimitError'
  constructor(code: 'csv_row_too_large' | 'csv_field_too_large' | 'csv_too_many_rows', line: number, problem: string) {
    super(413, code, `Line ${line}: ${problem}; nothing was imported`, { errors: { [`line ${line}`]: problem } })
  }
}

/** 400 `csv_unreadable`: not UTF-8 text, or not CSV (an unclosed quote). */
export const unreadable = (message: string, errors: Record<string, string> = {}) => new ValidationError(message, errors, 'csv_unreadable')

/**
 * The bounds of one record (the header: count 0): each field at most MAX_FIELD_CHARS, at most MAX_ROWS rows.
 *
 * @throws CsvLimitError
 */
export function checkRecord(record: readonly string[], header: readonly string[], line: number, count: number): void {
  if (count > MAX_ROWS) throw new CsvLimitError('csv_too_many_rows', line, `more than ${MAX_ROWS.toLocaleString('en')} guests; split the list`)
  for (let i = 0; i < record.length; i++) {
    if (record[i]!.length > MAX_FIELD_CHARS)
      throw new CsvLimitError(
        'csv_field_too_large',
        line,
        `the field in column ${header[i] ? `"${header[i]}"` : i + 1} is ${record[i]!.length.toLocaleString('en')} characters long; at most ${MAX_FIELD_CHARS.toLocaleString('en')}`,
      )
  }
}

/** csv-parse's error at a line as ours: a row past MAX_RECORD_BYTES is a 413, anything else not CSV. */
export function csvProblemError(error: CsvError, line: number): BaseError {
  if (error.code === 'CSV_MAX_RECORD_SIZE') return new CsvLimitError('csv_row_too_large', line, `a row longer than ${MAX_RECORD_BYTES / 1024} KB`)
  return unreadable(`The file is not a readable CSV (line ${line}): ${csvProblem(error)}`, { [`line ${line}`]: csvProblem(error) })
}

/**
 * Reads a guest list export: UTF-8 with or without a BOM, comma, semicolon or tab between fields
 * (from the header line), quoted fields with line breaks. Every data row must have the header's
 * number of cells (an empty trailing line is skipped).
 *
 * @throws CsvTooLargeError over MAX_CSV_BYTES
 * @throws ValidationError `csv_unreadable` for anything that is not CSV text, naming the line
 * @example
 * const { header, rows } = readCsv(fs.readFileSync('pretix.csv'))
 */
export function readCsv(input: Uint8Array | string): CsvTable {
  const text = typeof input === 'string' ? checkedText(input) : csvText(input)
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  if (body.trim() === '') throw unreadable('The file is empty: a guest list needs a header row and at least one guest')
  const delimiter = detectDelimiter(body)
  const bytes = Buffer.from(body)
  const lines = lineIndex(bytes)
  let records: { record: string[]; info: { bytes: number } }[]
  try {
    records = parse(bytes, {
      delimiter,
      info: true,
      relax_column_count: true,
      skip_empty_lines: true,
      max_record_size: MAX_RECORD_BYTES,
    }) as unknown as { record: string[]; info: { bytes: number } }[]
  } catch (error) {
    if (error instanceof CsvError) throw csvProblemError(error, lines.at(typeof error.bytes === 'number' ? error.bytes : 0))
    throw error
  }
  const [first, ...rest] = records
  if (!first) throw unreadable('The file is empty: a guest list needs a header row and at least one guest')
  const header = first.record.map((cell) => cell.trim())
  if (header.length > MAX_COLUMNS) throw unreadable(`The header row has ${header.length} columns; at most ${MAX_COLUMNS} are read`)
  checkRecord(header, header, 1, 0)
  const errors: Record<string, string> = {}
  const rows: CsvRow[] = []
  // csv-parse tells where a record ends (its byte offset); it starts where the last one ended, past empty lines.
  let start = first.info.bytes
  for (const { record, info } of rest) {
    while (bytes[start] === 0x0a || bytes[start] === 0x0d) start++
    const line = lines.at(start)
    start = info.bytes
    checkRecord(record, header, line, rows.length + 1)
    if (record.length !== header.length && Object.keys(errors).length < MAX_LISTED_ERRORS)
      errors[`line ${line}`] = `${record.length} fields where the header has ${header.length}`
    rows.push({ line, cells: record })
  }
  if (Object.keys(errors).length > 0) throw unreadable(`Rows do not match the header's ${header.length} columns`, errors)
  return { header, rows, delimiter }
}

/** How many problems an error lists: enough to fix a file, not a 50 MB answer for a file of garbage. */
export const MAX_LISTED_ERRORS = 50

/**
 * A file's bytes as text: at most MAX_CSV_BYTES, UTF-8 (a wrong byte is an error, never a U+FFFD
 * in a guest's name), no NUL.
 *
 * @throws CsvTooLargeError, ValidationError `csv_unreadable`
 */
export function csvText(bytes: Uint8Array): string {
  if (bytes.byteLength > MAX_CSV_BYTES) throw new CsvTooLargeError(bytes.byteLength)
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw unreadable('The file is not UTF-8 text: export it again as CSV (UTF-8), e.g. Excel\'s "CSV UTF-8"')
  }
  return checkedText(text)
}

function checkedText(text: string): string {
  // A string's length is at most its UTF-8 size: the cheap bound first, the exact one only near the limit.
  if (text.length > MAX_CSV_BYTES / 4 && Buffer.byteLength(text) > MAX_CSV_BYTES) throw new CsvTooLargeError(Buffer.byteLength(text))
  const nul = text.indexOf('\0')
  if (nul !== -1) throw unreadable(`The file is not text: it holds a NUL byte (line ${text.slice(0, nul).split(/\r\n|\r|\n/).length})`)
  return text
}

/** The delimiter of the header line: the one of `,` `;` tab found most often outside quotes (`,` when none). */
export function detectDelimiter(text: string): Delimiter {
  const counts = { ',': 0, ';': 0, '\t': 0 }
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c === '"') quoted = !quoted
    else if (!quoted && (c === '\n' || c === '\r')) break
    else if (!quoted && (c === ',' || c === ';' || c === '\t')) counts[c]++
  }
  if (counts[';'] > counts[','] && counts[';'] >= counts['\t']) return ';'
  if (counts['\t'] > counts[','] && counts['\t'] > counts[';']) return '\t'
  return ','
}

/**
 * The file line (1-based) of a byte offset, counting a line break as an editor does: CRLF, LF or CR
 * once, inside quotes too (csv-parse's own count takes a quoted CRLF for two).
 */
function lineIndex(bytes: Uint8Array): { at(offset: number): number } {
  const starts = [0]
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]
    if (b === 0x0a || (b === 0x0d && bytes[i + 1] !== 0x0a)) starts.push(i + 1)
  }
  return {
    at(offset) {
      let low = 0
      let high = starts.length - 1
      while (low < high) {
        const mid = (low + high + 1) >> 1
        if (starts[mid]! <= offset) low = mid
        else high = mid - 1
      }
      return low + 1
    },
  }
}

function csvProblem(error: CsvError): string {
  switch (error.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return 'a quoted field is never closed'
    case 'INVALID_OPENING_QUOTE':
      return 'a quote inside a field that does not start with one'
    case 'CSV_INVALID_CLOSING_QUOTE':
      return 'a quoted field is followed by more text before the delimiter'
    default:
      return error.message
  }
}
