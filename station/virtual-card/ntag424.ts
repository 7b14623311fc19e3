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
import { createTestOriginalityKey, type FileSettings } from '../../src/provisioning/index.js'
import { generateSunMessage, ndefUriPrefix, NDEF_URI_TEXT_OFFSET, parseHex, toAesKey, toHex, type KeyInput, type SunMode } from '../../src/sun/index.js'
import { Ntag424Commands, type NativeCardState } from './ntag424Commands.js'
import { factoryFiles, FILE_ID, type CardFile } from './ntag424Files.js'
import { CardKeys, type FailedAuthPolicy } from './ntag424Keys.js'
import { ndefFileUrl, renderSdmFile } from './ntag424Sdm.js'

export { FILE_ID } from './ntag424Files.js'

/** The ATR both transports present: ISO 14443-4 type A, no historical bytes (what PC/SC readers build for an NTAG 424 DNA). */
export const NTAG424_ATR = '3B8180018080'

/** The NDEF application's DF name (NFC Forum Type 4 Tag). */
export const NDEF_AID = 'D2760000850101'

/** File sizes of a factory NTAG 424 DNA: CC 32 bytes, NDEF 256, proprietary 128. */
const FILE_SIZE = { [FILE_ID.cc]: 32, [FILE_ID.ndef]: 256, [FILE_ID.proprietary]: 128 } as Record<number, number>

/**
 * The originality key pair of every virtual card: a TEST secp224r1 key, never
 * NXP's. Tests trust its public key explicitly; a real chip is checked against
 * NXP_NTAG424_ORIGINALITY_PUBLIC_KEY.
 */
export const VIRTUAL_CARD_ORIGINALITY_KEY = createTestOriginalityKey(Buffer.from('74617067617465207669727475616C20636172642074657374210001', 'hex'))

/** Its public key (65 bytes, uncompressed): what tests pass to verifyOriginality. */
export const VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY: Buffer = VIRTUAL_CARD_ORIGINALITY_KEY.publicKey

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

/** What every virtual card takes, configured or blank. */
export type VirtualNtag424CommonOptions = {
  /** The 7-byte UID, 14 hex digits. */
  uid: string
  /**
   * The card's randomness in an authentication: RndB (16 bytes), then for a First
   * authentication the TI (4 bytes). Crypto random by default; inject it to replay
   * AN12196's tables from the card's side.
   */
  authRandom?: (length: number, what: 'RndB' | 'TI') => Uint8Array
  /** The failed-authentication counter (SetConfiguration 0A; factory limit 1000, decrement 10). */
  failedAuth?: Partial<FailedAuthPolicy>
}

/**
 * A factory-fresh NTAG 424 DNA: keys 0–4 all zero at version 00, AES mode, the CC
 * and an empty NDEF file as shipped, NDEF settings `0000E0EE000100` (no SDM).
 * It learns its URL, SDM settings and keys through the provisioning commands.
 */
export type BlankNtag424Options = VirtualNtag424CommonOptions & {
  blank: true
  /** PICCData randomness per read once SDM is on (see the configured card's `random`). */
  random?: Uint8Array | ((length: number) => Uint8Array)
}

/**
 * A card configured from a URL template. Its keys read as key 1 = metaKey, key 2 =
 * fileKey, keys 0, 3, 4 zero (all at version 00), and GetFileSettings answers the
 * settings the template amounts to (MetaRead 1, FileRead 2).
 */
export type ConfiguredNtag424Options = VirtualNtag424CommonOptions & {
  blank?: false
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
   * of `{picc}`; `{macin}` (zero width) marks SDMMACInputOffset (default: at `{enc}`
   * when there is one, as a chip requires SDMENCOffset ≥ SDMMACInputOffset, else at
   * `{mac}`, an empty MAC input; as planNdefUrl). Default {@link DEFAULT_URL_TEMPLATE}.
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

export type VirtualNtag424Options = ConfiguredNtag424Options | BlankNtag424Options

/** One command and what the card answered (null: it had left the field), for transcripts. */
export type CardTranscriptEntry = { command: Buffer; response: Buffer | null }

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
 * It also answers the provisioning command set with the real cryptography
 * (ntag424Commands.ts): authentication AES and LRP, CommMode MAC and Full with CmdCtr
 * and TI, WriteData, Get/ChangeFileSettings (which then drive the SDM output, see
 * ntag424Sdm.ts), ChangeKey, GetKeyVersion, GetCardUID, SetConfiguration, Read_Sig, and
 * a blank card (`blank: true`) also ISO UPDATE BINARY. A configured card's keys are
 * key 1 = metaKey, key 2 = fileKey, the rest zero; once its NDEF file or settings are
 * changed it serves the file as written, like a blank card.
 *
 * @throws RangeError from the constructor for an invalid UID, counter, template or file data; InvalidKeyError for a key
 * @example
 * const card = new VirtualNtag424({ uid: '04DE5F1EACC040', metaKey: K, fileKey: K, url: 'https://example.com/?e={picc}&c={mac}' })
 * card.transmit(Buffer.from('00A4040007D276000085010100', 'hex')) // <90 00>
 */
export class VirtualNtag424 {
  readonly atr = NTAG424_ATR
  readonly uid: string
  /** The URL template of a configured card; '' for a blank one. */
  readonly template: string
  /**
   * The SDM settings the template amounts to (a blank card: a placeholder with offsets 0).
   * Fixed at construction: what ChangeFileSettings sets is {@link fileSettings}.
   */
  readonly settings: SdmFileSettings
  /** True for a card built with `blank: true`. */
  readonly blank: boolean
  private readonly tokens: Token[]
  private readonly prefix: { code: number; prefix: string }
  private readonly fileDataHex: string | undefined
  private readonly mirrorUid: boolean
  private readonly mirrorCounter: boolean
  private randomUid: boolean
  private lrp: boolean
  private readonly random: Uint8Array | ((length: number) => Uint8Array) | undefined
  private readonly keys: CardKeys
  private readonly files: CardFile[]
  private readonly commands: Ntag424Commands
  /** Where the NDEF file's contents come from: the template (configured card) or the file as written. */
  private ndefSource: 'template' | 'file'
  private removeAfterAny: { remaining: number; processLast: boolean } | null = null
  private readonly transcriptListeners = new Set<(entry: CardTranscriptEntry) => void>()
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
    this.blank = options.blank === true
    this.files = factoryFiles()
    const state = this.nativeState(options.authRandom)
    this.commands = new Ntag424Commands(state)
    if (options.blank === true) {
      this.keys = new CardKeys(undefined, options.failedAuth)
      this.lrp = false
      this.readCtr = 0
      this.template = ''
      this.tokens = []
      this.mirrorUid = true
      this.mirrorCounter = true
      this.randomUid = false
      this.random = options.random
      this.prefix = { code: 0, prefix: '' }
      this.ndefSource = 'file'
      this.settings = { mode: 'aes', uriPrefixCode: 0, macInputOffset: 0, macOffset: 0 }
      this.rfUid = Buffer.from(uid)
      return
    }
    const metaKey = toAesKey(options.metaKey, 'metaKey')
    const fileKey = toAesKey(options.fileKey, 'fileKey')
    this.keys = new CardKeys([Buffer.alloc(16), metaKey, fileKey], options.failedAuth)
    const mode = options.mode ?? 'aes'
    check(mode === 'aes' || mode === 'lrp', `mode must be 'aes' or 'lrp'`)
    this.lrp = mode === 'lrp'
    this.ndefSource = 'template'
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
    const ndef = this.files[1]!
    ndef.data = this.render(Math.min(counter + 1, MAX_COUNTER), new Uint8Array(this.randomLength())).file
    ndef.settings = templateFileSettings(offsets, this.hasField('picc') ? { uid: this.mirrorUid, counter: this.mirrorCounter } : null)
  }

  /** The SDM crypto and secure-messaging mode: AES, or LRP (from the start, or after SetConfiguration). */
  get mode(): SunMode {
    return this.lrp ? 'lrp' : 'aes'
  }

  /** The NDEF file's settings as GetFileSettings reports them. */
  get fileSettings(): FileSettings {
    return structuredClone(this.files[1]!.settings)
  }

  /** A key's version (what GetKeyVersion answers). */
  keyVersion(keyNo: number): number {
    return this.keys.version(keyNo)
  }

  /** TotFailCtr of a key: failed authentications not yet paid off by successful ones. */
  failedAuthentications(keyNo: number): number {
    return this.keys.failures(keyNo)
  }

  /** Whether the card's key `keyNo` equals `key` (tests check keys without reading them out). */
  hasKey(keyNo: number, key: KeyInput): boolean {
    return this.keys.key(keyNo).equals(toAesKey(key, 'key'))
  }

  /** The active secure-messaging session's CmdCtr and TI, or null. */
  get sessionState(): { keyNo: number; cmdCtr: number; ti: string } | null {
    const s = this.commands.session
    return s ? { keyNo: s.keyNo, cmdCtr: s.cmdCtr, ti: toHex(s.ti) } : null
  }

  /** Calls `listener` with every command and the card's answer (null when it had left the field): a transcript. @returns an unsubscribe function */
  onExchange(listener: (entry: CardTranscriptEntry) => void): () => void {
    this.transcriptListeners.add(listener)
    return () => this.transcriptListeners.delete(listener)
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
   * Counts READ BINARY only; {@link removeAfterCommands} counts every command.
   */
  removeAfter(readBinaryResponses: number): void {
    if (!Number.isInteger(readBinaryResponses) || readBinaryResponses < 0) throw new RangeError('removeAfter takes a count ≥ 0')
    this.removal = readBinaryResponses
  }

  /**
   * Simulates the card pulled away mid-exchange, counting every command (any CLA
   * and INS): it answers `commands` more, then leaves the field. With 0 it leaves
   * before the next one reaches it (nothing changes on the card). With
   * `processLast` the command after those is carried out but its answer is lost
   * (a card pulled between its write and its answer: the reader cannot tell). One-shot;
   * independent of {@link removeAfter}.
   */
  removeAfterCommands(commands: number, options: { processLast?: boolean } = {}): void {
    if (!Number.isInteger(commands) || commands < 0) throw new RangeError('removeAfterCommands takes a count ≥ 0')
    this.removeAfterAny = { remaining: commands, processLast: options.processLast ?? false }
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
    this.commands.reset()
  }

  /** Answers one command APDU. @returns the response APDU (data ‖ SW1 SW2) */
  transmit(command: Uint8Array): Buffer {
    const { response } = this.exchange(command)
    if (!response) throw new Error('the card left the field (removeAfter)')
    return response
  }

  /** Answers one command APDU, and says whether the card leaves the field (see {@link CardExchange}). */
  exchange(command: Uint8Array): CardExchange {
    const result = this.exchangeOnce(command)
    if (this.transcriptListeners.size > 0) {
      const entry = { command: Buffer.from(command), response: result.response ? Buffer.from(result.response) : null }
      for (const listener of this.transcriptListeners) listener(entry)
    }
    return result
  }

  private exchangeOnce(command: Uint8Array): CardExchange {
    const any = this.removeAfterAny
    if (any && any.remaining === 0) {
      this.removeAfterAny = null
      if (any.processLast) this.dispatchBytes(command)
      this.reset()
      return { response: null, leaves: true }
    }
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
    if (any) {
      any.remaining -= 1
      // Answering the last one: leave right after it unless a processLast command is still to come.
      if (any.remaining === 0 && !any.processLast) {
        this.removeAfterAny = null
        leaves = true
      }
    }
    return { response, leaves }
  }

  private dispatchBytes(command: Uint8Array): void {
    const apdu = parseApdu(Buffer.from(command))
    if (apdu) this.dispatch(apdu)
  }

  /**
   * The URL the card serves at a given SDMReadCtr, with the configured randomness;
   * does not change the card. For tests that want the URL without the APDUs.
   */
  urlAt(counter: number): string {
    if (this.blank) throw new Error('urlAt renders a URL template; a blank card serves whatever was written to it (read it instead)')
    return this.render(counter, this.nextRandom()).url
  }

  private dispatch(a: Apdu): Buffer {
    if (a.cla === 0xff) return a.ins === 0xca ? this.getUid(a) : status(SW.insNotSupported)
    if (a.cla === 0x90) return this.native(a)
    this.versionFrame = 0
    if (a.cla !== 0x00) return status(SW.claNotSupported)
    this.commands.isoCommand()
    if (a.ins === 0xa4) return this.select(a)
    if (a.ins === 0xb0) return this.readBinary(a)
    // A configured card keeps its historic answer to UPDATE BINARY (6D00): it is a fixture with a fixed URL; a blank card takes writes.
    if (a.ins === 0xd6 && this.blank) return this.updateBinary(a)
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
    if (a.ins === 0xaf && this.commands.awaitingPart2) return this.commands.handle(a.ins, a.data)
    if (a.ins === 0x60 && a.p1 === 0 && a.p2 === 0) {
      this.commands.isoCommand()
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
    if (a.ins === 0xaf) return status(SW.nativeIllegalCommand)
    if (a.p1 !== 0 || a.p2 !== 0) return status(SW.incorrectP1P2)
    return this.commands.handle(a.ins, a.data)
  }

  /** The command layer's view of this card. */
  private nativeState(authRandom: VirtualNtag424Options['authRandom']): NativeCardState {
    const card = this
    return {
      get keys() {
        return card.keys
      },
      get files() {
        return card.files
      },
      get uid() {
        return Buffer.from(card.uid, 'hex')
      },
      get lrp() {
        return card.lrp
      },
      set lrp(on: boolean) {
        card.lrp = on
      },
      get randomId() {
        return card.randomUid
      },
      set randomId(on: boolean) {
        card.randomUid = on
      },
      originalityKey: VIRTUAL_CARD_ORIGINALITY_KEY.privateKey,
      authRandom: (length, what) => {
        const bytes = authRandom ? authRandom(length, what) : randomBytes(length)
        if (bytes.length !== length) throw new RangeError(`authRandom must give ${length} bytes for ${what}`)
        return bytes
      },
      ndefChanged: (what) => {
        card.ndefSource = 'file'
        card.snapshot = null
        // SDMReadCtr starts over whenever ChangeFileSettings turns SDM on (NT4H2421Gx §9.3.1).
        if (what === 'settings' && card.files[1]!.settings.sdm) card.readCtr = 0
      },
      // A template-configured card renders with its template's AES offsets; only a card driven by its file can follow a switch.
      canEnableLrp: () => card.ndefSource === 'file',
    }
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
    const stored = this.files.find((f) => f.fid === this.selectedFile)!
    // ISO READ BINARY is plain only: a file whose Read right needs a key is out of reach (NT4H2421Gx Table 22).
    if (stored.settings.accessRights.read !== 'E' && stored.settings.accessRights.readWrite !== 'E') return status(SW.securityStatus)
    if (this.selectedFile !== FILE_ID.ndef) file = stored.data
    else if (this.ndefSource === 'file') {
      if (!this.snapshot) this.snapshot = this.readNdefFile()
      if (!this.snapshot) return status(SW.conditionsOfUse)
      file = this.snapshot
    } else {
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

  /** One read of a file-driven NDEF file: with SDM on, SDMReadCtr moves and the mirrors are written in; null once the counter is exhausted. */
  private readNdefFile(): Buffer | null {
    const ndef = this.files[1]!
    if (!ndef.settings.sdm) return Buffer.from(ndef.data)
    if (this.readCtr >= MAX_COUNTER) return null
    this.readCtr += 1
    const file = renderSdmFile(ndef.data, ndef.settings, {
      uid: Buffer.from(this.uid, 'hex'),
      counter: this.readCtr,
      mode: this.mode,
      key: (keyNo) => this.keys.key(keyNo),
      random: (length) => this.randomBytesFor(length),
    })
    this.lastRead = { counter: this.readCtr, url: ndefFileUrl(file) ?? '' }
    for (const listener of this.readListeners) listener(this.lastRead)
    return file
  }

  /** ISO UPDATE BINARY: plain only, so only files whose Write right is free (E). */
  private updateBinary(a: Apdu): Buffer {
    if (this.selectedFile === null) return status(SW.conditionsOfUse)
    if ((a.p1 & 0x80) !== 0) return status(SW.functionNotSupported)
    if (a.data.length === 0 || a.le !== null) return status(SW.wrongLength)
    const file = this.files.find((f) => f.fid === this.selectedFile)!
    const offset = (a.p1 << 8) | a.p2
    if (offset + a.data.length > file.size) return status(SW.wrongParameters)
    if (file.settings.accessRights.write !== 'E' && file.settings.accessRights.readWrite !== 'E') return status(SW.securityStatus)
    a.data.copy(file.data, offset)
    if (file.fid === FILE_ID.ndef) {
      this.ndefSource = 'file'
      this.snapshot = null
    }
    return status(SW.ok)
  }

  private randomBytesFor(length: number): Uint8Array {
    const r = this.random
    const bytes = r === undefined ? randomBytes(length) : typeof r === 'function' ? r(length) : r
    if (bytes.length !== length) throw new RangeError(`random must give ${length} bytes in ${this.mode.toUpperCase()} mode with this PICCData`)
    return bytes
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
      metaKey: this.keys.key(1),
      fileKey: this.keys.key(2),
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
        return out.slice(at.macin ?? at.enc ?? at.mac, at.mac)
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
    const offsets: SdmFileSettings = { mode: this.mode, uriPrefixCode: this.prefix.code, macInputOffset: offset(at.macin ?? at.enc ?? at.mac)!, macOffset: offset(at.mac)! }
    if (at.picc !== undefined) offsets.piccOffset = offset(at.picc)
    if (at.uid !== undefined) offsets.uidOffset = offset(at.uid)
    if (at.ctr !== undefined) offsets.ctrOffset = offset(at.ctr)
    if (at.enc !== undefined) Object.assign(offsets, { encOffset: offset(at.enc), encLength: values.enc!.length })
    return { url, file, offsets }
  }
}

/** The NDEF file settings a template amounts to: SDM on, plain, read free and the rest key 0, MetaRead key 1, FileRead key 2. */
function templateFileSettings(o: SdmFileSettings, picc: { uid: boolean; counter: boolean } | null): FileSettings {
  const settings: FileSettings = {
    sdm: true,
    commMode: 'plain',
    accessRights: { read: 'E', write: '0', readWrite: '0', change: '0' },
    sdmOptions: {
      uid: picc ? picc.uid : o.uidOffset !== undefined,
      readCtr: picc ? picc.counter : o.ctrOffset !== undefined,
      readCtrLimit: false,
      encFileData: o.encOffset !== undefined,
      ascii: true,
    },
    sdmAccessRights: { metaRead: picc ? '1' : 'E', fileRead: '2', ctrRet: 'F' },
    offsets: { macInput: o.macInputOffset, mac: o.macOffset },
  }
  const off = settings.offsets!
  if (o.uidOffset !== undefined) off.uid = o.uidOffset
  if (o.ctrOffset !== undefined) off.readCtr = o.ctrOffset
  if (o.piccOffset !== undefined) off.piccData = o.piccOffset
  if (o.encOffset !== undefined) Object.assign(off, { encData: o.encOffset, encLength: o.encLength })
  return settings
}
