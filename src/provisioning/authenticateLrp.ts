import { randomBytes } from 'node:crypto'
import { toAesKey, type KeyInput } from '../sun/aesKey.js'
import { lrpCmac } from '../sun/lrpCmac.js'
import { lricbDecrypt, lricbEncrypt } from '../sun/lricb.js'
import { macEquals } from '../sun/macEquals.js'
import { expectStatus, INS, nativeApdu } from './apdu.js'
import { checkByte, fixedBytes, xorBytes } from './bytes.js'
import { CardSecureSession, RC } from './cardSecureMessaging.js'
import { SecureMessagingError } from './errors.js'
import { ReaderAuthentication } from './readerAuthentication.js'
import { SecureSession } from './secureMessaging.js'
import { encCtrBytes, lrpSessionKeysFromMaster, sessionMac, type LrpSessionKeys } from './smCrypto.js'
import { SW_ADDITIONAL_FRAME } from './statusWords.js'

/*
 * AuthenticateLRPFirst / AuthenticateLRPNonFirst (NT4H2421Gx §9.2.5–9.2.7,
 * §10.4.3–10.4.4): the same INS codes as the AES authentication, with PCDCap2.1
 * bit 1 set. The card sends RndB in clear; both sides prove the key with
 * CMAC_LRP under the session MAC key, so the session keys exist before part 2.
 * Built on src/sun's LRP primitives (createLrp, lrpCmac, LRICB).
 */

/** PCDCap2 asking for LRP: PCDCap2.1 bit 1 (NT4H2421Gx §9.2.5). */
export const LRP_PCD_CAP2 = Buffer.from('020000000000', 'hex')
/** AuthMode byte the card puts before RndB when it answers in LRP mode. */
const AUTH_MODE_LRP = 0x01

/**
 * The 32-byte LRP session vector `00 01 00 80 ‖ RndA[0..1] ‖ (RndA[2..7] ⊕ RndB[0..5]) ‖ RndB[6..15] ‖ RndA[8..15] ‖ 96 69`.
 *
 * @example
 * lrpSessionVector(rndA, rndB) // 0001008074D7897AB6DD9C0E855319CD4618C9D2AED2B412DE0D2B1117E69669 (AN12321 Table 2)
 */
export function lrpSessionVector(rndA: Uint8Array, rndB: Uint8Array): Buffer {
  const a = fixedBytes(rndA, 16, 'RndA')
  const b = fixedBytes(rndB, 16, 'RndB')
  return Buffer.concat([
    Buffer.from([0x00, 0x01, 0x00, 0x80]),
    a.subarray(0, 2),
    xorBytes(a.subarray(2, 8), b.subarray(0, 6)),
    b.subarray(6, 16),
    a.subarray(8, 16),
    Buffer.from([0x96, 0x69]),
  ])
}

/** The LRP session key material: SV, SesAuthMasterKey, its two updated keys, and the keys as the session uses them. */
export type LrpSessionKeyMaterial = {
  sv: Buffer
  masterKey: Buffer
  /** SesAuthMACUpdateKey (updated key 0 of SesAuthMasterKey). */
  macUpdateKey: Buffer
  /** SesAuthENCUpdateKey (updated key 1). */
  encUpdateKey: Buffer
  keys: LrpSessionKeys
}

/**
 * LRP session keys from a session vector: SesAuthMasterKey = CMAC_LRP(Kx, SV), then
 * its plaintexts and updated keys 0 (MAC) and 1 (ENC) (NT4H2421Gx §9.2.7).
 *
 * @example
 * lrpSessionKeysFromSv(key, sv).masterKey
 */
export function lrpSessionKeysFromSv(key: KeyInput, sv: Uint8Array): LrpSessionKeyMaterial {
  const masterKey = lrpCmac(toAesKey(key), fixedBytes(sv, 32, 'SV'))
  const keys = lrpSessionKeysFromMaster(masterKey)
  return { sv: Buffer.from(sv), masterKey, macUpdateKey: keys.lrp.updatedKeys[0]!, encUpdateKey: keys.lrp.updatedKeys[1]!, keys }
}

/**
 * LRP session keys of an authentication from RndA and RndB.
 *
 * @example
 * lrpAuthSessionKeys('00000000000000000000000000000000', rndA, rndB).macUpdateKey // F56CADE598CC2A3FE47E438CFEB885DB (AN12321 Table 2)
 */
export function lrpAuthSessionKeys(key: KeyInput, rndA: Uint8Array, rndB: Uint8Array): LrpSessionKeyMaterial {
  return lrpSessionKeysFromSv(key, lrpSessionVector(rndA, rndB))
}

/** The 16-byte, untruncated LRP MAC the authentication exchanges. */
function authMac(keys: LrpSessionKeys, ...parts: Uint8Array[]): Buffer {
  return sessionMac(keys, Buffer.concat(parts))
}

/** LRICB under SesAuthENCKey with EncCtr 0 and no padding: PICCData of part 2. */
function piccDataCrypt(keys: LrpSessionKeys, op: 'encrypt' | 'decrypt', data: Buffer): Buffer {
  const p = { key: keys.lrp, updatedKey: 1, counter: encCtrBytes(0), pad: false }
  return op === 'encrypt' ? lricbEncrypt(p, data) : lricbDecrypt(p, data)
}

export type AuthenticateLrpFirstOptions = { keyNo: number; key: KeyInput; rndA?: Uint8Array }
export type AuthenticateLrpNonFirstOptions = { session: SecureSession; keyNo: number; key: KeyInput; rndA?: Uint8Array }

/**
 * One LRP authentication from the reader's side, used like Ev2Authentication:
 * {@link command}, {@link part2}, {@link finish}.
 *
 * @example
 * const auth = authenticateLrpFirst({ keyNo: 0, key })
 * const session = auth.finish(await transmit(auth.part2(await transmit(auth.command))))
 */
export class LrpAuthentication extends ReaderAuthentication {
  protected readonly names = { first: 'AuthenticateLRPFirst', nonFirst: 'AuthenticateLRPNonFirst' }
  #keys: LrpSessionKeys | null = null

  /**
   * Reads `01 ‖ RndB` and builds part 2: `90 AF 00 00 20 RndA ‖ CMAC_LRP(SesAuthMACKey, RndA ‖ RndB) 00`.
   *
   * @throws NtagStatusError when the card refused; SecureMessagingError (`mode`) when it answered an AES
   *   challenge (the chip is in AES mode: stop, and do not count on this attempt being harmless)
   * @example
   * auth.part2(Buffer.from('0156109A31977C855319CD4618C9D2AED291AF', 'hex')) // 90AF00002074D7DF6A…00 (AN12321 Table 2)
   */
  part2(response: Uint8Array): Buffer {
    this.startPart2()
    const data = expectStatus(response, this.name, [SW_ADDITIONAL_FRAME])
    if (data.length === 16) throw new SecureMessagingError('mode', `${this.name}: the chip answered with an AES challenge; it is in AES mode, not LRP`)
    if (data.length !== 17 || data[0] !== AUTH_MODE_LRP)
      throw new SecureMessagingError('length', `${this.name} part 1: expected AuthMode 01 and RndB (17 bytes), got ${data.length} bytes`)
    const rndB = Buffer.from(data.subarray(1))
    this.#keys = lrpAuthSessionKeys(this.key, this.rndA, rndB).keys
    this.answeredPart1(rndB)
    return nativeApdu(INS.additionalFrame, Buffer.concat([this.rndA, authMac(this.#keys, this.rndA, rndB)]))
  }

  /**
   * Checks PICCResponse, decrypts PICCData (First) and returns the session, with
   * EncCtr 1 after First (0 was used for PICCData) and 0 after NonFirst.
   *
   * @throws NtagStatusError on 91 AE (wrong key); SecureMessagingError (`mutual_auth`) when PICCResponse is wrong
   * @example
   * auth.finish(Buffer.from('F4FC209D…9100', 'hex')).ti // 58EE9424 (AN12321 Table 2)
   */
  finish(response: Uint8Array): SecureSession {
    const rndB = this.startFinish()
    const keys = this.#keys!
    const data = expectStatus(response, this.name)
    const first = this.previous === null
    const expectedLength = first ? 32 : 16
    if (data.length !== expectedLength)
      throw new SecureMessagingError('length', `${this.name} part 2: expected ${expectedLength} bytes, got ${data.length}`)
    const piccData = first ? data.subarray(0, 16) : Buffer.alloc(0)
    const piccResponse = first ? data.subarray(16) : data
    if (!macEquals(authMac(keys, rndB, this.rndA, piccData), piccResponse))
      throw new SecureMessagingError('mutual_auth', `${this.name}: the card's answer does not prove it holds key ${this.keyNo} (PICCResponse mismatch)`)
    if (first) {
      const plain = piccDataCrypt(keys, 'decrypt', Buffer.from(piccData))
      return new SecureSession({ keys, ti: plain.subarray(0, 4), keyNo: this.keyNo, cmdCtr: 0, encCtr: 1, pdCap2: plain.subarray(4, 10), pcdCap2: plain.subarray(10, 16) })
    }
    const prev = this.previous!
    return new SecureSession({ keys, ti: prev.ti, keyNo: this.keyNo, cmdCtr: prev.cmdCtr, encCtr: 0, pdCap2: prev.pdCap2 ?? undefined, pcdCap2: prev.pcdCap2 ?? undefined })
  }
}

/**
 * Starts AuthenticateLRPFirst: `90 71 00 00 08 KeyNo 06 020000000000 00`. On a
 * chip in AES mode the answer is an AES challenge, reported by part2.
 *
 * @example
 * authenticateLrpFirst({ keyNo: 0, key }).command // 9071000008000602000000000000
 */
export function authenticateLrpFirst(options: AuthenticateLrpFirstOptions): LrpAuthentication {
  const keyNo = checkByte(options.keyNo, 'keyNo', 0, 4)
  const data = Buffer.concat([Buffer.from([keyNo, LRP_PCD_CAP2.length]), LRP_PCD_CAP2])
  return new LrpAuthentication(keyNo, options.key, options.rndA, nativeApdu(INS.authenticateFirst, data), null)
}

/**
 * Starts AuthenticateLRPNonFirst in an active LRP session: `90 77 00 00 01 KeyNo 00`.
 * The old session ends at once.
 *
 * @throws SecureMessagingError (`session`) when the session is not an active LRP session
 * @example
 * authenticateLrpNonFirst({ session, keyNo: 0, key }).command // 90770000010000
 */
export function authenticateLrpNonFirst(options: AuthenticateLrpNonFirstOptions): LrpAuthentication {
  const keyNo = checkByte(options.keyNo, 'keyNo', 0, 4)
  if (!options.session.active || options.session.mode !== 'lrp')
    throw new SecureMessagingError('session', 'AuthenticateLRPNonFirst needs an active LRP session (use AuthenticateLRPFirst)')
  options.session.end('superseded by AuthenticateLRPNonFirst')
  return new LrpAuthentication(keyNo, options.key, options.rndA, nativeApdu(INS.authenticateNonFirst, Buffer.from([keyNo])), options.session)
}

// ---- the card's side ---------------------------------------------------------------

type FirstState = { ti: Buffer; pdCap2: Buffer; pcdCap2: Buffer }

/**
 * One LRP authentication from the card's side (a chip in LRP mode).
 *
 * @example
 * const auth = CardLrpAuthentication.first({ key, keyNo: 0, pcdCap2: request.pcdCap2 })
 * auth.part1Response // 01 ‖ RndB ‖ 91 AF
 * const { response, session } = auth.answer(part2Data)
 */
export class CardLrpAuthentication {
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
    this.part1Response = Buffer.concat([Buffer.from([AUTH_MODE_LRP]), this.#rndB, Buffer.from([0x91, 0xaf])])
  }

  /**
   * AuthenticateLRPFirst: new TI, CmdCtr 0; PDCap2 defaults to 020000000000 (LRP mode).
   *
   * @example
   * CardLrpAuthentication.first({ key, keyNo: 3, rndB, ti: Buffer.from('58EE9424', 'hex'), pcdCap2: LRP_PCD_CAP2 })
   */
  static first(o: { key: KeyInput; keyNo: number; rndB?: Uint8Array; ti?: Uint8Array; pdCap2?: Uint8Array; pcdCap2?: Uint8Array }): CardLrpAuthentication {
    const ti = o.ti === undefined ? randomBytes(4) : fixedBytes(o.ti, 4, 'TI')
    const pdCap2 = o.pdCap2 === undefined ? Buffer.from(LRP_PCD_CAP2) : fixedBytes(o.pdCap2, 6, 'PDCap2')
    const pcdCap2 = o.pcdCap2 === undefined ? Buffer.from(LRP_PCD_CAP2) : fixedBytes(o.pcdCap2, 6, 'PCDCap2')
    return new CardLrpAuthentication(o.key, o.keyNo, o.rndB, { ti, pdCap2, pcdCap2 }, null)
  }

  /**
   * AuthenticateLRPNonFirst in an active LRP session.
   *
   * @example
   * CardLrpAuthentication.nonFirst({ key, keyNo: 0, session })
   */
  static nonFirst(o: { key: KeyInput; keyNo: number; rndB?: Uint8Array; session: CardSecureSession }): CardLrpAuthentication {
    o.session.end()
    return new CardLrpAuthentication(o.key, o.keyNo, o.rndB, null, o.session)
  }

  /**
   * Answers part 2 (`RndA ‖ PCDResponse`, 32 bytes).
   *
   * @returns the R-APDU and the session; `91 AE` and no session when PCDResponse is wrong (a wrong key)
   * @example
   * auth.answer(Buffer.from('74D7DF6A…B3B4', 'hex')).response // F4FC209D…9100 (AN12321 Table 2)
   */
  answer(part2Data: Uint8Array): { response: Buffer; session: CardSecureSession | null } {
    if (this.#answered) return { response: Buffer.from([0x91, 0xca]), session: null }
    this.#answered = true
    if (part2Data.length !== 32) return { response: Buffer.from([0x91, RC.lengthError]), session: null }
    const rndA = Buffer.from(part2Data.subarray(0, 16))
    const { keys } = lrpAuthSessionKeys(this.#key, rndA, this.#rndB)
    if (!macEquals(authMac(keys, rndA, this.#rndB), part2Data.subarray(16))) return { response: Buffer.from([0x91, RC.authenticationError]), session: null }
    const ok = Buffer.from([0x91, 0x00])
    const first = this.#first
    if (first) {
      const piccData = piccDataCrypt(keys, 'encrypt', Buffer.concat([first.ti, first.pdCap2, first.pcdCap2]))
      const response = Buffer.concat([piccData, authMac(keys, this.#rndB, rndA, piccData), ok])
      return { response, session: new CardSecureSession({ keys, ti: first.ti, keyNo: this.keyNo, cmdCtr: 0, encCtr: 1 }) }
    }
    const prev = this.#previous!
    return {
      response: Buffer.concat([authMac(keys, this.#rndB, rndA), ok]),
      session: new CardSecureSession({ keys, ti: prev.ti, keyNo: this.keyNo, cmdCtr: prev.cmdCtr, encCtr: 0 }),
    }
  }
}
