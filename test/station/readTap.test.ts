import { describe, expect, test } from 'vitest'
import { NdefError } from '../../station/ndefUrl.js'
import { cardKind, readTap } from '../../station/readTap.js'
import { CardRemovedError, type CardSession } from '../../src/card/cardSession.js'
import { CardStatusError } from '../../station/reader.js'
import { VirtualNtag424 } from '../../station/virtual-card/ntag424.js'
import { createVirtualReader } from '../../station/virtual-card/virtualReader.js'

// Real APDU bytes: an NTAG 424 DNA holding AN12196's SUN example, as an ACR122U presents it.
const NTAG424_ATR = '3B8180018080'
const NTAG21X_ATR = '3B8F8001804F0CA0000003060300030000000068' // PC/SC storage card, ISO 14443A-3, MIFARE Ultralight family
const UID = '04DE5F1EACC040'
const URL = 'https://choose.url.com/ntag424?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086'
const NDEF_FILE =
  '0051D1014D550463686F6F73652E75726C2E636F6D2F6E7461673432343F653D454639363346463738323836353841353939463330343135313036373145383826633D39344545443945453635333337303836'
const file = (from: number, length: number) => NDEF_FILE.slice(from * 2, (from + length) * 2)

/** Command (hex) → response (hex), in the order a NTAG 424 read goes. */
const NTAG424_EXCHANGES: [string, string][] = [
  ['FFCA000000', `${UID}9000`],
  ['00A4040007D276000085010100', '9000'],
  ['00A4000C02E104', '9000'],
  ['00B0000002', `${file(0, 2)}9000`],
  ['00B0000230', `${file(2, 0x30)}9000`],
  ['00B0003221', `${file(0x32, 0x21)}9000`],
]

type Answer = string | Error
/**
 * A card that answers from a table of recorded APDUs (a fixture, not a mock of
 * our code): an unexpected command fails the test; `override` swaps one answer.
 */
function tableCard(atr: string, exchanges: [string, Answer][], override: Record<string, Answer> = {}) {
  const table = new Map<string, Answer>(exchanges)
  const sent: string[] = []
  const card: CardSession = {
    readerName: 'ACS ACR122U PICC Interface 00 00',
    atr,
    transmit: async (command) => {
      const key = command.toString('hex').toUpperCase()
      sent.push(key)
      const answer = override[key] ?? table.get(key)
      if (answer === undefined) throw new Error(`unexpected APDU ${key}`)
      if (answer instanceof Error) throw answer
      return Buffer.from(answer, 'hex')
    },
  }
  return { card, sent }
}

const rejection = async (p: Promise<unknown>): Promise<Error> => {
  try {
    await p
  } catch (error) {
    return error as Error
  }
  throw new Error('expected a rejection')
}

describe('readTap: NTAG 424 DNA (ISO-DEP)', () => {
  test('UID, NDEF application, file E104, NLEN, then the message in chunks of at most 0x30 bytes', async () => {
    const { card, sent } = tableCard(NTAG424_ATR, NTAG424_EXCHANGES)
    expect(await readTap(card)).toEqual({ rfUid: UID, url: URL, chip: 'ntag424' })
    expect(sent).toEqual(NTAG424_EXCHANGES.map(([command]) => command))
  })

  test('a card removed between two ReadBinary chunks is a CardRemovedError, never a tap', async () => {
    const pcscRemoved = new Error('An error occurred while transmitting.')
    const { card } = tableCard(NTAG424_ATR, NTAG424_EXCHANGES, { '00B0003221': pcscRemoved })
    const error = await rejection(readTap(card))
    expect(error).toBeInstanceOf(CardRemovedError)
    expect(error.message).toBe('card removed during read, tap again')
    expect(String((error.cause as Error).message)).toContain('read NDEF file at 50')
    expect((error.cause as Error).cause).toBe(pcscRemoved)
  })

  test('a short ReadBinary (fewer bytes than asked, 90 00) is a removal: NLEN is checked before parsing', async () => {
    const { card } = tableCard(NTAG424_ATR, NTAG424_EXCHANGES, { '00B0003221': `${file(0x32, 0x10)}9000` })
    const error = await rejection(readTap(card))
    expect(error).toBeInstanceOf(CardRemovedError)
    expect((error.cause as Error).message).toMatchInlineSnapshot(`"ReadBinary at 50 answered 16 of 33 bytes"`)
  })

  test('an answer without a status word after the card started answering is a removal', async () => {
    const { card } = tableCard(NTAG424_ATR, NTAG424_EXCHANGES, { '00A4000C02E104': '' })
    expect(await rejection(readTap(card))).toBeInstanceOf(CardRemovedError)
  })

  test('the session saying the card left is passed on as it is', async () => {
    const gone = new CardRemovedError()
    const { card } = tableCard(NTAG424_ATR, NTAG424_EXCHANGES, { '00B0000002': gone })
    expect(await rejection(readTap(card))).toBe(gone)
  })

  test('a failing first command is not called a removal: the reader may be at fault', async () => {
    const broken = new Error('reader unplugged')
    const { card } = tableCard(NTAG424_ATR, NTAG424_EXCHANGES, { FFCA000000: broken })
    expect(await rejection(readTap(card))).toBe(broken)
  })

  test('a status other than 90 00 is a CardStatusError naming the step', async () => {
    const { card } = tableCard(NTAG424_ATR, NTAG424_EXCHANGES, { '00A4040007D276000085010100': '6A82' })
    const error = await rejection(readTap(card))
    expect(error).toBeInstanceOf(CardStatusError)
    expect(error).toMatchObject({ step: 'select NDEF application', sw: '6A82' })
    expect(error.message).toMatchInlineSnapshot(`"select NDEF application failed with status 6A82"`)
    const uid = tableCard(NTAG424_ATR, NTAG424_EXCHANGES, { FFCA000000: '6300' })
    expect(await rejection(readTap(uid.card))).toMatchObject({ step: 'get UID', sw: '6300' })
  })

  test('an empty NDEF file (NLEN 0) is an NdefError', async () => {
    const { card } = tableCard(NTAG424_ATR, NTAG424_EXCHANGES, { '00B0000002': '00009000' })
    const error = await rejection(readTap(card))
    expect(error).toBeInstanceOf(NdefError)
    expect(error.message).toMatchInlineSnapshot(`"the chip holds no NDEF message (NLEN is 0)"`)
  })
})

describe('readTap: NTAG 21x (ISO 14443-3, pages)', () => {
  // NTAG 213 user memory from page 4: a Lock Control TLV, the NDEF TLV (03 len …), the terminator, zero fill.
  const message = NDEF_FILE.slice(4)
  const memory = ('0103A00C34' + '03' + (message.length / 2).toString(16).padStart(2, '0') + message + 'FE').padEnd(8 * 32, '0')
  const pages = (page: number) => memory.slice((page - 4) * 8, (page - 4) * 8 + 32)
  const exchanges: [string, string][] = [['FFCA000000', `${UID}9000`]]
  for (let page = 4; page < 4 + 28; page += 4) exchanges.push([`FFB000${page.toString(16).padStart(2, '0').toUpperCase()}10`, `${pages(page)}9000`])

  test('reads 16 bytes at a time from page 4 until the NDEF TLV is complete, skipping other TLVs', async () => {
    const { card, sent } = tableCard(NTAG21X_ATR, exchanges)
    expect(await readTap(card)).toEqual({ rfUid: UID, url: URL, chip: 'ntag21x' })
    // 5 + 2 + 81 bytes of TLVs: 6 reads of 16 bytes (pages 4…27).
    expect(sent).toEqual(['FFCA000000', 'FFB0000410', 'FFB0000810', 'FFB0000C10', 'FFB0001010', 'FFB0001410', 'FFB0001810'])
  })

  test('a card removed between page reads is a CardRemovedError; a short page read too', async () => {
    const failed = tableCard(NTAG21X_ATR, exchanges, { FFB0001010: new Error('An error occurred while transmitting.') })
    expect(await rejection(readTap(failed.card))).toBeInstanceOf(CardRemovedError)
    const short = tableCard(NTAG21X_ATR, exchanges, { FFB0001010: `${pages(16).slice(0, 8)}9000` })
    expect(await rejection(readTap(short.card))).toBeInstanceOf(CardRemovedError)
  })

  test('a blank tag (terminator first) is an NdefError', async () => {
    const { card } = tableCard(NTAG21X_ATR, [['FFCA000000', `${UID}9000`], ['FFB0000410', `FE${'0'.repeat(30)}9000`]])
    expect((await rejection(readTap(card))).message).toMatchInlineSnapshot(`"the chip holds no NDEF message (terminator TLV first)"`)
  })
})

test('cardKind: the PC/SC storage-card ATR means pages, anything else ISO-DEP', () => {
  expect(cardKind(NTAG21X_ATR)).toBe('ntag21x')
  expect(cardKind('3b8f8001804f0ca000000306030003000000006')).toBe('ntag21x')
  expect(cardKind(NTAG424_ATR)).toBe('ntag424')
  expect(cardKind('3B8680018073C8211066')).toBe('ntag424')
  expect(cardKind('')).toBe('ntag424')
})

describe('readTap on the virtual NTAG 424 DNA (in-process reader)', () => {
  const KEY = '00112233445566778899AABBCCDDEEFF'
  // PICCData, encrypted file data and the MAC: a 145-byte NDEF message, read in four chunks.
  const template = 'https://tap.example.com/tap?e={picc}&d={enc}&c={mac}'
  const newCard = () => new VirtualNtag424({ uid: UID, metaKey: KEY, fileKey: KEY, url: template, fileData: Buffer.alloc(32, 0x41) })

  /** Places the card and reads it as a station does, at the reader's `card` event. */
  function tap(card: VirtualNtag424) {
    const reader = createVirtualReader('Virtual reader 0', { apduLatencyMs: 1 })
    const sent: string[] = []
    const read = new Promise<Awaited<ReturnType<typeof readTap>>>((resolve, reject) =>
      reader.on('card', (session) => {
        const traced: CardSession = { ...session, transmit: (c) => (sent.push(c.toString('hex').toUpperCase()), session.transmit(c)) }
        readTap(traced).then(resolve, reject)
      }),
    )
    reader.place(card)
    return { read, sent, reader }
  }

  test('each tap reads the URL the card served, with a new counter; chunks of at most 0x30 bytes', async () => {
    const card = newCard()
    for (const counter of [1, 2, 3]) {
      const { read, sent, reader } = tap(card)
      expect(await read).toEqual({ rfUid: UID, url: card.lastUrl!.url, chip: 'ntag424' })
      expect(card.lastUrl!.counter).toBe(counter)
      reader.remove()
      const lengths = sent.filter((c) => c.startsWith('00B0')).map((c) => parseInt(c.slice(8), 16))
      // NLEN, then the 145-byte message (record header 4, prefix code 1, 140 characters).
      expect(lengths).toEqual([2, 0x30, 0x30, 0x30, 1])
    }
  })

  test('the card pulled away after NLEN, or between two chunks: CardRemovedError', async () => {
    for (const answered of [1, 2]) {
      const card = newCard()
      card.removeAfter(answered)
      const error = await rejection(tap(card).read)
      expect(error).toBeInstanceOf(CardRemovedError)
    }
  })
})
