import { spawn, type ChildProcess } from 'node:child_process'
import net from 'node:net'
import { afterEach, describe, expect, test } from 'vitest'
import { parseVpcdAddress, virtualCardSettings } from '../../src/cli/commands/virtualCard.js'
import {
  createSunVerifier,
  decryptPiccData,
  extractSunFields,
  NDEF_URI_PREFIXES,
  toHex,
  verifySunMessage,
  type SunMode,
  type SunOffsetLayout,
} from '../../src/sun/index.js'
import { readTap } from '../../station/readTap.js'
import { CardRemovedError, type CardSession } from '../../src/card/cardSession.js'
import { NTAG424_ATR, VirtualNtag424, type VirtualNtag424Options } from '../../station/virtual-card/ntag424.js'
import { createVirtualReader } from '../../station/virtual-card/virtualReader.js'
import { insertCard, VpcdUnreachableError } from '../../station/virtual-card/vpcd.js'
import { freePort } from '../helpers/freePort.js'
import { cliPath, collectOutput, exited, repoRoot, stopChild } from '../helpers/processes.js'
import { sunVectors, type SunVector } from '../helpers/sunVectors.js'

const ZERO = '00000000000000000000000000000000'
const META = '0C3B25D92B38AE443229DD59AD34B85D'
const FILE = 'B45775776CB224C75BCDE7CA3704E933'
const UID = '04996C6A926980'

const hex = (h: string) => Buffer.from(h, 'hex')
const swOf = (r: Buffer) => toHex(r.subarray(r.length - 2))
const dataOf = (r: Buffer) => r.subarray(0, r.length - 2)

const SELECT_APP = '00A4040007D276000085010100'
const SELECT_NDEF = '00A4000C02E104'
const SELECT_CC = '00A4000C02E103'

/** What a station does per tap (NFC Forum T4T): select the application and the NDEF file, read NLEN, read the message. */
async function readUrl(transmit: (apdu: Buffer) => Promise<Buffer> | Buffer): Promise<{ rfUid: string; url: string }> {
  const ask = async (apdu: string, step: string) => {
    const r = await transmit(hex(apdu))
    if (swOf(r) !== '9000') throw new Error(`${step}: ${swOf(r)}`)
    return dataOf(r)
  }
  const rfUid = toHex(await ask('FFCA000000', 'uid'))
  await ask(SELECT_APP, 'select app')
  await ask(SELECT_NDEF, 'select file')
  const nlen = (await ask('00B0000002', 'read nlen')).readUInt16BE(0)
  const message = await ask(`00B00002${nlen.toString(16).padStart(2, '0')}`, 'read message')
  return { rfUid, url: parseUriRecord(message) }
}

function parseUriRecord(message: Buffer): string {
  // One short well-known record: D1 01 <payload length> 55 <URI identifier code> <URI>.
  expect(toHex(message.subarray(0, 2))).toBe('D101')
  expect(message[3]).toBe(0x55)
  expect(message.length).toBe(4 + message[2]!)
  return NDEF_URI_PREFIXES[message[4]!]! + message.subarray(5).toString('utf8')
}

const tap = (card: VirtualNtag424) => {
  card.enterField()
  return readUrl((apdu) => card.transmit(apdu))
}

const aesCard = (o: Partial<VirtualNtag424Options> = {}) => new VirtualNtag424({ uid: UID, metaKey: META, fileKey: FILE, ...o })

describe('APDUs', () => {
  test('FF CA answers the UID (a PC/SC reader answers it itself; vpcd forwards it to the card)', () => {
    const card = aesCard()
    expect(toHex(card.transmit(hex('FFCA000000')))).toBe(`${UID}9000`)
    expect(toHex(card.transmit(hex('FFCA000007')))).toBe(`${UID}9000`)
    expect(toHex(card.transmit(hex('FFCA000004')))).toBe('6C07')
    expect(toHex(card.transmit(hex('FFCA010000')))).toBe('6A81')
    expect(toHex(card.transmit(hex('FFB0000010')))).toBe('6D00')
  })

  test('the T4T read: SELECT application, SELECT E104, READ BINARY; CC file E103', () => {
    const card = aesCard({ url: 'https://example.com/t?e={picc}&c={mac}' })
    expect(swOf(card.transmit(hex('00B0000002')))).toBe('6985') // no file selected
    expect(swOf(card.transmit(hex(SELECT_NDEF)))).toBe('6A82') // application not selected
    expect(swOf(card.transmit(hex('00A4040007D276000085010200')))).toBe('6A82') // another AID
    expect(swOf(card.transmit(hex(SELECT_APP)))).toBe('9000')
    expect(swOf(card.transmit(hex('00A4040C07D2760000850101')))).toBe('9000') // P2 0C, no Le
    expect(swOf(card.transmit(hex('00A4000C02E999')))).toBe('6A82')
    expect(swOf(card.transmit(hex(SELECT_CC)))).toBe('9000')
    const cc = card.transmit(hex('00B000000F'))
    expect(toHex(cc)).toBe('001720010000FF0406E104010000009000')
    expect(toHex(card.transmit(hex('00B0000000')))).toMatch(/^001720010000FF0406E104010000000506E10500808283(00){9}9000$/)
    expect(swOf(card.transmit(hex(SELECT_NDEF)))).toBe('9000')
    const nlen = card.transmit(hex('00B0000002'))
    expect(swOf(nlen)).toBe('9000')
    const length = dataOf(nlen).readUInt16BE(0)
    const msg = card.transmit(hex(`00B00002${length.toString(16)}`))
    expect(parseUriRecord(dataOf(msg))).toBe(card.lastUrl!.url)
    expect(card.lastUrl!.url).toMatch(/^https:\/\/example\.com\/t\?e=[0-9A-F]{32}&c=[0-9A-F]{16}$/)
  })

  test('READ BINARY bounds: Le 00 reads to the end of the 256-byte file, past the end 6282, offset past the file 6B00', () => {
    const card = aesCard()
    card.transmit(hex(SELECT_APP))
    card.transmit(hex(SELECT_NDEF))
    const all = card.transmit(hex('00B0000000'))
    expect(all.length).toBe(258)
    expect(swOf(all)).toBe('9000')
    expect(dataOf(card.transmit(hex('00B0000200'))).length).toBe(254)
    expect(swOf(card.transmit(hex('00B000FF00')))).toBe('9000')
    expect(toHex(card.transmit(hex('00B000FE04')))).toBe('00006282')
    expect(swOf(card.transmit(hex('00B0010001')))).toBe('6B00')
    expect(swOf(card.transmit(hex('00B0000000')))).toBe('9000')
    expect(swOf(card.transmit(hex('00B08100FF')))).toBe('6A81') // short EF identifier
    expect(swOf(card.transmit(hex('00B00000')))).toBe('6700') // no Le
    expect(swOf(card.transmit(hex('00A4000C02E105')))).toBe('9000')
    expect(swOf(card.transmit(hex('00B0000010')))).toBe('6982') // proprietary file: key 2 only
  })

  test('anything else: 6D00 unknown instruction, 6E00 unknown class, 6700 malformed, 6A86 bad P1/P2', () => {
    const card = aesCard()
    expect(toHex(card.transmit(hex('00D6000001AA')))).toBe('6D00')
    expect(toHex(card.transmit(hex('80CA9F7F00')))).toBe('6E00')
    expect(toHex(card.transmit(hex('00A4')))).toBe('6700')
    expect(toHex(card.transmit(hex('00A4040007D2760000')))).toBe('6700') // Lc says 7, 3 bytes follow
    expect(toHex(card.transmit(hex('00A4000C00')))).toBe('6700') // extended length: not supported
    expect(toHex(card.transmit(hex('00A4080C02E104')))).toBe('6A86')
    expect(toHex(card.transmit(hex('00A4000402E104')))).toBe('6A86')
  })

  test('native GetVersion: three frames, the last with the UID (zeros with random ID)', () => {
    const card = aesCard()
    expect(toHex(card.transmit(hex('9060000000')))).toBe('0404023000110591AF')
    expect(toHex(card.transmit(hex('90AF000000')))).toBe('0404020102110591AF')
    expect(toHex(card.transmit(hex('90AF000000')))).toBe(`${UID}000000000001219100`)
    expect(toHex(card.transmit(hex('90AF000000')))).toBe('911C')
    const random = aesCard({ randomUid: true })
    random.transmit(hex('9060000000'))
    random.transmit(hex('90AF000000'))
    expect(toHex(random.transmit(hex('90AF000000')))).toBe('00000000000000000000000001219100')
  })

  test('SDMReadCtr: +1 at the first READ BINARY of E104 after its SELECT, the file fixed until the next SELECT or power cycle', async () => {
    const card = aesCard({ counter: 41 })
    const seen: number[] = []
    card.onRead(({ counter }) => seen.push(counter))
    expect(card.counter).toBe(41)
    const first = await tap(card)
    expect(card.counter).toBe(42)
    // Reading again without a new SELECT gives the same bytes: the chunks of one read agree.
    const again = dataOf(card.transmit(hex('00B0000000')))
    expect(parseUriRecord(again.subarray(2, 2 + again.readUInt16BE(0)))).toBe(first.url)
    expect(card.counter).toBe(42)
    // The CC file and a fresh SELECT of the application do not count; the next read of E104 does.
    card.transmit(hex(SELECT_CC))
    card.transmit(hex('00B0000000'))
    expect(card.counter).toBe(42)
    card.transmit(hex(SELECT_NDEF))
    card.transmit(hex('00B0000002'))
    expect(card.counter).toBe(43)
    card.reset()
    expect(swOf(card.transmit(hex('00B0000002')))).toBe('6985')
    const second = await tap(card)
    expect(second.url).not.toBe(first.url)
    expect(seen).toEqual([42, 43, 44])
    const verifier = createSunVerifier({ metaKey: META, fileKey: FILE })
    for (const [url, counter] of [[first.url, 42], [second.url, 44]] as const) {
      const f = extractSunFields(url)
      if (!f.ok || f.kind !== 'sun') throw new Error(url)
      expect(verifier.verify(f)).toMatchObject({ valid: true, uid: UID, counter })
    }
  })

  test('at SDMReadCtr FFFFFF the NDEF file can no longer be read', () => {
    const card = aesCard({ counter: 0xfffffe })
    card.transmit(hex(SELECT_APP))
    card.transmit(hex(SELECT_NDEF))
    expect(swOf(card.transmit(hex('00B0000002')))).toBe('9000')
    expect(card.counter).toBe(0xffffff)
    card.transmit(hex(SELECT_NDEF))
    expect(swOf(card.transmit(hex('00B0000002')))).toBe('6985')
  })

  test('random ID: FF CA reads 08 + 3 random bytes, new per tap; PICCData still carries the UID', async () => {
    const card = aesCard({ randomUid: true })
    const a = await tap(card)
    const b = await tap(card)
    expect(a.rfUid).toMatch(/^08[0-9A-F]{6}$/)
    expect(b.rfUid).toMatch(/^08[0-9A-F]{6}$/)
    expect(card.rfUidHex).toBe(b.rfUid)
    const f = extractSunFields(b.url)
    if (!f.ok || f.kind !== 'sun') throw new Error(b.url)
    expect(verifySunMessage({ metaKey: META, fileKey: FILE, ...f })).toMatchObject({ valid: true, uid: UID, counter: 2 })
  })

  test.each(['aes', 'lrp'] as SunMode[])('%s: file data, a MAC input, and SDM offsets the gateway can use as a layout', async (mode) => {
    const fileData = Buffer.from('tapgate:chip-042tapgate:chip-043')
    const card = aesCard({ mode, fileData, counter: 7, url: 'https://tap.example/{picc}/x?d={macin}{enc}&m={mac}' })
    const { url } = await tap(card)
    const s = card.settings
    expect(s).toMatchObject({ mode, uriPrefixCode: 4, piccOffset: 7 + 12 })
    const layout: SunOffsetLayout = { piccOffset: s.piccOffset!, macInputOffset: s.macInputOffset, macOffset: s.macOffset, encOffset: s.encOffset!, encLength: s.encLength!, mode }
    expect(layout.encLength).toBe(64)
    const f = extractSunFields(url, layout)
    if (!f.ok || f.kind !== 'sun') throw new Error(JSON.stringify(f))
    expect(f.macInput).toBe(`${f.encFileData}&m=`)
    expect(createSunVerifier({ metaKey: META, fileKey: FILE, mode }).verify(f)).toEqual({
      valid: true,
      mode,
      uid: UID,
      counter: 8,
      fileData: toHex(fileData),
      piccDataTag: 0xc7,
    })
  })

  test('PICCData with the counter only; a plain mirror with {uid} and {ctr}', async () => {
    const counterOnly = aesCard({ mirrorUid: false, url: 'https://example.com/?e={picc}&c={mac}' })
    const a = extractSunFields((await tap(counterOnly)).url)
    if (!a.ok || a.kind !== 'sun') throw new Error('no sun')
    expect(createSunVerifier({ metaKey: META, fileKey: FILE }).verify(a)).toMatchObject({ valid: true, uid: null, counter: 1, piccDataTag: 0x40 })

    const plain = aesCard({ counter: 0x1233, url: 'https://example.com/?uid={uid}&ctr={ctr}&cmac={mac}' })
    const { url } = await tap(plain)
    expect(url).toMatch(new RegExp(`^https://example.com/\\?uid=${UID}&ctr=001234&cmac=[0-9A-F]{16}$`))
    const b = extractSunFields(url)
    if (!b.ok || b.kind !== 'plain_mirror') throw new Error('no plain mirror')
    expect(createSunVerifier({ fileKey: FILE }).verifyPlainMirror(b)).toEqual({ valid: true, mode: 'aes', uid: UID, counter: 0x1234 })
  })

  test('a template the chip could not have is refused up front', () => {
    const bad = (o: Partial<VirtualNtag424Options>) => () => aesCard(o)
    expect(bad({ url: 'https://example.com/?e={picc}' })).toThrow('needs {mac}')
    expect(bad({ url: 'https://example.com/?c={mac}' })).toThrow('needs {picc}')
    expect(bad({ url: 'https://example.com/?e={picc}&c={mac}&x={pic}' })).toThrow('unknown placeholder {pic}')
    expect(bad({ url: 'https://example.com/?e={picc}&c={mac}&d={picc}' })).toThrow('appears twice')
    expect(bad({ url: 'https://example.com/?e={picc}&c={mac}{macin}' })).toThrow('must come before {mac}')
    expect(bad({ url: 'https://example.com/?e={picc}&d={enc}&c={mac}' })).toThrow('{enc} needs fileData')
    expect(bad({ fileData: Buffer.alloc(16) })).toThrow('add {enc}')
    expect(bad({ fileData: Buffer.alloc(15), url: 'https://x/?e={picc}&d={enc}&c={mac}' })).toThrow('16-byte blocks')
    expect(bad({ url: 'https://example.com/?e={picc&c={mac}' })).toThrow('unmatched brace')
    expect(bad({ url: 'https://example.com/?u={uid}&e={picc}&c={mac}' })).toThrow('not both')
    expect(bad({ url: `https://example.com/${'x'.repeat(200)}?e={picc}&c={mac}` })).toThrow("does not fit the NTAG 424 DNA's 256-byte NDEF file")
    expect(bad({ uid: '04996C6A9269' })).toThrow('14 hex digits')
    expect(bad({ counter: 0x1000000 })).toThrow('SDMReadCtr is 24 bits')
    expect(bad({ random: new Uint8Array(3) })).not.toThrow()
    expect(() => aesCard({ random: new Uint8Array(3) }).urlAt(1)).toThrow('random must give 5 bytes')
  })
})

const vectors = sunVectors
const reproducible = vectors.filter((v) => v.kind === 'sun' && v.expected.valid)

/**
 * The card's configuration for a published vector: the URL as published (or, when a
 * vector has none, the fields in a plain example URL) with the mirrored values turned
 * back into placeholders, and the chip's randomness as the published PICCData shows it.
 */
function cardFor(v: SunVector): { options: VirtualNtag424Options; url: string } {
  const i = v.input
  if (i.sdmmac === undefined || i.macInput === undefined) throw new Error(`${v.id}: a SUN vector without sdmmac and macInput`)
  const url =
    v.url ??
    (i.piccData !== undefined ? `https://example.com/tap?e=${i.piccData}&c=${i.sdmmac}` : `https://example.com/tap?uid=${i.uid}&ctr=${i.ctr}&cmac=${i.sdmmac}`)
  let template = url
  const macinAt = i.macInput === '' ? -1 : url.indexOf(i.macInput + i.sdmmac)
  if (i.macInput !== '') expect(macinAt, `${v.id}: the MAC input sits right before the MAC`).toBeGreaterThan(0)
  template = macinAt > 0 ? `${url.slice(0, macinAt)}{macin}${url.slice(macinAt)}` : url
  const swap = (value: string | null | undefined, name: string) => {
    if (!value) return
    expect(template.split(value).length, `${v.id}: ${name} appears once`).toBe(2)
    template = template.replace(value, `{${name}}`)
  }
  swap(i.piccData, 'picc')
  swap(i.encFileData, 'enc')
  swap(i.sdmmac, 'mac')
  swap(i.uid, 'uid')
  swap(i.ctr, 'ctr')

  const mode: SunMode = v.mode === 'LRP' ? 'lrp' : 'aes'
  const metaKey = v.keys?.sdmMetaReadKey ?? ZERO
  const options: VirtualNtag424Options = {
    uid: v.expected.uid!,
    metaKey,
    fileKey: v.keys?.sdmFileReadKey ?? ZERO,
    mode,
    counter: v.expected.readCtr! - 1,
    url: template,
  }
  if (v.expected.fileData) options.fileData = hex(v.expected.fileData)
  if (i.piccData !== undefined) {
    // The chip's random bytes are whatever follows the fields in the published PICCData (and, in LRP, PICCRand before it).
    const { plaintext } = decryptPiccData({ metaKey, piccData: i.piccData })
    if (v.expected.intermediate?.decryptedPiccData) expect(toHex(plaintext)).toBe(v.expected.intermediate.decryptedPiccData)
    const padding = plaintext.subarray(1 + 7 + 3)
    options.random = mode === 'aes' ? padding : Buffer.concat([hex(i.piccData).subarray(0, 8), padding])
  }
  return { options, url }
}

describe('published vectors', () => {
  test('every valid SUN vector is reproduced: AES, LRP, file data, plain mirror', () => {
    expect(reproducible.map((v) => v.id)).toEqual([
      'an12196-table3-table5-picc-empty-macinput',
      'an12196-table4-encfiledata',
      'an12196-table6-encfiledata-macinput-with-param',
      'an12196-table5-as-plain-mirror',
      'boltcard-test-vector-ctr3',
      'boltcard-test-vector-ctr5',
      'boltcard-test-vector-ctr7',
      'ntag424-java-lrp-picc-ctr30',
    ])
  })

  test.each(reproducible)('$id: the card serves the published URL over APDUs', async (v) => {
    const { options, url } = cardFor(v)
    const card = new VirtualNtag424(options)
    const read = await tap(card)
    expect(read.url).toBe(url)
    expect(read.rfUid).toBe(v.expected.uid)
    expect(card.counter).toBe(v.expected.readCtr)
    if (v.ndef) {
      // AN12196 Table 6 states the chip's SDM offsets: the card's layout of the same URL must match them.
      expect(card.settings).toEqual({
        mode: 'aes',
        uriPrefixCode: v.ndef.uriIdentifierCode,
        piccOffset: v.ndef.offsets.piccData,
        encOffset: v.ndef.offsets.encFileData,
        encLength: 32,
        macInputOffset: v.ndef.offsets.macInput,
        macOffset: v.ndef.offsets.mac,
      })
    }
  })
})

describe('in-process virtual reader', () => {
  test("the station's readTap reads the card in 0x30-byte chunks, and a card pulled mid-read is a CardRemovedError", async () => {
    const reader = createVirtualReader()
    const card = aesCard({ url: 'https://example.com/a/rather/long/path/for/several/chunks?e={picc}&c={mac}' })
    expect(await readTap(reader.place(card))).toEqual({ rfUid: UID, url: card.lastUrl!.url, chip: 'ntag424' })
    reader.remove()
    card.removeAfter(2)
    await expect(readTap(reader.place(card))).rejects.toBeInstanceOf(CardRemovedError)
    expect(card.counter).toBe(2)
  })

  test('place → card event, APDUs answered asynchronously; remove → cardRemoved, then CardRemovedError', async () => {
    const reader = createVirtualReader('Virtual reader 0')
    const events: string[] = []
    const sessions: CardSession[] = []
    reader.on('card', (s) => (events.push('card'), sessions.push(s)))
    reader.on('cardRemoved', () => events.push('removed'))
    reader.on('end', () => events.push('end'))
    const card = aesCard({ url: 'https://example.com/?e={picc}&c={mac}' })
    const session = reader.place(card)
    expect(sessions).toEqual([session])
    expect(session).toMatchObject({ readerName: 'Virtual reader 0', atr: NTAG424_ATR })
    expect(reader.card).toBe(card)
    const pending = session.transmit(hex('FFCA000000'))
    expect(pending).toBeInstanceOf(Promise)
    expect(toHex(await pending)).toBe(`${UID}9000`)
    const { url } = await readUrl((a) => session.transmit(a))
    expect(url).toBe(card.lastUrl!.url)
    expect(() => reader.place(aesCard())).toThrow('already holds a card')

    // A transmit in flight when the card is lifted fails too.
    const inFlight = session.transmit(hex('FFCA000000'))
    reader.remove()
    await expect(inFlight).rejects.toBeInstanceOf(CardRemovedError)
    await expect(session.transmit(hex('FFCA000000'))).rejects.toBeInstanceOf(CardRemovedError)
    expect(reader.card).toBeNull()

    // Placing the card again is a new tap: a new session, the selection gone, the counter moving on.
    const again = reader.place(card)
    expect(swOf(await again.transmit(hex('00B0000002')))).toBe('6985')
    await readUrl((a) => again.transmit(a))
    expect(card.counter).toBe(2)
    await reader.close()
    expect(events).toEqual(['card', 'removed', 'card', 'removed', 'end'])
    expect(() => reader.place(card)).toThrow('is closed')
  })

  test('removeAfter(n): n READ BINARY answers, then the card is gone', async () => {
    const reader = createVirtualReader('r', { apduLatencyMs: 1 })
    const removed: number[] = []
    reader.on('cardRemoved', () => removed.push(Date.now()))
    const card = aesCard()
    card.removeAfter(1)
    const session = reader.place(card)
    await session.transmit(hex(SELECT_APP))
    await session.transmit(hex(SELECT_NDEF))
    expect(swOf(await session.transmit(hex('00B0000002')))).toBe('9000') // NLEN: the one answer
    expect(card.counter).toBe(1)
    await expect(session.transmit(hex('00B0000240'))).rejects.toBeInstanceOf(CardRemovedError)
    await new Promise((r) => setImmediate(r))
    expect(removed).toHaveLength(1)
    expect(reader.card).toBeNull()

    // removeAfter(0): the next READ BINARY never reaches the card, so the counter stays.
    card.removeAfter(0)
    const next = reader.place(card)
    await next.transmit(hex(SELECT_APP))
    await next.transmit(hex(SELECT_NDEF))
    await expect(next.transmit(hex('00B0000002'))).rejects.toThrow('card removed during read, tap again')
    expect(card.counter).toBe(1)
    expect(removed).toHaveLength(2)
    // One-shot: the next tap reads normally.
    const third = reader.place(card)
    expect((await readUrl((a) => third.transmit(a))).url).toBe(card.lastUrl!.url)
    expect(card.counter).toBe(2)
  })
})

/** The pcscd side of vpcd, in the test: a server the card connects to. */
async function fakeVpcd() {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as net.AddressInfo).port
  const connection = new Promise<net.Socket>((resolve) => server.once('connection', resolve))
  let socket: net.Socket | null = null
  let buffer = Buffer.alloc(0)
  let waiting: (() => void) | null = null
  let ended = false
  const ready = connection.then((s) => {
    socket = s
    s.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk])
      waiting?.()
    })
    s.on('close', () => {
      ended = true
      waiting?.()
    })
    return s
  })
  /** The next reply frame's payload, or null when the card closed the connection. */
  async function reply(): Promise<Buffer | null> {
    for (;;) {
      if (buffer.length >= 2 && buffer.length >= 2 + buffer.readUInt16BE(0)) {
        const payload = buffer.subarray(2, 2 + buffer.readUInt16BE(0))
        buffer = buffer.subarray(2 + payload.length)
        return payload
      }
      if (ended) return null
      await new Promise<void>((resolve) => (waiting = resolve))
    }
  }
  const frame = (payload: Buffer) => Buffer.concat([Buffer.from([payload.length >> 8, payload.length & 0xff]), payload])
  return {
    port,
    ready,
    reply,
    frame,
    write: (b: Buffer) => socket!.write(b),
    /** Sends a C-APDU (as Debian's vpcd does: length and payload in two writes) and waits for the R-APDU. */
    async apdu(command: string): Promise<Buffer | null> {
      const f = frame(hex(command))
      socket!.write(f.subarray(0, 2))
      await new Promise((r) => setTimeout(r, 2))
      socket!.write(f.subarray(2))
      return reply()
    },
    closed: () => ended,
    close: () => new Promise<void>((resolve) => (socket?.destroy(), server.close(() => resolve()))),
  }
}

describe('vpcd client (against a fake vpcd)', () => {
  test('ATR on 04, power controls reset the selection, APDUs answered; split and coalesced frames', async () => {
    const vpcd = await fakeVpcd()
    try {
      const card = aesCard({ url: 'https://example.com/?e={picc}&c={mac}' })
      const inserted = await insertCard(card, { port: vpcd.port })
      await vpcd.ready
      vpcd.write(vpcd.frame(hex('04')))
      expect(toHex((await vpcd.reply())!)).toBe(NTAG424_ATR)
      await inserted.seen
      // Power on (no reply) and an APDU in one chunk.
      vpcd.write(Buffer.concat([vpcd.frame(hex('01')), vpcd.frame(hex('FFCA000000'))]))
      expect(toHex((await vpcd.reply())!)).toBe(`${UID}9000`)
      const { url } = await readUrl(async (a) => (await vpcd.apdu(toHex(a)))!)
      expect(url).toBe(card.lastUrl!.url)
      // A reset loses the selection, byte by byte.
      for (const b of vpcd.frame(hex('02'))) vpcd.write(Buffer.from([b]))
      expect(toHex((await vpcd.apdu('00B0000002'))!)).toBe('6985')
      expect(inserted.reason).toBeNull()
      await inserted.remove()
      expect(inserted.reason).toBe('removed')
      expect(await vpcd.reply()).toBeNull()
      await inserted.removed
    } finally {
      await vpcd.close()
    }
  })

  test('removeAfter closes the connection after the last answer; a closed connection resolves removed', async () => {
    const vpcd = await fakeVpcd()
    try {
      const card = aesCard()
      card.removeAfter(1)
      const inserted = await insertCard(card, { port: vpcd.port })
      await vpcd.ready
      await vpcd.apdu(SELECT_APP)
      await vpcd.apdu(SELECT_NDEF)
      expect(swOf((await vpcd.apdu('00B0000002'))!)).toBe('9000')
      expect(await vpcd.reply()).toBeNull()
      await inserted.removed
      expect(inserted.reason).toBe('pulled')
    } finally {
      await vpcd.close()
    }
    const other = await fakeVpcd()
    const inserted = await insertCard(aesCard(), { port: other.port })
    await other.ready
    await other.close()
    await inserted.removed
    expect(inserted.reason).toBe('closed')
  })

  test('an unreachable port is a clear error', async () => {
    const port = await freePort()
    const error = await insertCard(aesCard(), { port }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(VpcdUnreachableError)
    expect((error as Error).message).toBe(
      `cannot reach vpcd at 127.0.0.1:${port} (ECONNREFUSED): is pcscd running with vsmartcard-vpcd installed (apt-get install pcscd vsmartcard-vpcd)?`,
    )
  })
})

describe('tapgate virtual-card', () => {
  const children = new Set<ChildProcess>()
  afterEach(async () => {
    for (const child of children) await stopChild(child)
    children.clear()
  })

  function cli(args: string[]) {
    const child = spawn(process.execPath, [cliPath, 'virtual-card', ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] })
    children.add(child)
    const { stdout, stderr, exited } = collectOutput(child)
    const waitFor = async (re: RegExp) => {
      const until = Date.now() + 15_000
      while (!re.test(stdout())) {
        if (Date.now() > until || child.exitCode !== null) throw new Error(`no ${re} in stdout: ${stdout()}\nstderr: ${stderr()}`)
        await new Promise((r) => setTimeout(r, 10))
      }
    }
    return { child, exit: exited.then(({ code }) => code), waitFor, stdout, stderr }
  }

  const keys = ['--uid', UID, '--meta-key', META, '--file-key', FILE]

  test('flags: checked without echoing keys; the URL template checked by building the card', () => {
    const flags = { uid: '04:99:6C:6A:92:69:80', 'meta-key': META, 'file-key': FILE }
    expect(virtualCardSettings(flags)).toEqual({
      card: { uid: UID, metaKey: META, fileKey: FILE, mode: 'aes', counter: 0, url: 'http://127.0.0.1:8787/tap?e={picc}&c={mac}' },
      host: '127.0.0.1',
      port: 35963,
    })
    expect(virtualCardSettings({ ...flags, counter: '0x10', mode: 'lrp', vpcd: '[::1]:35964' })).toMatchObject({ card: { counter: 16, mode: 'lrp' }, host: '::1', port: 35964 })
    expect(parseVpcdAddress('35964')).toEqual({ host: '127.0.0.1', port: 35964 })
    expect(() => virtualCardSettings({ ...flags, 'meta-key': 'secret-ish' })).toThrow('--meta-key must be 32 hex characters (an AES-128 key), got 10 characters')
    expect(() => virtualCardSettings({ ...flags, counter: '-1' })).toThrow('--counter is SDMReadCtr')
    expect(() => virtualCardSettings({ ...flags, url: 'https://x/?e={picc}' })).toThrow('--url: the URL template needs {mac}')
    expect(() => virtualCardSettings({ ...flags, vpcd: 'localhost' })).toThrow('--vpcd takes HOST:PORT')
    expect(() => virtualCardSettings({ ...flags, mode: 'des' })).toThrow('--mode is aes or lrp')
  })

  test('inserts the card, prints each read, removes it on SIGINT', async () => {
    const vpcd = await fakeVpcd()
    try {
      const run = cli([...keys, '--counter', '41', '--url', 'https://example.com/?e={picc}&c={mac}', '--vpcd', `127.0.0.1:${vpcd.port}`])
      await vpcd.ready
      await run.waitFor(/inserted into vpcd/)
      vpcd.write(vpcd.frame(hex('04')))
      expect(toHex((await vpcd.reply())!)).toBe(NTAG424_ATR)
      await run.waitFor(/pcscd has the card/)
      const { url } = await readUrl(async (a) => (await vpcd.apdu(toHex(a)))!)
      await run.waitFor(/read 1/)
      run.child.kill('SIGINT')
      expect(await run.exit).toBe(0)
      expect(await vpcd.reply()).toBeNull()
      expect(run.stdout()).toBe(
        [
          `virtual NTAG 424 DNA ${UID} (AES, SDMReadCtr 41) inserted into vpcd at 127.0.0.1:${vpcd.port}`,
          'URL template: https://example.com/?e={picc}&c={mac}',
          'pcscd has the card. Ctrl-C removes it.',
          `read 1 (SDMReadCtr 42): ${url}`,
          'card removed after 1 read (SDMReadCtr 42)',
          '',
        ].join('\n'),
      )
      expect(run.stdout() + run.stderr()).not.toContain(META)
    } finally {
      await vpcd.close()
    }
  })

  test('pcscd going away ends it with status 1; no vpcd, a clear message', async () => {
    const vpcd = await fakeVpcd()
    const run = cli([...keys, '--vpcd', `127.0.0.1:${vpcd.port}`])
    await vpcd.ready
    await run.waitFor(/inserted/)
    await vpcd.close()
    expect(await run.exit).toBe(1)
    expect(run.stderr()).toContain(`tapgate: vpcd at 127.0.0.1:${vpcd.port} closed the connection after 0 reads (SDMReadCtr 0): was pcscd stopped?`)

    const port = await freePort()
    const none = cli([...keys, '--vpcd', `127.0.0.1:${port}`])
    expect(await none.exit).toBe(1)
    expect(none.stderr()).toBe(
      `tapgate: cannot reach vpcd at 127.0.0.1:${port} (ECONNREFUSED): is pcscd running with vsmartcard-vpcd installed (apt-get install pcscd vsmartcard-vpcd)?\n`,
    )
    const usage = cli(['--uid', UID])
    expect(await usage.exit).toBe(2)
    expect(usage.stderr()).toBe('tapgate: --meta-key is required (see tapgate --help)\n')
    expect(await exited(usage.child, 1000)).toBe(true)
  })
})
