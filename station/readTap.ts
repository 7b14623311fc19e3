import { ndefUrl, NdefError } from './ndefUrl.js'
import { CardRemovedError, type CardSession } from '../src/card/cardSession.js'
import { CardStatusError } from './reader.js'
import type { StationTap } from './tap.js'

export type ReadTapReturnType = Pick<StationTap, 'rfUid' | 'url' | 'chip'>
export type ReadTapErrorType = CardRemovedError | CardStatusError | NdefError

/** ISO 7816 ReadBinary chunk: 0x30 bytes, below the ~0x3B where some ACR122U firmware fails (docs/station.md). */
export const READ_CHUNK = 0x30
/** NTAG 216 user memory; a longer NDEF TLV is corrupt. */
const NTAG21X_MAX_NDEF = 888

const apdu = {
  getUid: Buffer.from('FFCA000000', 'hex'),
  selectNdefApp: Buffer.from('00A4040007D276000085010100', 'hex'),
  selectNdefFile: Buffer.from('00A4000C02E104', 'hex'),
  readBinary: (offset: number, length: number) => Buffer.from([0x00, 0xb0, offset >> 8, offset & 0xff, length]),
  readPages: (page: number) => Buffer.from([0xff, 0xb0, 0x00, page, 0x10]),
}

/**
 * Which command set a card speaks, from its PC/SC ATR (PC/SC part 3 §3.1.3.2.3).
 * A storage card (NTAG 21x, MIFARE Ultralight…) gets a synthesized ATR
 * `3B 8F 80 01 80 4F 0C A0 00 00 03 06 <SS> <NN NN> …`: 0x4F announces the
 * PC/SC RID A0 00 00 03 06. Every other ATR (`3B 8n 80 01 <ATS historical bytes>`,
 * e.g. 3B8180018080 for an NTAG 424 DNA) is ISO-DEP, read through the NDEF
 * application; a card that is neither answers that SELECT with an error
 * status, which names the step.
 *
 * @example
 * cardKind('3B8F8001804F0CA0000003060300030000000068') // 'ntag21x'
 */
export function cardKind(atr: string): StationTap['chip'] {
  return /^3B8F8001804F0CA000000306/i.test(atr) ? 'ntag21x' : 'ntag424'
}

/**
 * Reads one tap from a card on the reader: the RF UID (FF CA), then the NDEF
 * URL, over ISO-DEP for an NTAG 424 DNA or by pages for an NTAG 21x.
 *
 * Bytes come in several APDUs, and the card may leave between any two: the
 * message length (NLEN, or the TLV length) is checked against the bytes
 * actually read before anything is parsed, so a half-read card is a
 * CardRemovedError ("tap again"), never a tap with a cut URL.
 *
 * @throws CardRemovedError when the card left (a transmit failure or a short answer once it started answering)
 * @throws CardStatusError when an APDU is answered with a status other than 90 00
 * @throws NdefError when the chip holds no NDEF message or no URL
 * @example
 * reader.on('card', async (card) => console.log(await readTap(card)))
 */
export async function readTap(card: CardSession): Promise<ReadTapReturnType> {
  // A first command that fails is passed on as it is (the reader may be at fault); once the card answered, a failure is a removal.
  const uidBytes = await send(card, apdu.getUid, 'get UID', { started: false })
  if (![4, 7, 10].includes(uidBytes.length)) throw new Error(`the reader answered FF CA with a ${uidBytes.length}-byte UID`)
  const rfUid = uidBytes.toString('hex').toUpperCase()
  const chip = cardKind(card.atr)
  const message = chip === 'ntag424' ? await readIsoDep(card) : await readType2(card)
  return { rfUid, url: ndefUrl(message), chip }
}

/** NFC Forum Type 4 tag: NDEF application, NDEF file E104, NLEN, then the message in READ_CHUNK slices. */
async function readIsoDep(card: CardSession): Promise<Buffer> {
  await send(card, apdu.selectNdefApp, 'select NDEF application')
  await send(card, apdu.selectNdefFile, 'select NDEF file')
  const nlenBytes = await readBinary(card, 0, 2)
  const nlen = nlenBytes.readUInt16BE(0)
  if (nlen === 0) throw new NdefError('the chip holds no NDEF message (NLEN is 0)')
  const chunks: Buffer[] = []
  for (let offset = 0; offset < nlen; offset += READ_CHUNK) chunks.push(await readBinary(card, 2 + offset, Math.min(READ_CHUNK, nlen - offset)))
  const message = Buffer.concat(chunks)
  if (message.length !== nlen) throw removed(`read ${message.length} of the ${nlen} bytes NLEN announced`)
  return message
}

async function readBinary(card: CardSession, offset: number, length: number): Promise<Buffer> {
  const data = await send(card, apdu.readBinary(offset, length), `read NDEF file at ${offset}`)
  if (data.length < length) throw removed(`ReadBinary at ${offset} answered ${data.length} of ${length} bytes`)
  return data.subarray(0, length)
}

/**
 * NFC Forum Type 2 tag: 16 bytes (4 pages) per FF B0 from page 4, TLVs until
 * the NDEF Message TLV (03), whose bytes are read to the end before parsing.
 */
async function readType2(card: CardSession): Promise<Buffer> {
  let data = Buffer.alloc(0)
  let page = 4
  /** Makes sure `data` holds at least `n` bytes. */
  const need = async (n: number) => {
    while (data.length < n) {
      const answer = await send(card, apdu.readPages(page), `read page ${page}`)
      if (answer.length < 16) throw removed(`page read at ${page} answered ${answer.length} of 16 bytes`)
      data = Buffer.concat([data, answer.subarray(0, 16)])
      page += 4
    }
  }
  let at = 0
  for (;;) {
    await need(at + 1)
    const type = data[at]!
    if (type === 0x00) {
      at += 1 // NULL TLV
      continue
    }
    if (type === 0xfe) throw new NdefError('the chip holds no NDEF message (terminator TLV first)')
    await need(at + 2)
    let length = data[at + 1]!
    let header = 2
    if (length === 0xff) {
      await need(at + 4)
      length = data.readUInt16BE(at + 2)
      header = 4
    }
    if (type === 0x03) {
      if (length === 0) throw new NdefError('the chip holds no NDEF message (empty NDEF TLV)')
      if (length > NTAG21X_MAX_NDEF) throw new NdefError(`the NDEF TLV announces ${length} bytes, more than an NTAG 21x holds`)
      await need(at + header + length)
      return data.subarray(at + header, at + header + length)
    }
    at += header + length // Lock Control, Memory Control, proprietary TLVs
    if (at > NTAG21X_MAX_NDEF) throw new NdefError('no NDEF Message TLV in the NTAG 21x user memory')
  }
}

/** One APDU: the data of a 90 00 answer; any other status is a CardStatusError naming the step. */
async function send(card: CardSession, command: Buffer, step: string, { started = true } = {}): Promise<Buffer> {
  let response: Buffer
  try {
    response = await card.transmit(command)
  } catch (error) {
    if (error instanceof CardRemovedError || !started) throw error
    throw removed(`${step}: ${(error as Error).message}`, error)
  }
  if (response.length < 2) throw removed(`${step} answered ${response.length} byte(s), no status word`)
  const sw = response.subarray(-2).toString('hex').toUpperCase()
  if (sw !== '9000') throw new CardStatusError(step, sw)
  return response.subarray(0, -2)
}

function removed(why: string, cause?: unknown): CardRemovedError {
  const error = new CardRemovedError()
  // The message stays the one a user should see; how the read broke is for logs.
  error.cause = new Error(why, cause === undefined ? undefined : { cause })
  return error
}
