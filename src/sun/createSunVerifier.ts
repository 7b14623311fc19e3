import { createAesEcb, type AesEcb } from './aesEcb.js'
import { aesCmacSubkeys, cmacInto, cmacScratchSize } from './aesCmac.js'
import { toAesKey, type KeyInput } from './aesKey.js'
import { decryptLrpPiccData } from './decryptPiccData.js'
import { decodeHexInto, toHex } from './hex.js'
import { createLrp, type Lrp } from './lrp.js'
import { lrpCmac } from './lrpCmac.js'
import { lrpSessionKeyFrom, prepareLrpFileKey, writeLrpSessionVector, type LrpFileKey } from './lrpSessionKey.js'
import { macEquals } from './macEquals.js'
import { parsePiccData, type PiccFields } from './parsePiccData.js'
import { decryptAesFileData, decryptLrpFileData } from './sdmFileData.js'
import { truncateMac } from './sdmMac.js'
import { writeSessionVector } from './sdmSessionKeys.js'
import { reject, type PlainMirrorResult, type SunMode, type SunRejected, type SunResult } from './sunResult.js'

/**
 * The NDEF file of an NTAG 424 DNA is 256 bytes, so no chip can MAC more ASCII
 * than that or mirror more than 128 bytes of file data (256 hex characters).
 * Bounding the inputs keeps the scratch buffers fixed and a hostile URL cheap.
 */
export const MAX_MAC_INPUT_LENGTH = 256
/** See {@link MAX_MAC_INPUT_LENGTH}. */
export const MAX_ENC_FILE_DATA_HEX_LENGTH = 256

export type SunVerifierOptions = {
  /** SDMMetaReadKey: decrypts PICCData. Needed for encrypted SUN messages, not for plain mirrors. */
  metaKey?: KeyInput
  /** SDMFileReadKey: MAC and file data. May instead be given per call (e.g. a key diversified per UID). */
  fileKey?: KeyInput
  /** Pin the chip's mode; 'auto' (default) infers it from the PICCData length. */
  mode?: SunMode | 'auto'
  /** How many per-call file keys keep their prepared ciphers (default 1024). */
  keyCacheSize?: number
}

/** The hex fields of an encrypted SUN message, already cut out of the URL. */
export type SunMessage = {
  /** PICCData: 32 hex characters (AES) or 48 (LRP). */
  piccData: string
  /** SDMMAC: 16 hex characters. */
  sdmmac: string
  /** The exact ASCII the chip MACed (case-sensitive); empty when SDMMACInputOffset = SDMMACOffset. */
  macInput?: string
  /** SDMENCFileData as hex, when the chip mirrors encrypted file data. */
  encFileData?: string | null
}

/** A plain UID/counter mirror with SDMMAC (`uid`, `ctr`, `cmac` parameters). */
export type PlainMirrorMessage = {
  /** 14 hex characters. */
  uid: string
  /** SDMReadCtr as the chip mirrors it: 6 hex characters, most significant first. */
  ctr: string
  /** SDMMAC: 16 hex characters. */
  cmac: string
  macInput?: string
}

export type VerifyOptions = {
  /** SDMFileReadKey for this message; overrides the verifier's. */
  fileKey?: KeyInput
}

/** Decrypted but unauthenticated PICCData, for looking a chip up by UID before its MAC is checked. */
export type PiccDataResult =
  | { ok: true; mode: SunMode; uid: string | null; counter: number | null; piccDataTag: number }
  | ({ ok: false } & Omit<SunRejected, 'valid'>)

export type SunVerifier = {
  readonly mode: SunMode | 'auto'
  /** Verifies an encrypted SUN message (PICCData, SDMMAC, optional SDMENCFileData). */
  verify(message: SunMessage, options?: VerifyOptions): SunResult
  /** Decrypts PICCData only; nothing is authenticated until {@link SunVerifier.verify} passes. */
  readPiccData(piccData: string): PiccDataResult
  /** Verifies a plain UID/counter mirror. In 'auto' mode the MAC is taken to be AES. */
  verifyPlainMirror(message: PlainMirrorMessage, options?: VerifyOptions): PlainMirrorResult
}

/** The mirrored fields the session keys are derived from. */
type MacFields = { uid: Uint8Array | null; counter: number | null }

/** Session key material after a MAC check passed, for decrypting file data. */
type Session = { mode: 'aes'; encKey: Buffer } | { mode: 'lrp'; session: Lrp }

/** Everything prepared for one key, built lazily as the key is used in each role. */
type KeyState = {
  key: Buffer
  ecb?: AesEcb
  K1?: Buffer
  lrp?: Lrp
  lrpFile?: LrpFileKey
}

const DETAIL = {
  notSun: 'wrong SDM meta read key, or meta/file keys swapped, or not a SUN message',
  keysSwapped:
    'wrong SDM meta read key, or meta/file keys swapped: the SDM file read key decrypts this PICCData, so the two keys look swapped',
  macMismatch:
    'the SDMMAC does not match: wrong SDM file read key, a lower-cased URL (the chip MACs the uppercase hex it wrote), or the wrong MAC input (SDMMACInputOffset / SDMMACOffset)',
  lowerCased:
    'the SDMMAC matches the upper-cased MAC input: the URL was lower-cased on its way here (the chip MACs the uppercase hex it wrote)',
  emptyInput:
    'the SDMMAC matches an empty MAC input: this chip has SDMMACInputOffset = SDMMACOffset, so pass an empty MAC input',
} as const

function describeLength(value: unknown): string {
  return typeof value === 'string' ? `${value.length} characters` : typeof value
}

/**
 * Creates a SUN verifier for one chip profile's keys. Keep it for the life of the
 * profile: it holds the per-key node:crypto ciphers (ECB for the static keys, LRP
 * expansions, CMAC subkeys) and fixed scratch buffers, so verifying a tap only
 * creates the ciphers of the per-tap session keys. Not safe to share across
 * worker threads; each thread makes its own.
 *
 * @throws InvalidKeyError when a key is not AES-128
 * @example
 * const verifier = createSunVerifier({ metaKey: K1, fileKey: K2, mode: 'aes' })
 * const r = verifier.verify({ piccData: 'EF963FF7828658A599F3041510671E88', sdmmac: '94EED9EE65337086', macInput: '' })
 * if (r.valid) console.log(r.uid, r.counter) // 04DE5F1EACC040 61
 * else console.log(r.reason, r.detail)
 */
export function createSunVerifier(options: SunVerifierOptions = {}): SunVerifier {
  const pinned = options.mode ?? 'auto'
  if (pinned !== 'auto' && pinned !== 'aes' && pinned !== 'lrp') throw new TypeError(`mode must be 'aes', 'lrp' or 'auto'`)
  const meta: KeyState | undefined = options.metaKey === undefined ? undefined : { key: toAesKey(options.metaKey, 'metaKey') }
  const file: KeyState | undefined = options.fileKey === undefined ? undefined : { key: toAesKey(options.fileKey, 'fileKey') }
  const cacheSize = options.keyCacheSize ?? 1024
  const cache = new Map<string, KeyState>()

  // Scratch: verification is synchronous, so one set per verifier is never shared mid-call.
  const picc = Buffer.alloc(24)
  const piccAes = picc.subarray(0, 16)
  const received = Buffer.alloc(8)
  const expected = Buffer.alloc(8)
  const sv = Buffer.alloc(32)
  const svMac = sv.subarray(0, 16)
  const enc = Buffer.alloc(MAX_ENC_FILE_DATA_HEX_LENGTH / 2)
  const macInputBytes = Buffer.alloc(MAX_MAC_INPUT_LENGTH * 3)
  const cmacScratch = Buffer.alloc(cmacScratchSize(macInputBytes.length))
  const lrpScratch = Buffer.alloc(16)

  function ecbOf(s: KeyState): AesEcb {
    return (s.ecb ??= createAesEcb(s.key))
  }
  function k1Of(s: KeyState): Buffer {
    return (s.K1 ??= aesCmacSubkeys(s.key).K1)
  }
  function lrpOf(s: KeyState): Lrp {
    return (s.lrp ??= createLrp(s.key, 1))
  }
  function lrpFileOf(s: KeyState): LrpFileKey {
    return (s.lrpFile ??= prepareLrpFileKey(lrpOf(s)))
  }

  function fileKeyState(override: KeyInput | undefined): KeyState | undefined {
    if (override === undefined) return file
    const id = typeof override === 'string' ? override : Buffer.from(override.buffer, override.byteOffset, override.byteLength).toString('latin1')
    let s = cache.get(id)
    if (!s) {
      s = { key: toAesKey(override, 'fileKey') }
      if (cache.size >= cacheSize) cache.delete(cache.keys().next().value!)
      cache.set(id, s)
    }
    return s
  }

  /** Validates and decodes the PICCData into `picc`; returns the mode or a rejection. */
  function loadPiccData(piccData: unknown): SunMode | SunRejected {
    const length = typeof piccData === 'string' ? piccData.length : -1
    const mode: SunMode | undefined = length === 32 ? 'aes' : length === 48 ? 'lrp' : undefined
    if (!mode)
      return reject(
        'malformed',
        `PICCData must be 32 hex characters (AES) or 48 (LRP), got ${describeLength(piccData)}: truncated PICCData, or the wrong PICC data parameter/offset`,
      )
    if (pinned !== 'auto' && mode !== pinned)
      return reject(
        'mode_mismatch',
        `this chip is pinned to ${pinned.toUpperCase()} mode but the PICCData has the ${mode.toUpperCase()} length (${length} hex characters): the chip's secure messaging mode and the profile disagree`,
      )
    if (!decodeHexInto(piccData as string, picc)) return reject('malformed', 'PICCData is not hex')
    return mode
  }

  /** Decrypts the loaded PICCData under a key. */
  function decryptLoaded(s: KeyState, mode: SunMode): Buffer {
    return mode === 'aes' ? ecbOf(s).decrypt(piccAes) : decryptLrpPiccData(lrpOf(s), picc)
  }

  function notSunMessage(tag: number, mode: SunMode, fileState: KeyState | undefined): SunRejected {
    // Failure path only: one extra decryption to name the most common provisioning mistake.
    if (fileState && !fileState.key.equals(meta!.key) && parsePiccData(decryptLoaded(fileState, mode)))
      return reject('not_sun_message', DETAIL.keysSwapped)
    return reject(
      'not_sun_message',
      `PICCData decrypts to PICCDataTag 0x${tag.toString(16).padStart(2, '0').toUpperCase()}, which no chip writes: ${DETAIL.notSun}`,
    )
  }

  function macMismatch(macInput: string, macOf: (input: string) => Buffer): SunRejected {
    // Failure path only: recompute over the likely-intended inputs so the operator sees the actual mistake.
    // Only the long hex runs (mirrored PICCData, file data): parameter names were lower case to begin with.
    const upper = macInput.replace(/[0-9a-fA-F]{16,}/g, (run) => run.toUpperCase())
    if (upper !== macInput && macEquals(macOf(upper), received)) return reject('mac_mismatch', DETAIL.lowerCased)
    if (macInput !== '' && macEquals(macOf(''), received)) return reject('mac_mismatch', DETAIL.emptyInput)
    return reject('mac_mismatch', DETAIL.macMismatch)
  }

  /** Validates sdmmac and macInput into scratch; returns the MAC input byte length or a rejection. */
  function loadMac(sdmmac: unknown, macInput: unknown): number | SunRejected {
    if (typeof sdmmac !== 'string' || sdmmac.length !== 16 || !decodeHexInto(sdmmac, received))
      return reject('malformed', `the SDMMAC must be 16 hex characters, got ${describeLength(sdmmac)}`)
    if (typeof macInput !== 'string' || macInput.length > MAX_MAC_INPUT_LENGTH)
      return reject('malformed', `the MAC input must be a string of at most ${MAX_MAC_INPUT_LENGTH} characters (the NDEF file size)`)
    return macInputBytes.write(macInput, 0, 'utf8')
  }

  function aesMacOfString(macKey: Buffer): (input: string) => Buffer {
    return (input) => truncateMac(cmacInto(macKey, Buffer.from(input, 'utf8'), Buffer.byteLength(input), Buffer.alloc(cmacScratchSize(input.length * 3))))
  }

  /**
   * Derives the session keys for the mirrored fields and checks the SDMMAC loaded
   * in `received` over the MAC input loaded in `macInputBytes`.
   *
   * @returns the session key material for decrypting file data, or the rejection
   */
  function checkMac(fileState: KeyState, mode: SunMode, fields: MacFields, macInput: string, macLength: number, withEnc: boolean): Session | SunRejected {
    if (mode === 'aes') {
      // SV2 (MAC) and, with file data, SV1 (ENC) are single blocks: CMAC = AES(K, SV ⊕ K1), both in one call.
      writeSessionVector(sv, 0, 'mac', fields.uid, fields.counter)
      if (withEnc) writeSessionVector(sv, 16, 'enc', fields.uid, fields.counter)
      const K1 = k1Of(fileState)
      const svLength = withEnc ? 32 : 16
      for (let i = 0; i < svLength; i++) sv[i] = sv[i]! ^ K1[i & 15]!
      const keys = ecbOf(fileState).encrypt(withEnc ? sv : svMac)
      const macKey = keys.subarray(0, 16)
      const mac = truncateMac(cmacInto(macKey, macInputBytes, macLength, cmacScratch), expected)
      if (!macEquals(mac, received)) return macMismatch(macInput, aesMacOfString(macKey))
      return { mode, encKey: keys.subarray(16, 32) }
    }
    writeLrpSessionVector(sv, 0, fields.uid, fields.counter)
    const session = createLrp(lrpSessionKeyFrom(lrpFileOf(fileState), sv, lrpScratch), withEnc ? 2 : 1)
    const macOf = (input: Buffer | string): Buffer => truncateMac(lrpCmac(session, input), expected)
    if (!macEquals(macOf(macInputBytes.subarray(0, macLength)), received)) return macMismatch(macInput, macOf)
    return { mode, session }
  }

  function verify(message: SunMessage, opts?: VerifyOptions): SunResult {
    if (!meta) throw new TypeError('this verifier has no metaKey: it can only verify plain mirrors')
    const mode = loadPiccData(message.piccData)
    if (typeof mode !== 'string') return mode
    const macInput = message.macInput ?? ''
    const macLength = loadMac(message.sdmmac, macInput)
    if (typeof macLength !== 'number') return macLength

    const encHex = message.encFileData
    let encLength = 0
    if (encHex !== undefined && encHex !== null && encHex !== '') {
      if (
        typeof encHex !== 'string' ||
        encHex.length % 32 !== 0 ||
        encHex.length > MAX_ENC_FILE_DATA_HEX_LENGTH ||
        !decodeHexInto(encHex, enc)
      )
        return reject(
          'malformed',
          `SDMENCFileData must be hex in whole 16-byte blocks (a multiple of 32 characters, at most ${MAX_ENC_FILE_DATA_HEX_LENGTH}), got ${describeLength(encHex)}: truncated, or the wrong SDMENCOffset/SDMENCLength`,
        )
      encLength = encHex.length >>> 1
    }

    const fileState = fileKeyState(opts?.fileKey)
    if (!fileState) throw new TypeError('no fileKey: give one to createSunVerifier or to verify()')

    const plain = decryptLoaded(meta, mode)
    const fields = parsePiccData(plain)
    if (!fields) return notSunMessage(plain[0]!, mode, fileState)
    if (encLength > 0 && fields.counter === null)
      return reject('malformed', 'the message carries SDMENCFileData but its PICCData has no SDMReadCtr, which the file data IV needs')

    const checked = checkMac(fileState, mode, fields, macInput, macLength, encLength > 0)
    if ('valid' in checked) return checked
    let fileData: Buffer | null = null
    if (encLength > 0) {
      // Only now: file data is decrypted once the MAC has authenticated it.
      const data = enc.subarray(0, encLength)
      fileData =
        checked.mode === 'aes' ? decryptAesFileData(checked.encKey, fields.counter!, data) : decryptLrpFileData(checked.session, fields.counter!, data)
    }
    return {
      valid: true,
      mode,
      uid: fields.uid ? toHex(fields.uid) : null,
      counter: fields.counter,
      fileData: fileData ? toHex(fileData) : null,
      piccDataTag: fields.tag,
    }
  }

  function readPiccData(piccData: string): PiccDataResult {
    if (!meta) throw new TypeError('this verifier has no metaKey')
    const mode = loadPiccData(piccData)
    if (typeof mode !== 'string') return { ok: false, reason: mode.reason, detail: mode.detail }
    const plain = decryptLoaded(meta, mode)
    const fields: PiccFields | null = parsePiccData(plain)
    if (!fields) {
      const r = notSunMessage(plain[0]!, mode, file)
      return { ok: false, reason: r.reason, detail: r.detail }
    }
    return { ok: true, mode, uid: fields.uid ? toHex(fields.uid) : null, counter: fields.counter, piccDataTag: fields.tag }
  }

  function verifyPlainMirror(message: PlainMirrorMessage, opts?: VerifyOptions): PlainMirrorResult {
    const uid = Buffer.alloc(7)
    if (typeof message.uid !== 'string' || message.uid.length !== 14 || !decodeHexInto(message.uid, uid))
      return reject('malformed', `the mirrored UID must be 14 hex characters, got ${describeLength(message.uid)}`)
    const ctr = Buffer.alloc(3)
    if (typeof message.ctr !== 'string' || message.ctr.length !== 6 || !decodeHexInto(message.ctr, ctr))
      return reject('malformed', `the mirrored counter must be 6 hex characters, got ${describeLength(message.ctr)}`)
    const macInput = message.macInput ?? ''
    const macLength = loadMac(message.cmac, macInput)
    if (typeof macLength !== 'number') return macLength
    const fileState = fileKeyState(opts?.fileKey)
    if (!fileState) throw new TypeError('no fileKey: give one to createSunVerifier or to verifyPlainMirror()')

    // The chip mirrors the counter most significant byte first, but MACs it least significant first.
    const counter = (ctr[0]! << 16) | (ctr[1]! << 8) | ctr[2]!
    const mode: SunMode = pinned === 'lrp' ? 'lrp' : 'aes'
    const checked = checkMac(fileState, mode, { uid, counter }, macInput, macLength, false)
    if ('valid' in checked) return checked
    return { valid: true, mode, uid: toHex(uid), counter }
  }

  return { mode: pinned, verify, readPiccData, verifyPlainMirror }
}
