import { randomBytes } from 'node:crypto'
import { aesCmac } from '../sun/aesCmac.js'
import { toAesKey, type KeyInput } from '../sun/aesKey.js'
import { macEquals } from '../sun/macEquals.js'
import { expectStatus, INS, nativeApdu } from './apdu.js'
import { checkByte, fixedBytes, rotateLeft1, xorBytes } from './bytes.js'
import { CardSecureSession, RC } from './cardSecureMessaging.js'
import { SecureMessagingError } from './errors.js'
import { ReaderAuthentication } from './readerAuthentication.js'
import { SecureSession } from './secureMessaging.js'
import { aesCbc, aesSessionKeys } from './smCrypto.js'
import { SW_ADDITIONAL_FRAME } from './statusWords.js'

/*
 * AuthenticateEV2First / AuthenticateEV2NonFirst (NT4H2421Gx §9.1.5–9.1.7,
 * §10.4.1–10.4.2): the AES three-pass mutual authentication, from the reader's
 * side and from the card's, with injectable randomness so AN12196 Tables 14, 20
 * and 24 replay byte for byte in both directions.
 */

const ZERO_IV = Buffer.alloc(16)

/** The 32-byte session vector `label ‖ 00 01 00 80 ‖ RndA[0..1] ‖ (RndA[2..7] ⊕ RndB[0..5]) ‖ RndB[6..15] ‖ RndA[8..15]`. */
function sessionVector(label: readonly [number, number], rndA: Buffer, rndB: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from([label[0], label[1], 0x00, 0x01, 0x00, 0x80]),
    rndA.subarray(0, 2),
    xorBytes(rndA.subarray(2, 8), rndB.subarray(0, 6)),
    rndB.subarray(6, 16),
    rndA.subarray(8, 16),
  ])
}

/** SV1/SV2 and the AES session keys they yield. */
export type Ev2SessionKeyMaterial = { sv1: Buffer; sv2: Buffer; encKey: Buffer; macKey: Buffer }

/**
 * The AES session keys of an authentication: SesAuthENCKey = CMAC(K, SV1),
 * SesAuthMACKey = CMAC(K, SV2) (NT4H2421Gx §9.1.7, NIST SP 800-108 counter mode).
 * The data sheet numbers RndA's bytes from 15 down; here index 0 is the first byte.
 *
 * @example
 * ev2SessionKeys('00000000000000000000000000000000', rndA, rndB).encKey // 1309C877509E5A215007FF0ED19CA564 (AN12196 Table 14)
 */
export function ev2SessionKeys(key: KeyInput, rndA: Uint8Array, rndB: Uint8Array): Ev2SessionKeyMaterial {
  const a = fixedBytes(rndA, 16, 'RndA')
  const b = fixedBytes(rndB, 16, 'RndB')
  const k = toAesKey(key)
  const sv1 = sessionVector([0xa5, 0x5a], a, b)
  const sv2 = sessionVector([0x5a, 0xa5], a, b)
  return { sv1, sv2, encKey: aesCmac(k, sv1), macKey: aesCmac(k, sv2) }
}

export type AuthenticateEv2FirstOptions = {
  /** The key to authenticate with, 0–4. */
  keyNo: number
  key: KeyInput
  /** The reader's challenge; random by default. Inject it only to replay published vectors. */
  rndA?: Uint8Array
  /** PCDcap2 to send (0–6 bytes; none by default, i.e. LenCap 00 as AN12196 sends). Bit 1 of byte 0 would ask for LRP. */
  pcdCap2?: Uint8Array
}

export type AuthenticateEv2NonFirstOptions = {
  /** The active session to re-authenticate in: TI and CmdCtr carry over, and it ends now. */
  session: SecureSession
  keyNo: number
  key: KeyInput
  rndA?: Uint8Array
}

/**
 * One AES authentication from the reader's side: send {@link command}, pass the
 * answer to {@link part2}, send what it returns, pass that answer to {@link finish}.
 * One attempt per key: on AUTHENTICATION_ERROR (91 AE) stop, never try another key
 * (the failed-authentication counter blocks key 0 for good).
 *
 * @example
 * const auth = authenticateEv2First({ keyNo: 0, key })
 * const part2 = auth.part2(await transmit(auth.command))
 * const session = auth.finish(await transmit(part2))
 */
export class Ev2Authentication extends ReaderAuthentication {
  protected readonly names = { first: 'AuthenticateEV2First', nonFirst: 'AuthenticateEV2NonFirst' }

  /**
   * Decrypts RndB from the answer to part 1 and builds part 2: `90 AF 00 00 20 E(K, RndA ‖ RndB') 00`.
   *
   * @throws NtagStatusError when the card refused (e.g. 91 9D: the chip is in LRP mode; 91 AD: authentication delay)
   * @example
   * auth.part2(Buffer.from('A04C124213C186F22399D33AC2A3021591AF', 'hex')) // 90AF00002035C3E05A… (AN12196 Table 14)
   */
  part2(response: Uint8Array): Buffer {
    this.startPart2()
    const data = expectStatus(response, this.name, [SW_ADDITIONAL_FRAME])
    if (data.length !== 16) throw new SecureMessagingError('length', `${this.name} part 1: expected E(K, RndB) of 16 bytes, got ${data.length}`)
    const rndB = aesCbc('decrypt', this.key, ZERO_IV, data)
    this.answeredPart1(rndB)
    return nativeApdu(INS.additionalFrame, aesCbc('encrypt', this.key, ZERO_IV, Buffer.concat([this.rndA, rotateLeft1(rndB)])))
  }

  /**
   * Checks the card's proof (RndA' = RndA rotated left) and returns the session.
   *
   * @throws NtagStatusError on 91 AE (wrong key; stop there); SecureMessagingError (`mutual_auth`) when the card
   *   answered without proving it holds the key
   * @example
   * const session = auth.finish(Buffer.from('3FA64DB5…9100', 'hex')) // TI 9D00C4DF (AN12196 Table 14)
   */
  finish(response: Uint8Array): SecureSession {
    const rndB = this.startFinish()
    const first = this.previous === null
    const data = expectStatus(response, this.name)
    const expectedLength = first ? 32 : 16
    if (data.length !== expectedLength)
      throw new SecureMessagingError('length', `${this.name} part 2: expected ${expectedLength} encrypted bytes, got ${data.length}`)
    const plain = aesCbc('decrypt', this.key, ZERO_IV, data)
    const rndAPrime = first ? plain.subarray(4, 20) : plain
    if (!macEquals(rotateLeft1(this.rndA), rndAPrime))
      throw new SecureMessagingError('mutual_auth', `${this.name}: the card's answer does not prove it holds key ${this.keyNo} (RndA' mismatch)`)
    const { encKey, macKey } = ev2SessionKeys(this.key, this.rndA, rndB)
    const keys = aesSessionKeys(encKey, macKey)
    if (first) return new SecureSession({ keys, ti: plain.subarray(0, 4), keyNo: this.keyNo, cmdCtr: 0, pdCap2: plain.subarray(20, 26), pcdCap2: plain.subarray(26, 32) })
    const prev = this.previous!
    return new SecureSession({ keys, ti: prev.ti, keyNo: this.keyNo, cmdCtr: prev.cmdCtr, pdCap2: prev.pdCap2 ?? undefined, pcdCap2: prev.pcdCap2 ?? undefined })
  }
}

/**
 * Starts AuthenticateEV2First with a key (AES mode; the session's CmdCtr starts at 0).
 *
 * @throws RangeError for a key number outside 0–4 or PCDcap2 asking for LRP
 * @example
 * authenticateEv2First({ keyNo: 0, key: '00000000000000000000000000000000' }).command // 9071000002000000
 */
export function authenticateEv2First(options: AuthenticateEv2FirstOptions): Ev2Authentication {
  const keyNo = checkByte(options.keyNo, 'keyNo', 0, 4)
  const cap = Buffer.from(options.pcdCap2 ?? [])
  if (cap.length > 6) throw new RangeError('PCDcap2 is at most 6 bytes')
  if (cap.length > 0 && (cap[0]! & 0x02) !== 0) throw new RangeError('PCDcap2 bit 1 asks for LRP: use authenticateLrpFirst')
  return new Ev2Authentication(keyNo, options.key, options.rndA, nativeApdu(INS.authenticateFirst, Buffer.concat([Buffer.from([keyNo, cap.length]), cap])), null)
}

/**
 * Starts AuthenticateEV2NonFirst inside an AES session, e.g. to switch keys
 * (AN12196 Table 24). The old session ends at once: the card drops it as soon as
 * part 1 arrives. TI and CmdCtr carry over to the new session.
 *
 * @throws SecureMessagingError (`session`) when the session is not an active AES session
 * @example
 * authenticateEv2NonFirst({ session, keyNo: 0, key }).command // 90770000010000
 */
export function authenticateEv2NonFirst(options: AuthenticateEv2NonFirstOptions): Ev2Authentication {
  const keyNo = checkByte(options.keyNo, 'keyNo', 0, 4)
  if (!options.session.active || options.session.mode !== 'aes')
    throw new SecureMessagingError('session', 'AuthenticateEV2NonFirst needs an active AES session (use AuthenticateEV2First)')
  options.session.end('superseded by AuthenticateEV2NonFirst')
  return new Ev2Authentication(keyNo, options.key, options.rndA, nativeApdu(INS.authenticateNonFirst, Buffer.from([keyNo])), options.session)
}

// ---- the card's side ---------------------------------------------------------------

/** Part 1 of AuthenticateFirst as the card reads it. */
export type AuthenticateFirstRequest = {
  keyNo: number
  /** PCDcap2 adjusted as the card echoes it: truncated or zero-padded to 6 bytes. */
  pcdCap2: Buffer
  /** PCDcap2.1 bit 1: the reader asks for LRP (AuthenticateLRPFirst). */
  lrp: boolean
}

/**
 * Parses the data of an AuthenticateFirst part 1 (`KeyNo LenCap PCDcap2`).
 *
 * @returns the request, or null for a malformed one (the card answers 91 7E)
 * @example
 * parseAuthenticateFirstData(Buffer.from('0000', 'hex')) // { keyNo: 0, pcdCap2: 000000000000, lrp: false }
 * parseAuthenticateFirstData(Buffer.from('0006020000000000', 'hex')) // { keyNo: 0, …, lrp: true }
 */
export function parseAuthenticateFirstData(data: Uint8Array): AuthenticateFirstRequest | null {
  if (data.length < 2 || data.length !== 2 + data[1]!) return null
  const cap = Buffer.alloc(6)
  Buffer.from(data.subarray(2, 8)).copy(cap)
  return { keyNo: data[0]!, pcdCap2: cap, lrp: data[1]! > 0 && (data[2]! & 0x02) !== 0 }
}

/** What AuthenticateFirst fixes on the card: the new TI and the capabilities it echoes. */
type FirstState = { ti: Buffer; pdCap2: Buffer; pcdCap2: Buffer }

export type CardEv2FirstOptions = {
  /** The card's copy of the key the reader asked for. */
  key: KeyInput
  keyNo: number
  /** The card's challenge; random by default (inject to replay vectors). */
  rndB?: Uint8Array
  /** The new transaction identifier; random by default. */
  ti?: Uint8Array
  /** PDcap2 (default 000000000000, AES mode). */
  pdCap2?: Uint8Array
  /** PCDcap2 as received (parseAuthenticateFirstData), echoed back. */
  pcdCap2?: Uint8Array
}

/**
 * One AES authentication from the card's side: answer part 1 with
 * {@link part1Response}, then part 2 with {@link answer}.
 *
 * @example
 * const auth = CardEv2Authentication.first({ key, keyNo: 0, rndB, ti })
 * auth.part1Response // E(K, RndB) 91 AF
 * const { response, session } = auth.answer(part2Data) // session null and 91 AE for a wrong key
 */
export class CardEv2Authentication {
  readonly part1Response: Buffer
  readonly keyNo: number
  readonly #key: Buffer
  readonly #rndB: Buffer
  readonly #first: FirstState | null
  readonly #previous: CardSecureSession | null
  #answered = false

  private constructor(key: KeyInput, keyNo: number, rndB: Uint8Array | undefined, first: FirstState | null, previous: CardSecureSession | null) {
    this.keyNo = checkByte(keyNo, 'keyNo', 0, 4)
    this.#key = toAesKey(key)
    this.#rndB = rndB === undefined ? randomBytes(16) : fixedBytes(rndB, 16, 'RndB')
    this.#first = first
    this.#previous = previous
    this.part1Response = Buffer.concat([aesCbc('encrypt', this.#key, ZERO_IV, this.#rndB), Buffer.from([0x91, 0xaf])])
  }

  /**
   * AuthenticateEV2First: a new TI, CmdCtr 0.
   *
   * @example
   * CardEv2Authentication.first({ key, keyNo: 0, rndB: Buffer.from('B9E2FC78…', 'hex'), ti: Buffer.from('9D00C4DF', 'hex') })
   */
  static first(o: CardEv2FirstOptions): CardEv2Authentication {
    const ti = o.ti === undefined ? randomBytes(4) : fixedBytes(o.ti, 4, 'TI')
    const pdCap2 = o.pdCap2 === undefined ? Buffer.alloc(6) : fixedBytes(o.pdCap2, 6, 'PDcap2')
    const pcdCap2 = o.pcdCap2 === undefined ? Buffer.alloc(6) : fixedBytes(o.pcdCap2, 6, 'PCDcap2')
    return new CardEv2Authentication(o.key, o.keyNo, o.rndB, { ti, pdCap2, pcdCap2 }, null)
  }

  /**
   * AuthenticateEV2NonFirst inside an active session: TI and CmdCtr carry over; the old session ends.
   *
   * @example
   * CardEv2Authentication.nonFirst({ key, keyNo: 0, session })
   */
  static nonFirst(o: { key: KeyInput; keyNo: number; rndB?: Uint8Array; session: CardSecureSession }): CardEv2Authentication {
    o.session.end()
    return new CardEv2Authentication(o.key, o.keyNo, o.rndB, null, o.session)
  }

  /**
   * Answers part 2 (`E(K, RndA ‖ RndB')`, the 32 data bytes of `90 AF 00 00 20 … 00`).
   *
   * @returns the R-APDU and the new session; for a wrong key `91 AE` and no session
   * @example
   * auth.answer(Buffer.from('35C3E05A…', 'hex')).response // 3FA64DB5…9100 (AN12196 Table 14)
   */
  answer(part2Data: Uint8Array): { response: Buffer; session: CardSecureSession | null } {
    if (this.#answered) return { response: Buffer.from([0x91, 0xca]), session: null }
    this.#answered = true
    if (part2Data.length !== 32) return { response: Buffer.from([0x91, RC.lengthError]), session: null }
    const plain = aesCbc('decrypt', this.#key, ZERO_IV, part2Data)
    const rndA = plain.subarray(0, 16)
    if (!macEquals(rotateLeft1(this.#rndB), plain.subarray(16))) return { response: Buffer.from([0x91, RC.authenticationError]), session: null }
    const { encKey, macKey } = ev2SessionKeys(this.#key, rndA, this.#rndB)
    const keys = aesSessionKeys(encKey, macKey)
    const first = this.#first
    if (first) {
      const answer = aesCbc('encrypt', this.#key, ZERO_IV, Buffer.concat([first.ti, rotateLeft1(rndA), first.pdCap2, first.pcdCap2]))
      return { response: Buffer.concat([answer, Buffer.from([0x91, 0x00])]), session: new CardSecureSession({ keys, ti: first.ti, keyNo: this.keyNo, cmdCtr: 0 }) }
    }
    const prev = this.#previous!
    const answer = aesCbc('encrypt', this.#key, ZERO_IV, rotateLeft1(rndA))
    return { response: Buffer.concat([answer, Buffer.from([0x91, 0x00])]), session: new CardSecureSession({ keys, ti: prev.ti, keyNo: this.keyNo, cmdCtr: prev.cmdCtr }) }
  }
}
