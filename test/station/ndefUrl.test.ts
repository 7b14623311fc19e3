import { createRequire } from 'node:module'
import { describe, expect, test } from 'vitest'
import { NdefError, ndefUrl } from '../../station/ndefUrl.js'

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex')
const ascii = (s: string) => Buffer.from(s, 'latin1').toString('hex')

// The NDEF file of AN12196's SUN example (NTAG 424 DNA), NLEN stripped: one short URI record, prefix 04 = "https://".
const AN12196_URL = 'https://choose.url.com/ntag424?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086'
const AN12196_MESSAGE = hex(
  'D1014D550463686F6F73652E75726C2E636F6D2F6E7461673432343F653D454639363346463738323836353841353939463330343135313036373145383826633D39344545443945453635333337303836',
)

/** A short well-known record: flags, type length, payload length, [id length], type, [id], payload. */
function record(flags: number, type: string, payload: string, id?: string): string {
  const head = [flags, type.length, payload.length / 2, ...(id === undefined ? [] : [id.length])]
  return Buffer.from(head).toString('hex') + ascii(type) + (id === undefined ? '' : ascii(id)) + payload
}
const MB = 0x80
const ME = 0x40
const SR = 0x10
const IL = 0x08
const WELL_KNOWN = 0x01

const catchError = (f: () => unknown): Error => {
  try {
    f()
  } catch (error) {
    return error as Error
  }
  throw new Error('expected an error')
}

describe('ndefUrl', () => {
  test("reads AN12196's SUN URL (short record, https:// prefix code)", () => {
    expect(ndefUrl(AN12196_MESSAGE)).toBe(AN12196_URL)
  })

  test('reads a long record (4-byte payload length) and a URL with no prefix code', () => {
    const payload = '00' + ascii('https://tap.example.com/t?x=' + 'A'.repeat(300))
    const message = hex('C101' + (payload.length / 2).toString(16).padStart(8, '0') + '55' + payload)
    expect(ndefUrl(message)).toBe('https://tap.example.com/t?x=' + 'A'.repeat(300))
  })

  test('works around the ndef id_length bug: a record with an ID, then a URI record without one', () => {
    const message = hex(
      record(MB | SR | IL | WELL_KNOWN, 'T', '02656E6869', '1') + // Text "hi" (lang en), ID "1"
        record(ME | SR | WELL_KNOWN, 'U', '04' + ascii('example.com/t')), // no ID
    )
    expect(ndefUrl(message)).toBe('https://example.com/t')
    // ndef 0.2.0 itself carries the 1-byte ID length over and eats the prefix code (upstream PR #7).
    // When this starts to fail, ndef is fixed and the per-record decoding in ndefUrl can go.
    const ndef = createRequire(import.meta.url)('ndef') as { decodeMessage(b: Buffer): { value?: unknown }[] }
    expect(ndef.decodeMessage(message)[1]!.value).toBe('xample.com/t')
  })

  test('skips records that are not URIs and finds the URI in a Smart Poster', () => {
    const inner = record(MB | SR | WELL_KNOWN, 'T', '02656E6869') + record(ME | SR | WELL_KNOWN, 'U', '03' + ascii('example.org/sp'))
    const message = hex(record(MB | SR | WELL_KNOWN, 'T', '02656E6869') + record(ME | SR | WELL_KNOWN, 'Sp', inner))
    expect(ndefUrl(message)).toBe('http://example.org/sp')
  })

  test('an absolute-URI record (TNF 3) is its type', () => {
    expect(ndefUrl(hex(record(MB | ME | SR | 0x03, 'https://example.net/abs', '')))).toBe('https://example.net/abs')
  })

  test('a truncated message is an NdefError, not a shorter URL', () => {
    for (const cut of [1, 20, AN12196_MESSAGE.length - 1]) {
      const error = catchError(() => ndefUrl(AN12196_MESSAGE.subarray(0, cut)))
      expect(error).toBeInstanceOf(NdefError)
      expect(error.message).toMatch(/^truncated NDEF message/)
    }
    expect(catchError(() => ndefUrl(AN12196_MESSAGE.subarray(0, 50))).message).toMatchInlineSnapshot(
      `"truncated NDEF message: record 1 needs 81 bytes but only 50 were read"`,
    )
    expect(catchError(() => ndefUrl(AN12196_MESSAGE.subarray(0, 2))).message).toMatchInlineSnapshot(
      `"truncated NDEF message: the header of record 1 is cut off"`,
    )
  })

  test('a message that ends without its last record (no ME flag) is truncated', () => {
    const first = record(MB | SR | WELL_KNOWN, 'U', '04' + ascii('example.com/first'))
    expect(catchError(() => ndefUrl(hex(first))).message).toMatchInlineSnapshot(
      `"truncated NDEF message: it ends after 1 record(s) without a last record"`,
    )
    expect(catchError(() => ndefUrl(Buffer.alloc(0)))).toBeInstanceOf(NdefError)
  })

  test('no URI record, or a chunked record, is a clear NdefError', () => {
    expect(catchError(() => ndefUrl(hex(record(MB | ME | SR | WELL_KNOWN, 'T', '02656E6869')))).message).toMatchInlineSnapshot(
      `"the NDEF message has no URI record"`,
    )
    expect(catchError(() => ndefUrl(hex('D00000'))).message).toBe('the NDEF message has no URI record')
    expect(catchError(() => ndefUrl(hex(record(MB | SR | 0x20 | WELL_KNOWN, 'U', '04' + ascii('a'))))).message).toMatchInlineSnapshot(
      `"NDEF message record 1 is chunked, which is not supported"`,
    )
  })
})
