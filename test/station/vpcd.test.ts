/*
 * The virtual card through the real PC/SC stack: card --TCP--> vsmartcard-vpcd -->
 * pcscd --> libpcsclite --> nfc-pcsc. Needs pcscd and vsmartcard-vpcd (apt) and the
 * optional nfc-pcsc. Under CI=true a missing piece fails the run; elsewhere the suite
 * skips with a message.
 *
 * pcscd is one per machine (its pid file and socket are fixed paths), so a running one
 * is reused, never a second started; one started here is stopped by PID. The card goes
 * into vpcd slot 1 (port 35964, "Virtual PCD 00 01"); another test may be using slot 0.
 */
import { EventEmitter } from 'node:events'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { extractSunFields, NDEF_URI_PREFIXES, toHex, verifySunMessage } from '../../src/sun/index.js'
import { PCSCD_BINARY, usePcscd, type PcscdProcess } from '../../station/pcsc/pcscdProcess.js'
import { VirtualNtag424 } from '../../station/virtual-card/ntag424.js'
import { insertCard } from '../../station/virtual-card/vpcd.js'
import { lockPcsc } from '../helpers/pcscLock.js'
import { CI } from '../helpers/pcscStack.js'

const SLOT_PORT = 35964
const SLOT_READER = 'Virtual PCD 00 01'
const META = '0C3B25D92B38AE443229DD59AD34B85D'
const FILE = 'B45775776CB224C75BCDE7CA3704E933'

/** The part of nfc-pcsc used here (it ships no types). */
type PcscReader = EventEmitter & { name: string; autoProcessing: boolean; transmit(data: Buffer, responseMaxLength: number): Promise<Buffer> }
type Nfc = EventEmitter & { close(): void }

function loadNfcPcsc(): (new () => Nfc) | null {
  try {
    return (createRequire(import.meta.url)('nfc-pcsc') as { NFC: new () => Nfc }).NFC
  } catch {
    return null
  }
}
const NFC = loadNfcPcsc()

const missing = [
  PCSCD_BINARY ? null : 'pcscd (apt-get install pcscd)',
  existsSync('/etc/reader.conf.d/vpcd') ? null : 'vsmartcard-vpcd (apt-get install vsmartcard-vpcd)',
  NFC ? null : 'nfc-pcsc (npm install; needs libpcsclite-dev)',
].filter((m) => m !== null)

test('the PC/SC stack for the vpcd tests is installed (required under CI=true)', () => {
  if (!CI && missing.length > 0) {
    console.warn(`skipping the pcscd/vpcd tests: missing ${missing.join(', ')}`)
    return
  }
  expect(missing).toEqual([])
})

describe.skipIf(missing.length > 0)('through pcscd and vpcd', () => {
  let pcscd: PcscdProcess | undefined
  let releasePcsc: (() => void) | undefined
  let nfc: Nfc
  let reader: PcscReader

  beforeAll(async () => {
    // Waits for the other PC/SC test file, if it runs now (pcscE2e's part takes ~30 s).
    releasePcsc = await lockPcsc(90_000)
    pcscd = await usePcscd()
    nfc = new NFC!()
    nfc.on('error', () => {})
    reader = await new Promise<PcscReader>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no reader "${SLOT_READER}" within 5 s: is vsmartcard-vpcd configured?`)), 5000)
      nfc.on('reader', (r: PcscReader) => {
        // Every reader: with autoProcessing an ISO 14443-4 card makes nfc-pcsc emit an error, and an unhandled one kills the worker.
        r.autoProcessing = false
        r.on('error', () => {})
        if (r.name === SLOT_READER) {
          clearTimeout(timer)
          resolve(r)
        }
      })
    })
  }, 120_000)

  afterAll(async () => {
    nfc?.close()
    await pcscd?.stop()
    releasePcsc?.()
  })

  /** Resolves at the next `card` event of our reader whose FF CA answer is `uid` (the slot may hold someone else's card first). */
  function nextCard(uid: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => (reader.off('card', onCard), reject(new Error(`card ${uid} did not appear in ${SLOT_READER}`))), 10_000)
      const onCard = async () => {
        const r = await reader.transmit(Buffer.from('FFCA000000', 'hex'), 258).catch(() => null)
        if (r && toHex(r) === `${uid}9000`) {
          clearTimeout(timer)
          reader.off('card', onCard)
          resolve()
        }
      }
      reader.on('card', onCard)
    })
  }

  const nextCardOff = () => new Promise<void>((resolve) => reader.once('card.off', () => resolve()))

  async function send(apdu: string): Promise<Buffer> {
    return reader.transmit(Buffer.from(apdu, 'hex'), 258)
  }

  async function readUrl(): Promise<string> {
    for (const apdu of ['00A4040007D276000085010100', '00A4000C02E104']) expect(toHex(await send(apdu))).toBe('9000')
    const nlen = await send('00B0000002')
    expect(toHex(nlen.subarray(2))).toBe('9000')
    const length = nlen.readUInt16BE(0)
    const message = await send(`00B00002${length.toString(16).padStart(2, '0')}`)
    expect(toHex(message.subarray(length))).toBe('9000')
    expect(toHex(message.subarray(0, 2))).toBe('D101')
    return NDEF_URI_PREFIXES[message[4]!]! + message.subarray(5, length).toString('utf8')
  }

  const newUid = () => `04${toHex(randomBytes(6))}`

  test('taps: FF CA reaches the card (vpcd forwards it), the URL verifies; insert → URL timings', async () => {
    const uid = newUid()
    const card = new VirtualNtag424({ uid, metaKey: META, fileKey: FILE, url: 'https://example.com/tap?e={picc}&c={mac}' })
    const timings: number[] = []
    const apduMs: number[] = []
    for (let i = 1; i <= 3; i++) {
      const started = performance.now()
      const appeared = nextCard(uid)
      const inserted = await insertCard(card, { port: SLOT_PORT })
      await appeared
      const reading = performance.now()
      const url = await readUrl()
      timings.push(performance.now() - started)
      apduMs.push((performance.now() - reading) / 4)
      expect(url).toBe(card.lastUrl!.url)
      const f = extractSunFields(url)
      if (!f.ok || f.kind !== 'sun') throw new Error(url)
      expect(verifySunMessage({ metaKey: META, fileKey: FILE, ...f })).toMatchObject({ valid: true, uid, counter: i })
      const off = nextCardOff()
      await inserted.remove()
      await off
    }
    console.log(
      `insert → URL read through pcscd: ${timings.map((t) => `${t.toFixed(0)} ms`).join(', ')}; ` +
        `per APDU (SELECT, SELECT, READ, READ): ${apduMs.map((t) => `${t.toFixed(1)} ms`).join(', ')}`,
    )
  })

  test('a card pulled mid-read: an empty answer, then transmit fails; pcscd reports the removal, the counter moved once', async () => {
    const uid = newUid()
    const card = new VirtualNtag424({ uid, metaKey: META, fileKey: FILE, url: 'https://example.com/tap?e={picc}&c={mac}' })
    card.removeAfter(1)
    const appeared = nextCard(uid)
    const inserted = await insertCard(card, { port: SLOT_PORT })
    await appeared
    const off = nextCardOff()
    expect(toHex(await send('00A4040007D276000085010100'))).toBe('9000')
    expect(toHex(await send('00A4000C02E104'))).toBe('9000')
    expect(toHex((await send('00B0000002')).subarray(2))).toBe('9000')
    // vpcd reads end-of-file from the closed socket and reports it as a 0-byte answer, not as an error:
    // the station must take an answer without a status word as the card gone. Only the next transmit fails.
    expect(await send('00B0000250')).toHaveLength(0)
    await expect(send('00B0000250')).rejects.toThrow('An error occurred while transmitting')
    await inserted.removed
    expect(inserted.reason).toBe('pulled')
    await off
    expect(card.counter).toBe(1)

    // Pulled before the READ BINARY reached it: the same empty answer, and no read counted.
    card.removeAfter(0)
    const again = nextCard(uid)
    const second = await insertCard(card, { port: SLOT_PORT })
    await again
    const gone = nextCardOff()
    await send('00A4040007D276000085010100')
    await send('00A4000C02E104')
    expect(await send('00B0000002')).toHaveLength(0)
    await second.removed
    await gone
    expect(card.counter).toBe(1)
  })
})
