/*
 * A software NTAG 424 DNA: the APDU state machine a PC/SC reader sees, with real
 * Secure Dynamic Messaging. The SUN fields come from src/sun's generateSunMessage,
 * so the card and the gateway share one implementation of the crypto, and the
 * card reproduces the published vectors (AN12196 etc.) byte for byte.
 *
 * Transport-agnostic: vpcd.ts puts it into pcscd over TCP, virtualReader.ts on an
 * in-process Reader. Both call enterField() on a tap, reset() on a power cycle and
 * exchange() per APDU.
 */
import { randomBytes } from 'node:crypto'
import { generateSunMessage, ndefUriPrefix, NDEF_URI_TEXT_OFFSET, parseHex, toAesKey, toHex, type KeyInput, type SunMode } from '../../src/sun/index.js'

/** The ATR both transports present: ISO 14443-4 type A, no historical bytes (what PC/SC readers build for an NTAG 424 DNA). */
export const NTAG424_ATR = '3B8180018080'

/** The NDEF application's DF name (NFC Forum Type 4 Tag). */
export const NDEF_AID = 'D2760000850101'

/** ISO file identifiers of the NDEF application's files. */
export const FILE_ID = { cc: 0xe103, ndef: 0xe104, proprietary: 0xe105, ndefApplication: 0xe110, masterFile: 0x3f00 } as const

/** File sizes of a factory NTAG 424 DNA: CC 32 bytes, NDEF 256, proprietary 128. */
const FILE_SIZE = { [FILE_ID.cc]: 32, [FILE_ID.ndef]: 256, [FILE_ID.proprietary]: 128 } as Record<number, number>

/**
 * The factory capability container (NT4H2421Gx §8.2.3.1): mapping version 2.0,
 * MLe 0100h, MLc 00FFh, NDEF file E104h of 256 bytes with free read and write,
 * proprietary file E105h of 128 bytes (read key 2, write key 3).
 */
const CC_FILE = Buffer.concat([Buffer.from('001720010000FF0406E104010000000506E10500808283', 'hex'), Buffer.alloc(9)])

/** GetVersion (90 60, then 90 AF twice) of an NTAG 424 DNA: hardware and software parts; the third part is UID ‖ batch ‖ week ‖ year. */
const VERSION_HW = Buffer.from('04040230001105', 'hex')
const VERSION_SW = Buffer.from('04040201021105', 'hex')
const VERSION_PRODUCTION = Buffer.from('00000000000121', 'hex')

/** Status words, as sent. */
export const SW = {
  ok: 0x9000,
  endOfFile: 0x6282,
  wrongLength: 0x6700,
  securityStatus: 0x6982,
  conditionsOfUse: 0x6985,
  functionNotSupported: 0x6a81,
  fileNotFound: 0x6a82,
  incorrectP1P2: 0x6a86,
  wrongParameters: 0x6b00,
  insNotSupported: 0x6d00,
  claNotSupported: 0x6e00,
  nativeMoreFrames: 0x91af,
  nativeOk: 0x9100,
  nativeIllegalCommand: 0x911c,
} as const

const MAX_COUNTER = 0xffffff
const FIELD_NAMES = ['picc', 'enc', 'mac', 'macin', 'uid', 'ctr'] as const
type FieldName = (typeof FIELD_NAMES)[number]
type Token = { text: string } | { field: FieldName }

/** The chip's SDM file settings that a URL template amounts to, counted in the NDEF file as ChangeFileSettings counts them. */
export type SdmFileSettings = {
  mode: SunMode
  /** The URI identifier code the record uses (the prefix is not stored, so not counted). */
  uriPrefixCode: number
  /** PICCDataOffset, when PICCData is mirrored encrypted. */
  piccOffset?: number
  /** UIDOffset and SDMReadCtrOffset, for a plain mirror. */
  uidOffset?: number
  ctrOffset?: number
  macInputOffset: number
  macOffset: number
  /** SDMENCOffset and SDMENCLength (ASCII characters). */
  encOffset?: number
  encLength?: number
}

export type VirtualNtag424Options = {
  /** The 7-byte UID, 14 hex digits. */
  uid: string
  /** SDMMetaReadKey (encrypts PICCData) and SDMFileReadKey (MAC, file data): AES-128, hex or bytes. */
  metaKey: KeyInput
  fileKey: KeyInput
  /** The SDM crypto: AES (default) or LRP. */
  mode?: SunMode
  /** SDMReadCtr before the first read (default 0): the first read mirrors counter + 1. */
  counter?: number
  /**
   * The NDEF URL with placeholders where the chip mirrors: `{picc}` PICCData, `{enc}`
   * SDMENCFileData, `{mac}` SDMMAC, or for a plain mirror `{uid}` and `{ctr}` instead
   * of `{picc}`; `{macin}` (zero width) marks SDMMACInputOffset (default: at `{mac}`,
   * an empty MAC input). Default {@link DEFAULT_URL_TEMPLATE}.
   */
  url?: string
  /** The record's URI identifier code; default the longest of 0x01–0x04 the URL starts with, else 0x00. */
  uriPrefixCode?: number
  /** The plaintext mirrored encrypted at `{enc}`: whole 16-byte blocks. */
  fileData?: Uint8Array
  /** Which fields PICCData carries (PICCDataTag); both by default. */
  mirrorUid?: boolean
  mirrorCounter?: boolean
  /** Random ID: the RF UID (what FF CA reads) is 08h + 3 random bytes, new per tap; PICCData still carries the real UID. */
  randomUid?: boolean
  /**
   * The chip's randomness per read: the PICCData padding, preceded in LRP mode by the
   * 8-byte PICCRand. Fixed bytes, or a function of the length needed; crypto random by
   * default. Inject it to reproduce published vectors.
   */
  random?: Uint8Array | ((length: number) => Uint8Array)
}

/** The default URL: the local gateway's tap endpoint with its default parameter names. */
export const DEFAULT_URL_TEMPLATE = 'http://127.0.0.1:8787/tap?e={picc}&c={mac}'

/** One read of the NDEF file, as the card served it. */
export type NdefRead = { counter: number; url: string }

/**
 * What the card did with one command APDU. `response` is null when the card left the
 * field before the command reached it; `leaves` is true when it leaves right after this
 * response (both from {@link VirtualNtag424.removeAfter}).
 */
export type CardExchange = { response: Buffer | null; leaves: boolean }

type Apdu = { cla: number; ins: number; p1: number; p2: number; data: Buffer; le: number | null }

function status(sw: number, data?: Uint8Array): Buffer {
  const out = Buffer.alloc((data?.length ?? 0) + 2)
  if (data) out.set(data)
  out.writeUInt16BE(sw, out.length - 2)
  return out
}

/** Short APDUs only (ISO 7816-4 cases 1–4); null for a malformed or extended one. Le 00 means 256. */
function parseApdu(b: Buffer): Apdu | null {
  if (b.length < 4) return null
  const head = { cla: b[0]!, ins: b[1]!, p1: b[2]!, p2: b[3]! }
  if (b.length === 4) return { ...head, data: Buffer.alloc(0), le: null }
  if (b.length === 5) return { ...head, data: Buffer.alloc(0), le: b[4] === 0 ? 256 : b[4]! }
  const lc = b[4]!
  if (lc === 0) return null
  if (b.length === 5 + lc) return { ...head, data: b.subarray(5, 5 + lc), le: null }
  if (b.length === 6 + lc) return { ...head, data: b.subarray(5, 5 + lc), le: b[5 + lc] === 0 ? 256 : b[5 + lc]! }
  return null
}

function parseTemplate(url: string): Token[] {
  const tokens: Token[] = []
  const seen = new Set<string>()
  for (const part of url.split(/(\{[^{}]*\})/)) {
    if (part === '') continue
    const name = /^\{([^{}]*)\}$/.exec(part)?.[1]
    if (name === undefined) {
      if (/[{}]/.test(part)) throw new RangeError(`the URL template has an unmatched brace: ${JSON.stringify(part)}`)
      tokens.push({ text: part })
      continue
    }
    if (!(FIELD_NAMES as readonly string[]).includes(name))
      throw new RangeError(`unknown placeholder {${name}} in the URL template (known: ${FIELD_NAMES.map((f) => `{${f}}`).join(' ')})`)
    if (seen.has(name)) throw new RangeError(`the placeholder {${name}} appears twice in the URL template`)
    seen.add(name)
    tokens.push({ field: name as FieldName })
  }
  return tokens
}

function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new RangeError(message)
}

/**
 * A software NTAG 424 DNA with SDM. It answers, as an NTAG 424 DNA behind a PC/SC reader:
 * FF CA 00 00 (the UID; a real reader answers it itself, vpcd forwards it), ISO SELECT of
 * the NDEF application and of its files E103 (CC), E104 (NDEF), E105, ISO READ BINARY,
 * and native GetVersion. SDMReadCtr increments on the first READ BINARY of E104 after it
 * was selected; the file is fixed for the rest of that read (docs/station.md).
 *
 * @throws RangeError from the constructor for an invalid UID, counter, template or file data; InvalidKeyError for a key
 * @example
 * const card = new VirtualNtag424({ uid: '04DE5F1EACC040', metaKey: K, fileKey: K, url: 'https://example.com/?e={picc}&c={mac}' })
 * card.transmit(Buffer.from('00A4040007D276000085010100', 'hex')) // <90 00>
 */
export class VirtualNtag424 {
  readonly atr = NTAG424_ATR
  readonly uid: string
  readonly mode: SunMode
  readonly template: string
  readonly settings: SdmFileSettings
  private readonly metaKey: Buffer
  private readonly fileKey: Buffer
  private readonly tokens: Token[]
  private readonly prefix: { code: number; prefix: string }
  private readonly fileDataHex: string | undefined
  private readonly mirrorUid: boolean
  private readonly mirrorCounter: boolean
  private readonly randomUid: boolean
  private readonly random: Uint8Array | ((length: number) => Uint8Array) | undefined
  private readCtr: number
  private rfUid: Buffer
  private appSelected = false
  private selectedFile: number | null = null
  /** The NDEF file as fixed by the first READ BINARY after its SELECT; null until then. */
  private snapshot: Buffer | null = null
  private versionFrame = 0
  private removal: number | null = null
  private lastRead: NdefRead | null = null
  private readonly readListeners = new Set<(read: NdefRead) => void>()

  constructor(options: VirtualNtag424Options) {
    const uid = parseHex(options.uid.replaceAll(':', ''), 7)
    check(uid !== null, 'uid must be 7 bytes: 14 hex digits')
    this.uid = toHex(uid)
    this.metaKey = toAesKey(options.metaKey, 'metaKey')
    this.fileKey = toAesKey(options.fileKey, 'fileKey')
    this.mode = options.mode ?? 'aes'
    check(this.mode === 'aes' || this.mode === 'lrp', `mode must be 'aes' or 'lrp'`)
    const counter = options.counter ?? 0
    check(Number.isInteger(counter) && counter >= 0 && counter <= MAX_COUNTER, `counter must be an integer 0…${MAX_COUNTER} (SDMReadCtr is 24 bits)`)
    this.readCtr = counter
    this.template = options.url ?? DEFAULT_URL_TEMPLATE
    this.tokens = parseTemplate(this.template)
    this.mirrorUid = options.mirrorUid ?? true
    this.mirrorCounter = options.mirrorCounter ?? true
    this.randomUid = options.randomUid ?? false
    this.random = options.random
    if (options.fileData !== undefined) {
      check(options.fileData.length > 0 && options.fileData.length % 16 === 0, 'fileData must be whole 16-byte blocks (SDMENCLength is a multiple of 32 hex characters)')
      this.fileDataHex = toHex(options.fileData)
    }
    this.rfUid = this.randomUid ? this.newRandomId() : Buffer.from(uid)

    const has = (f: FieldName) => this.tokens.some((t) => 'field' in t && t.field === f)
    check(has('mac'), 'the URL template needs {mac}: where the chip mirrors the SDMMAC')
    check(has('picc') || has('uid') || has('ctr'), 'the URL template needs {picc} (encrypted PICCData) or {uid} / {ctr} (a plain mirror)')
    check(!(has('picc') && (has('uid') || has('ctr'))), 'give {picc} or the plain mirror {uid} / {ctr}, not both: a chip mirrors PICCData encrypted or in plain')
    check(has('enc') === (this.fileDataHex !== undefined), has('enc') ? '{enc} needs fileData to encrypt' : 'fileData is mirrored at {enc}: add {enc} to the URL template')
    if (has('picc')) check(this.mirrorUid || this.mirrorCounter, 'PICCData mirrors the UID, the counter or both')
    else
      check(
        options.mirrorUid === undefined && options.mirrorCounter === undefined,
        'mirrorUid and mirrorCounter choose what {picc} carries; a plain mirror carries the {uid} and {ctr} its template names',
      )
    const order = this.tokens.flatMap((t) => ('field' in t ? [t.field] : []))
    if (has('macin')) check(order.indexOf('macin') < order.indexOf('mac'), '{macin} (where the MAC input starts) must come before {mac}')

    const prefix = ndefUriPrefix(this.template, options.uriPrefixCode)
    check(prefix !== null, `the URL does not start with the prefix of URI identifier code ${options.uriPrefixCode}`)
    this.prefix = prefix
    // Rendering once checks the template against the generator (e.g. {enc} needs the counter mirrored) and the file size.
    const { offsets } = this.render(Math.min(counter + 1, MAX_COUNTER), new Uint8Array(this.randomLength()))
    this.settings = offsets
  }

  /** SDMReadCtr: the counter of the last read (or the initial value before any read). */
  get counter(): number {
    return this.readCtr
  }

  /** The RF UID a reader sees (FF CA), uppercase hex: the UID, or with randomUid the random ID of this tap. */
  get rfUidHex(): string {
    return toHex(this.rfUid)
  }

  /** The last URL the card served, with its counter; null before the first read. */
  get lastUrl(): NdefRead | null {
    return this.lastRead
  }

  /** Calls `listener` at each new read of the NDEF file (each increment of SDMReadCtr). @returns an unsubscribe function */
  onRead(listener: (read: NdefRead) => void): () => void {
    this.readListeners.add(listener)
    return () => this.readListeners.delete(listener)
  }

  /**
   * Simulates the card pulled away mid-read: it answers `readBinaryResponses` more READ
   * BINARY commands, then leaves the field. With 0 it leaves before answering the next one
   * (that command never reached it, so the counter does not move). One-shot.
   */
  removeAfter(readBinaryResponses: number): void {
    if (!Number.isInteger(readBinaryResponses) || readBinaryResponses < 0) throw new RangeError('removeAfter takes a count ≥ 0')
    this.removal = readBinaryResponses
  }

  /** A tap: the card enters the field. Selection state cleared; with randomUid a new random ID. */
  enterField(): void {
    this.reset()
    if (this.randomUid) this.rfUid = this.newRandomId()
  }

  /** Power off, power on or reset: the selection (and any read in progress) is lost. */
  reset(): void {
    this.appSelected = false
    this.selectedFile = null
    this.snapshot = null
    this.versionFrame = 0
  }

  /** Answers one command APDU. @returns the response APDU (data ‖ SW1 SW2) */
  transmit(command: Uint8Array): Buffer {
    const { response } = this.exchange(command)
    if (!response) throw new Error('the card left the field (removeAfter)')
    return response
  }

  /** Answers one command APDU, and says whether the card leaves the field (see {@link CardExchange}). */
  exchange(command: Uint8Array): CardExchange {
    const apdu = parseApdu(Buffer.from(command))
    const isReadBinary = apdu?.cla === 0x00 && apdu.ins === 0xb0
    if (isReadBinary && this.removal === 0) {
      this.removal = null
      return { response: null, leaves: true }
    }
    const response = apdu ? this.dispatch(apdu) : status(SW.wrongLength)
    let leaves = false
    if (isReadBinary && this.removal !== null) {
      this.removal -= 1
      if (this.removal === 0) {
        this.removal = null
        leaves = true
      }
    }
    return { response, leaves }
  }

  /**
   * The URL the card serves at a given SDMReadCtr, with the configured randomness;
   * does not change the card. For tests that want the URL without the APDUs.
   */
  urlAt(counter: number): string {
    return this.render(counter, this.nextRandom()).url
  }

  private dispatch(a: Apdu): Buffer {
    if (a.cla === 0xff) return a.ins === 0xca ? this.getUid(a) : status(SW.insNotSupported)
    if (a.cla === 0x90) return this.native(a)
    this.versionFrame = 0
    if (a.cla !== 0x00) return status(SW.claNotSupported)
    if (a.ins === 0xa4) return this.select(a)
    if (a.ins === 0xb0) return this.readBinary(a)
    return status(SW.insNotSupported)
  }

  /** PC/SC part 3 GET DATA: P1 00 the UID (Le 00 = all of it); P1 01 (ATS historical bytes) is not supported. */
  private getUid(a: Apdu): Buffer {
    if (a.p1 !== 0x00) return status(SW.functionNotSupported)
    if (a.p2 !== 0x00) return status(SW.wrongParameters)
    if (a.le !== null && a.le !== 256 && a.le < this.rfUid.length) return status(0x6c00 | this.rfUid.length)
    return status(SW.ok, this.rfUid)
  }

  private native(a: Apdu): Buffer {
    if (a.ins === 0x60 && a.p1 === 0 && a.p2 === 0) {
      this.versionFrame = 1
      return status(SW.nativeMoreFrames, VERSION_HW)
    }
    if (a.ins === 0xaf && this.versionFrame === 1) {
      this.versionFrame = 2
      return status(SW.nativeMoreFrames, VERSION_SW)
    }
    if (a.ins === 0xaf && this.versionFrame === 2) {
      this.versionFrame = 0
      // With random ID the chip reports the UID as zeros until authenticated.
      const uid = this.randomUid ? Buffer.alloc(7) : Buffer.from(this.uid, 'hex')
      return status(SW.nativeOk, Buffer.concat([uid, VERSION_PRODUCTION]))
    }
    this.versionFrame = 0
    return status(SW.nativeIllegalCommand)
  }

  private select(a: Apdu): Buffer {
    if (a.p2 !== 0x00 && a.p2 !== 0x0c) return status(SW.incorrectP1P2)
    if (a.p1 === 0x04) {
      if (toHex(a.data) !== NDEF_AID) return status(SW.fileNotFound)
      this.selectApplication()
      return status(SW.ok)
    }
    if (a.p1 !== 0x00 && a.p1 !== 0x02) return status(SW.incorrectP1P2)
    if (a.data.length !== 2) return status(SW.wrongLength)
    const fid = a.data.readUInt16BE(0)
    if (fid === FILE_ID.masterFile && a.p1 === 0x00) {
      this.reset()
      return status(SW.ok)
    }
    if (fid === FILE_ID.ndefApplication && a.p1 === 0x00) {
      this.selectApplication()
      return status(SW.ok)
    }
    if (!this.appSelected || FILE_SIZE[fid] === undefined) return status(SW.fileNotFound)
    this.selectedFile = fid
    // A new SELECT of the NDEF file starts a new read: the next READ BINARY increments SDMReadCtr.
    this.snapshot = null
    return status(SW.ok)
  }

  private selectApplication(): void {
    this.appSelected = true
    this.selectedFile = null
    this.snapshot = null
  }

  private readBinary(a: Apdu): Buffer {
    if (this.selectedFile === null) return status(SW.conditionsOfUse)
    // P1 b8 = 1 would carry a short EF identifier: not supported here.
    if ((a.p1 & 0x80) !== 0) return status(SW.functionNotSupported)
    if (a.le === null || a.data.length > 0) return status(SW.wrongLength)
    const offset = (a.p1 << 8) | a.p2
    const size = FILE_SIZE[this.selectedFile]!
    if (offset >= size) return status(SW.wrongParameters)
    let file: Buffer
    if (this.selectedFile === FILE_ID.cc) file = CC_FILE
    else if (this.selectedFile === FILE_ID.proprietary) return status(SW.securityStatus)
    else {
      if (!this.snapshot) {
        if (this.readCtr >= MAX_COUNTER) return status(SW.conditionsOfUse)
        this.readCtr += 1
        const { url, file: ndef } = this.render(this.readCtr, this.nextRandom())
        this.snapshot = ndef
        this.lastRead = { counter: this.readCtr, url }
        for (const listener of this.readListeners) listener(this.lastRead)
      }
      file = this.snapshot
    }
    const available = size - offset
    const data = file.subarray(offset, offset + Math.min(a.le, available))
    // Le 00 asks for up to 256 bytes: fewer at the end of the file is no error. An explicit Le past the end is (ISO 7816-4 6282).
    return status(a.le !== 256 && a.le > available ? SW.endOfFile : SW.ok, data)
  }

  private randomLength(): number {
    const uid = this.hasField('picc') ? this.mirrorUid : this.hasField('uid')
    const counter = this.hasField('picc') ? this.mirrorCounter : this.hasField('ctr')
    return (this.mode === 'lrp' ? 8 : 0) + 16 - 1 - (uid ? 7 : 0) - (counter ? 3 : 0)
  }

  private nextRandom(): Uint8Array {
    const length = this.randomLength()
    const r = this.random
    const bytes = r === undefined ? randomBytes(length) : typeof r === 'function' ? r(length) : r
    if (bytes.length !== length) throw new RangeError(`random must give ${length} bytes in ${this.mode.toUpperCase()} mode with this PICCData`)
    return bytes
  }

  private hasField(f: FieldName): boolean {
    return this.tokens.some((t) => 'field' in t && t.field === f)
  }

  private newRandomId(): Buffer {
    return Buffer.concat([Buffer.from([0x08]), randomBytes(3)])
  }

  /** Fills the template for one read and builds the NDEF file around it. */
  private render(counter: number, random: Uint8Array): { url: string; file: Buffer; offsets: SdmFileSettings } {
    const plain = !this.hasField('picc')
    const uid = plain ? (this.hasField('uid') ? this.uid : null) : this.mirrorUid ? this.uid : null
    const ctr = plain ? (this.hasField('ctr') ? counter : null) : this.mirrorCounter ? counter : null
    const values: Partial<Record<FieldName, string>> = { uid: this.uid, ctr: counter.toString(16).toUpperCase().padStart(6, '0') }
    const fill = () => {
      let out = ''
      const at: Partial<Record<FieldName, number>> = {}
      for (const t of this.tokens) {
        if ('text' in t) out += t.text
        else {
          at[t.field] = out.length
          out += values[t.field] ?? ''
        }
      }
      return { out, at }
    }
    const message = generateSunMessage({
      metaKey: this.metaKey,
      fileKey: this.fileKey,
      mode: this.mode,
      uid,
      counter: ctr,
      fileData: this.fileDataHex,
      // Plain mirrors do not use PICCData: let the generator draw its own padding rather than consume the injected bytes.
      random: plain ? undefined : random,
      macInput: ({ piccData, encFileData }) => {
        values.picc = piccData
        values.enc = encFileData ?? ''
        const { out, at } = fill()
        return out.slice(at.macin ?? at.mac, at.mac)
      },
    })
    values.mac = message.sdmmac
    const { out: url, at } = fill()

    const uri = Buffer.from(url.slice(this.prefix.prefix.length), 'utf8')
    const payloadLength = 1 + uri.length
    const nlen = 4 + payloadLength
    if (payloadLength > 255 || 2 + nlen > FILE_SIZE[FILE_ID.ndef]!)
      throw new RangeError(`the URL is too long: its NDEF message (${nlen} bytes) does not fit the NTAG 424 DNA's 256-byte NDEF file`)
    const file = Buffer.alloc(FILE_SIZE[FILE_ID.ndef]!)
    file.writeUInt16BE(nlen, 0)
    // One short URI record: MB ME SR, TNF 1 (well-known), type length 1, type 'U', identifier code, URI.
    file.set([0xd1, 0x01, payloadLength, 0x55, this.prefix.code], 2)
    file.set(uri, NDEF_URI_TEXT_OFFSET)

    const offset = (i: number | undefined) =>
      i === undefined ? undefined : NDEF_URI_TEXT_OFFSET + Buffer.byteLength(url.slice(this.prefix.prefix.length, i), 'utf8')
    const offsets: SdmFileSettings = { mode: this.mode, uriPrefixCode: this.prefix.code, macInputOffset: offset(at.macin ?? at.mac)!, macOffset: offset(at.mac)! }
    if (at.picc !== undefined) offsets.piccOffset = offset(at.picc)
    if (at.uid !== undefined) offsets.uidOffset = offset(at.uid)
    if (at.ctr !== undefined) offsets.ctrOffset = offset(at.ctr)
    if (at.enc !== undefined) Object.assign(offsets, { encOffset: offset(at.enc), encLength: values.enc!.length })
    return { url, file, offsets }
  }
}
