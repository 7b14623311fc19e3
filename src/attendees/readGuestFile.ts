import readXlsxFile from 'read-excel-file/node'
import { checkRecord, CsvTooLargeError, type CsvRow, MAX_COLUMNS, MAX_CSV_BYTES, unreadable } from './readCsv.js'
import { type CsvStream, type FileEncoding, readCsvStream } from './readCsvStream.js'
import { PRETIX_POSITIONS_SHEET } from './toolHeaders.js'

/** A guest list file being read: a CSV as it streams in, or the sheet of an xlsx workbook. */
export type GuestFile = CsvStream & { fileType: 'csv' | 'xlsx'; sheet: string | null }

/**
 * What a workbook may unpack to. A workbook is parsed whole in memory (read-excel-file has no row
 * stream): 100,000 rows of Hi.Events' 14 columns unpack to 52 MB and peak at 390 MB of RSS, read in
 * 2.3 s; 200,000 rows (106 MB) at 705 MB. 64 MiB is about 120,000 such rows, far past a conference's
 * list; a bigger list is saved as CSV, which is streamed up to 2 million rows. Past this the file is
 * refused before anything is unpacked (a zip bomb stops here too).
 */
export const MAX_XLSX_UNPACKED_BYTES = 64 * 1024 * 1024

const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04]

/**
 * Reads a guest list: an .xlsx workbook (told by its zip signature, whatever the file is called) or a
 * CSV. A workbook is read whole, within MAX_CSV_BYTES, through read-excel-file; its sheet is pretix's
 * "Order positions" (in any of its languages) when there is one, else the first; each row is held to
 * the CSV's bounds (fields, rows, columns), and rows every cell of which is empty are left out, as a
 * CSV's empty lines are. Numbers come as the sheet stores them, dates as ISO 8601.
 *
 * @throws CsvTooLargeError, CsvLimitError, ValidationError `csv_unreadable` (a workbook that cannot be read)
 * @example
 * const file = await readGuestFile(csvFile('pretix.xlsx'))
 * file.fileType // 'xlsx'
 */
export async function readGuestFile(source: AsyncIterable<Uint8Array>): Promise<GuestFile> {
  const iterator = source[Symbol.asyncIterator]()
  const first = await iterator.next()
  const head = first.done ? new Uint8Array(0) : first.value
  const rest = (async function* () {
    if (!first.done) yield head
    for (;;) {
      const next = await iterator.next()
      if (next.done) return
      yield next.value
    }
  })()
  if (!ZIP_MAGIC.every((byte, i) => head[i] === byte)) return { ...(await readCsvStream(rest)), fileType: 'csv', sheet: null }
  const pieces: Uint8Array[] = []
  let total = 0
  for await (const piece of rest) {
    total += piece.byteLength
    if (total > MAX_CSV_BYTES) {
      await iterator.return?.(undefined)
      throw new CsvTooLargeError(total, true)
    }
    pieces.push(piece)
  }
  return readWorkbook(Buffer.concat(pieces))
}

async function readWorkbook(bytes: Buffer): Promise<GuestFile> {
  const unpacked = zipUnpackedSize(bytes)
  if (unpacked === null) throw unreadable('The file starts as a zip (an .xlsx) but is not a readable one: save it again as .xlsx, or as CSV (UTF-8)')
  if (unpacked > MAX_XLSX_UNPACKED_BYTES)
    throw unreadable(
      `The workbook unpacks to ${Math.round(unpacked / 1024 / 1024)} MB; an .xlsx is read up to ${MAX_XLSX_UNPACKED_BYTES / 1024 / 1024} MB unpacked (about 100,000 rows): save the guest sheet as CSV (UTF-8), which is read up to 2 million rows`,
    )
  let sheets: Awaited<ReturnType<typeof readXlsxFile<string>>>
  try {
    // Numbers as the sheet stores them: a ticket id stays "101", a long barcode keeps its digits.
    sheets = await readXlsxFile<string>(bytes, { parseNumber: (value) => value, trim: false })
  } catch (error) {
    throw unreadable(`The file is not a readable .xlsx workbook (${(error as Error).message}): save it again as .xlsx, or as CSV (UTF-8)`)
  }
  const positions = new Set(PRETIX_POSITIONS_SHEET.map((name) => name.toLowerCase()))
  const chosen = sheets.find((s) => positions.has(s.sheet.trim().toLowerCase())) ?? sheets[0]
  if (!chosen) throw unreadable('The workbook has no sheet')
  const records: { line: number; cells: string[] }[] = []
  chosen.data.forEach((row, index) => {
    const cells = row.map(cellText)
    if (cells.some((cell) => cell.trim() !== '')) records.push({ line: index + 1, cells })
  })
  const headerRecord = records.shift()
  if (!headerRecord) throw unreadable(`The sheet "${chosen.sheet}" is empty: a guest list needs a header row and at least one guest`)
  // A sheet's rows are as wide as its widest: the header's empty cells past its last name are no columns.
  let width = headerRecord.cells.length
  while (width > 0 && headerRecord.cells[width - 1]!.trim() === '') width--
  const header = headerRecord.cells.slice(0, width).map((cell) => cell.trim())
  if (header.length > MAX_COLUMNS) throw unreadable(`The header row has ${header.length} columns; at most ${MAX_COLUMNS} are read`)
  checkRecord(header, header, headerRecord.line, 0)
  let closed = false
  async function* rows(): AsyncGenerator<CsvRow> {
    let count = 0
    for (const record of records) {
      if (closed) return
      const cells = Array.from({ length: width }, (_, i) => record.cells[i] ?? '')
      const beyond = record.cells.slice(width).find((cell) => cell.trim() !== '')
      if (beyond !== undefined) throw unreadable(`Row ${record.line} of sheet "${chosen!.sheet}" has a value past the header's ${width} columns`, { [`line ${record.line}`]: `"${beyond.slice(0, 40)}" past the last column` })
      checkRecord(cells, header, record.line, ++count)
      yield { line: record.line, cells }
    }
  }
  return {
    header,
    delimiter: ',',
    rows: rows(),
    close: () => void (closed = true),
    encoding: (): FileEncoding => 'utf-8',
    fileType: 'xlsx',
    sheet: chosen.sheet,
  }
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? '' : value.toISOString()
  return String(value)
}

/**
 * The sum of a zip's entries' unpacked sizes, from its central directory (the end record is in the last
 * 64 KiB + 22 bytes); null when there is none. A Zip64 size (0xffffffff) counts as too large.
 */
function zipUnpackedSize(bytes: Buffer): number | null {
  if (bytes.length < 22) return null
  const from = Math.max(0, bytes.length - 0xffff - 22)
  let end = -1
  for (let i = bytes.length - 22; i >= from; i--) {
    if (bytes.readUInt32LE(i) === 0x06054b50) {
      end = i
      break
    }
  }
  if (end === -1) return null
  const entries = bytes.readUInt16LE(end + 10)
  let at = bytes.readUInt32LE(end + 16)
  let total = 0
  for (let n = 0; n < entries; n++) {
    if (at + 46 > bytes.length || bytes.readUInt32LE(at) !== 0x02014b50) return null
    const size = bytes.readUInt32LE(at + 24)
    total += size === 0xffffffff ? Number.POSITIVE_INFINITY : size
    at += 46 + bytes.readUInt16LE(at + 28) + bytes.readUInt16LE(at + 30) + bytes.readUInt16LE(at + 32)
  }
  return total
}
