import { CsvError, parse } from 'csv-parse'
import fs from 'node:fs'
import { Readable } from 'node:stream'
import {
  checkRecord,
  CsvTooLargeError,
  csvProblemError,
  type CsvRow,
  type Delimiter,
  detectDelimiter,
  MAX_COLUMNS,
  MAX_CSV_BYTES,
  MAX_LISTED_ERRORS,
  MAX_RECORD_BYTES,
  unreadable,
} from './readCsv.js'

/**
 * A guest list file being read: its header, and its rows as they are parsed. Reading the rows to their
 * end (or stopping a `for await` over them) releases the source; `close` does it for a caller that
 * stops before it reads any row.
 */
export type CsvStream = {
  header: string[]
  delimiter: Delimiter
  rows: AsyncGenerator<CsvRow>
  close: () => void
  /** How the text was read: known once the rows are read to their end (a Windows-1252 byte may come late). */
  encoding(): FileEncoding
}

/**
 * UTF-8, or Windows-1252: what Excel on Windows writes as plain "CSV" (the system's ANSI code page in
 * western Europe and the Americas), where an umlaut is one byte that is no UTF-8.
 */
export type FileEncoding = 'utf-8' | 'windows-1252'

/** The pieces a file arrives in when it is held in memory (a test, a small upload): as a socket would give them. */
const PIECE = 64 * 1024

/**
 * A file on disk, opened when it is first read: an import refused before it reads (a bad --map) leaves
 * no file open, and one that stops early closes it.
 */
export async function* csvFile(file: string): AsyncGenerator<Uint8Array> {
  yield* fs.createReadStream(file) as AsyncIterable<Buffer>
}

/** A file in memory as pieces, or a stream as it is. */
export function csvSource(input: Uint8Array | string | AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  if (typeof input !== 'string' && !(input instanceof Uint8Array)) return input
  const bytes = typeof input === 'string' ? Buffer.from(input) : input
  return (async function* () {
    for (let at = 0; at < bytes.byteLength; at += PIECE) yield bytes.subarray(at, at + PIECE)
  })()
}

/**
 * Reads a guest list file as it arrives, as readCsv reads one in memory (UTF-8 with or without a BOM,
 * or Windows-1252 as checkedBytes tells it, the delimiter of the header line, quoted fields with line breaks, every row the header's number of
 * cells), holding only what csv-parse has not handed out yet: a 50 MB upload is never a 50 MB string.
 * The bounds stop a file at the row that breaks them, before the rest is read.
 *
 * @throws CsvTooLargeError past MAX_CSV_BYTES; CsvLimitError for a row, a field or a row count past its bound
 * @throws ValidationError `csv_unreadable` for anything that is not CSV text, naming the line
 * @example
 * const csv = await readCsvStream(fs.createReadStream('pretix.csv'))
 * for await (const row of csv.rows) console.log(row.line, row.cells)
 */
export async function readCsvStream(source: AsyncIterable<Uint8Array>): Promise<CsvStream> {
  const lines = createLineTracker()
  const read = { encoding: 'utf-8' as FileEncoding }
  const input = checkedBytes(source, lines, read)[Symbol.asyncIterator]()
  // Ends the source (a file stream closes its file) when the reading stops early.
  const release = () => void input.return?.(undefined).catch(() => {})
  // The header line first, whole: its delimiter is the parser's.
  const held: Uint8Array[] = []
  let heldBytes = 0
  let prefix = ''
  const prefixDecoder = new TextDecoder('utf-8')
  try {
    for (;;) {
      const next = await input.next()
      if (next.done) break
      held.push(next.value)
      heldBytes += next.value.byteLength
      prefix += prefixDecoder.decode(next.value, { stream: true })
      if (headerEnds(prefix)) break
      if (heldBytes > MAX_RECORD_BYTES) break
    }
    if (prefix.trim() === '') throw unreadable('The file is empty: a guest list needs a header row and at least one guest')
  } catch (error) {
    release()
    throw error
  }
  const delimiter = detectDelimiter(prefix)
  const parser = parse({ delimiter, info: true, relax_column_count: true, skip_empty_lines: true, max_record_size: MAX_RECORD_BYTES })
  const fed = Readable.from(
    (async function* () {
      try {
        yield* held
        held.length = 0
        for (;;) {
          const next = await input.next()
          if (next.done) return
          yield next.value
        }
      } finally {
        release()
      }
    })(),
    { objectMode: false },
  )
  fed.on('error', (error) => parser.destroy(error))
  fed.pipe(parser)
  const records = parser[Symbol.asyncIterator]() as AsyncIterator<{ record: string[]; info: { bytes: number } }>

  const nextRecord = async () => {
    try {
      return await records.next()
    } catch (error) {
      if (error instanceof CsvError) throw csvProblemError(error, lines.lineAt(typeof error.bytes === 'number' ? error.bytes : 0))
      throw error
    }
  }
  const close = () => {
    if (!parser.destroyed) parser.destroy()
    if (!fed.destroyed) fed.destroy()
    release()
  }
  let first: IteratorResult<{ record: string[]; info: { bytes: number } }>
  let header: string[]
  try {
    first = await nextRecord()
    if (first.done) throw unreadable('The file is empty: a guest list needs a header row and at least one guest')
    header = first.value.record.map((cell) => cell.trim())
    if (header.length > MAX_COLUMNS) throw unreadable(`The header row has ${header.length} columns; at most ${MAX_COLUMNS} are read`)
    checkRecord(header, header, 1, 0)
  } catch (error) {
    close()
    throw error
  }

  async function* rows(): AsyncGenerator<CsvRow> {
    const errors: Record<string, string> = {}
    let mismatched = 0
    let count = 0
    let end = (first.value as { info: { bytes: number } }).info.bytes
    try {
      for (;;) {
        const next = await nextRecord()
        if (next.done) break
        const { record, info } = next.value
        const line = lines.recordLine(end)
        end = info.bytes
        checkRecord(record, header, line, ++count)
        if (record.length !== header.length) {
          if (mismatched++ < MAX_LISTED_ERRORS) errors[`line ${line}`] = `${record.length} fields where the header has ${header.length}`
          continue
        }
        yield { line, cells: record }
      }
    } finally {
      // Stopped early (an error, a bound): the rest of the file is not read.
      close()
    }
    if (mismatched > 0) throw unreadable(`Rows do not match the header's ${header.length} columns`, errors)
  }
  return { header, delimiter, rows: rows(), close, encoding: () => read.encoding }
}

/** Whether the text holds a whole first line: a line break outside quotes. */
function headerEnds(text: string): boolean {
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === '"') quoted = !quoted
    else if (!quoted && (c === '\n' || c === '\r')) return true
  }
  return false
}

/**
 * The bytes as they come, checked on the way: the size bound, UTF-8 (a wrong byte is an error, never a
 * U+FFFD), no NUL, a BOM dropped. A file whose first byte that is no UTF-8 comes before any other
 * non-ASCII byte is Windows-1252 (Excel's plain "CSV"): from there on it is handed on as UTF-8 (the
 * ASCII before reads the same in both). A file that mixes valid UTF-8 with such bytes is refused.
 */
async function* checkedBytes(source: AsyncIterable<Uint8Array>, lines: LineTracker, read: { encoding: FileEncoding }): AsyncGenerator<Uint8Array> {
  const decoder = new TextDecoder('utf-8', { fatal: true })
  let total = 0
  let start = true
  let asciiSoFar = true
  const notText = () =>
    unreadable('The file is neither UTF-8 nor Windows-1252 text: export it again as CSV (UTF-8), e.g. Excel\'s "CSV UTF-8"')
  const decode = (chunk?: Uint8Array): boolean => {
    try {
      decoder.decode(chunk, { stream: chunk !== undefined })
      return true
    } catch {
      if (!asciiSoFar || chunk === undefined || startsUtf8(chunk)) throw notText()
      return false
    }
  }
  for await (const piece of source) {
    let chunk = piece
    total += chunk.byteLength
    if (total > MAX_CSV_BYTES) throw new CsvTooLargeError(total, true)
    if (start && chunk.byteLength > 0) {
      start = false
      if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) chunk = chunk.subarray(3)
    }
    if (read.encoding === 'utf-8' && !decode(chunk)) read.encoding = 'windows-1252'
    if (read.encoding === 'windows-1252') chunk = Buffer.from(windows1252(chunk), 'utf8')
    else if (asciiSoFar && chunk.some((b) => b >= 0x80)) asciiSoFar = false
    lines.feed(chunk)
    const nul = chunk.indexOf(0)
    if (nul !== -1) throw unreadable(`The file is not text: it holds a NUL byte (line ${lines.lineAt(lines.offset - chunk.byteLength + nul)})`)
    yield chunk
  }
  if (read.encoding === 'utf-8') decode()
  lines.end()
}

/*
 * Windows-1252's 0x80-0x9F (the WHATWG Encoding table; its five unassigned bytes stay the C1 code point).
 * Node 20's TextDecoder('windows-1252') decodes these as Latin-1 control characters: an en dash or a
 * curly quote would arrive as U+0096 or U+0093.
 */
const CP1252_HIGH = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
]
const CP1252 = Array.from({ length: 256 }, (_, b) => String.fromCharCode(b >= 0x80 && b < 0xa0 ? CP1252_HIGH[b - 0x80]! : b))

/** Windows-1252 bytes as text: one character a byte. */
function windows1252(bytes: Uint8Array): string {
  let text = ''
  for (let i = 0; i < bytes.length; i += 8192) text += Array.from(bytes.subarray(i, i + 8192), (b) => CP1252[b]).join('')
  return text
}

/** Whether the first non-ASCII byte of `chunk` starts a whole UTF-8 character (then the file is UTF-8 that breaks later). */
function startsUtf8(chunk: Uint8Array): boolean {
  const first = chunk.findIndex((b) => b >= 0x80)
  const lead = chunk[first]!
  const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1
  if (first + size > chunk.length) return false
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(chunk.subarray(first, first + size))
    return true
  } catch {
    return false
  }
}

type LineTracker = ReturnType<typeof createLineTracker>

/**
 * File lines (1-based) of byte offsets as the bytes stream past, counting a line break as an editor
 * does (CRLF, LF or CR once, inside quotes too): csv-parse says where a record ends in bytes, and an
 * error names the line. Keeps only the line starts the parser has not passed yet.
 */
function createLineTracker() {
  let starts: number[] = [0]
  // Whether the line at each start is empty (skipped by the parser); undefined until its first byte is seen.
  let empty: (boolean | undefined)[] = [undefined]
  let head = 0
  let firstLine = 1
  let offset = 0
  let pendingCr = -1
  const push = (at: number) => {
    starts.push(at)
    empty.push(undefined)
  }
  return {
    get offset() {
      return offset
    },
    feed(chunk: Uint8Array) {
      for (let i = 0; i < chunk.length; i++) {
        const b = chunk[i]!
        const at = offset + i
        if (pendingCr !== -1) {
          if (b !== 0x0a) push(pendingCr)
          pendingCr = -1
        }
        const last = starts.length - 1
        if (starts[last] === at && empty[last] === undefined) empty[last] = b === 0x0a || b === 0x0d
        if (b === 0x0a) push(at + 1)
        else if (b === 0x0d) pendingCr = at + 1
      }
      offset += chunk.length
    },
    end() {
      if (pendingCr !== -1) push(pendingCr)
      pendingCr = -1
    },
    /** The line a record starts on: the first line not empty at or after `end`, where the record before it ended. */
    recordLine(end: number): number {
      while (head + 1 < starts.length && starts[head]! < end) head++
      while (head + 1 < starts.length && empty[head] === true) head++
      const line = firstLine + head
      if (head > 65_536) {
        starts = starts.slice(head)
        empty = empty.slice(head)
        firstLine += head
        head = 0
      }
      return line
    },
    /** The line holding byte `at` (at or after the last record's start). */
    lineAt(at: number): number {
      let i = head
      while (i + 1 < starts.length && starts[i + 1]! <= at) i++
      return firstLine + i
    },
  }
}
