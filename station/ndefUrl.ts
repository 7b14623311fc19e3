import { createRequire } from 'node:module'

/** What `ndef` (0.2.0, untyped CommonJS) gives back for one record. */
type NdefRecord = { tnf: number; type: string; id: number[]; payload: number[]; value?: unknown }
type NdefLibrary = { decodeMessage(bytes: Buffer): NdefRecord[] }

const ndef = createRequire(import.meta.url)('ndef') as NdefLibrary

const TNF_WELL_KNOWN = 0x01
const TNF_ABSOLUTE_URI = 0x03

/** The bytes read from a chip are not a usable NDEF message (truncated, chunked, or without a URL). */
export class NdefError extends Error {
  override name = 'NdefError'
}

/**
 * The URL of the first URI record of an NDEF message (a Smart Poster's URI
 * record counts too), exactly as the chip stores it.
 *
 * The record boundaries are checked here before `ndef` sees any byte, and
 * `ndef` decodes one record at a time. That works around two faults of
 * ndef 0.2.0: it never resets `id_length` between records (upstream PR #7),
 * so a record without an ID after one with an ID loses payload bytes to a
 * phantom ID; and it decodes a truncated message into garbage without a word.
 *
 * @throws NdefError when the message is truncated, uses chunked records, or has no URI
 * @example
 * ndefUrl(Buffer.from('D1010F5504746170...', 'hex')) // 'https://tap…'
 */
export function ndefUrl(message: Buffer): string {
  const url = urlOf(message, 'NDEF message')
  if (url === null) throw new NdefError('the NDEF message has no URI record')
  return url
}

function urlOf(message: Buffer, what: string): string | null {
  for (const bytes of splitRecords(message, what)) {
    // One record per call: ndef's id_length starts at 0 again.
    const record = ndef.decodeMessage(bytes)[0]
    if (!record) continue
    if (record.tnf === TNF_WELL_KNOWN && record.type === 'U' && typeof record.value === 'string') return record.value
    if (record.tnf === TNF_ABSOLUTE_URI) return record.type
    if (record.tnf === TNF_WELL_KNOWN && record.type === 'Sp') {
      const inner = urlOf(Buffer.from(record.payload), 'Smart Poster')
      if (inner !== null) return inner
    }
  }
  return null
}

/**
 * Cuts a message into its records (NFC Forum NDEF 1.0 §3.2), checking each
 * fits in the bytes given and the last one carries the ME flag.
 */
function splitRecords(message: Buffer, what: string): Buffer[] {
  const records: Buffer[] = []
  let at = 0
  for (;;) {
    const n = records.length + 1
    if (at >= message.length) throw new NdefError(`truncated ${what}: it ends after ${records.length} record(s) without a last record`)
    const flags = message[at]!
    const short = (flags & 0x10) !== 0
    const hasId = (flags & 0x08) !== 0
    const headerLength = 2 + (short ? 1 : 4) + (hasId ? 1 : 0)
    if (at + headerLength > message.length) throw new NdefError(`truncated ${what}: the header of record ${n} is cut off`)
    if ((flags & 0x20) !== 0) throw new NdefError(`${what} record ${n} is chunked, which is not supported`)
    const typeLength = message[at + 1]!
    const payloadLength = short ? message[at + 2]! : message.readUInt32BE(at + 2)
    const idLength = hasId ? message[at + headerLength - 1]! : 0
    const end = at + headerLength + typeLength + idLength + payloadLength
    if (end > message.length)
      throw new NdefError(`truncated ${what}: record ${n} needs ${end - at} bytes but only ${message.length - at} were read`)
    records.push(message.subarray(at, end))
    at = end
    if ((flags & 0x40) !== 0) return records
  }
}
