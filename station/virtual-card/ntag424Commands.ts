/*
 * The native (CLA 90) provisioning commands of a software NTAG 424 DNA, with
 * the card's side of authentication and secure messaging from src/provisioning:
 * AuthenticateEV2First/NonFirst and LRPFirst/NonFirst (71/77/AF), WriteData (8D),
 * GetFileSettings (F5), ChangeFileSettings (5F), ChangeKey (C4), GetKeyVersion (64),
 * GetCardUID (51), SetConfiguration (5C) and Read_Sig (3C). CommMode per command
 * and per access right as NT4H2421Gx Table 22 and §8.2.3; any error inside a
 * session ends it and carries no MAC (§9.1.9).
 */
import {
  CardEv2Authentication,
  CardLrpAuthentication,
  decodeChangeFileSettingsData,
  decodeChangeKeyData,
  encodeGetFileSettingsAnswer,
  FileSettingsError,
  parseAuthenticateFirstData,
  RC,
  signOriginality,
  validateFileSettings,
  type CardSecureSession,
  type CommMode,
  type FileSettings,
} from '../../src/provisioning/index.js'
import { checkAccess, STANDARD_DATA_FILE, type CardFile } from './ntag424Files.js'
import type { CardKeys } from './ntag424Keys.js'

/** Native return codes (SW2 after 91) the card uses beyond src/provisioning's RC. */
export const NATIVE = {
  ok: 0x00,
  additionalFrame: 0xaf,
  illegalCommand: 0x1c,
  integrityError: RC.integrityError,
  noSuchKey: 0x40,
  lengthError: RC.lengthError,
  permissionDenied: 0x9d,
  parameterError: 0x9e,
  authenticationDelay: 0xad,
  authenticationError: RC.authenticationError,
  boundaryError: 0xbe,
  commandAborted: 0xca,
  fileNotFound: 0xf0,
  readSigOk: 0x90,
} as const

/** What the command layer may read and change of the card. */
export type NativeCardState = {
  readonly keys: CardKeys
  readonly files: CardFile[]
  /** The real 7-byte UID (GetCardUID, Read_Sig). */
  readonly uid: Buffer
  lrp: boolean
  randomId: boolean
  /** The secp224r1 private key Read_Sig signs with (a test key: never NXP's). */
  readonly originalityKey: Buffer
  /** The card's randomness for an authentication: RndB (16 bytes), then for First a TI (4 bytes). */
  authRandom(length: number, what: 'RndB' | 'TI'): Uint8Array
  /** The NDEF file's contents or settings changed through a command. */
  ndefChanged(what: 'data' | 'settings'): void
  /** May SetConfiguration switch this card to LRP? (A template-configured card cannot follow.) */
  canEnableLrp(): boolean
}

type Pending = { auth: CardEv2Authentication | CardLrpAuthentication; keyNo: number }
type Accepted = { header: Buffer; data: Buffer; secured: boolean } | { error: Buffer }

const sw = (rc: number, data?: Uint8Array): Buffer => Buffer.concat([data ?? Buffer.alloc(0), Buffer.from([0x91, rc])])

/** The card's authentication and secure-messaging state, and the native commands that use it. */
export class Ntag424Commands {
  #session: CardSecureSession | null = null
  #pending: Pending | null = null

  constructor(private readonly card: NativeCardState) {}

  /** The active session's key number, or null. */
  get sessionKeyNo(): number | null {
    return this.#session?.active ? this.#session.keyNo : null
  }

  /** The active session (for tests that inspect CmdCtr and TI). */
  get session(): CardSecureSession | null {
    return this.#session?.active ? this.#session : null
  }

  /** True while part 2 of an authentication is awaited. */
  get awaitingPart2(): boolean {
    return this.#pending !== null
  }

  /** Field lost or power cycle: authentication state is gone. */
  reset(): void {
    this.#session?.end()
    this.#session = null
    this.#pending = null
  }

  /** An ISO command arrived: it aborts a half-done authentication, and inside a session counts as a plain command. */
  isoCommand(): void {
    this.#pending = null
  }

  /** Answers one native command (`90 INS 00 00 [Lc data] [00]`, data = the body after Lc). */
  handle(ins: number, body: Buffer): Buffer {
    if (ins === 0xaf && this.#pending) return this.#part2(body)
    // Any other command aborts an authentication in progress (§9.1.5).
    this.#pending = null
    switch (ins) {
      case 0x71:
        return this.#authenticateFirst(body)
      case 0x77:
        return this.#authenticateNonFirst(body)
      case 0x8d:
        return this.#writeData(body)
      case 0xf5:
        return this.#getFileSettings(body)
      case 0x5f:
        return this.#changeFileSettings(body)
      case 0xc4:
        return this.#changeKey(body)
      case 0x64:
        return this.#getKeyVersion(body)
      case 0x51:
        return this.#getCardUid(body)
      case 0x5c:
        return this.#setConfiguration(body)
      case 0x3c:
        return this.#readSig(body)
      default:
        return this.#error(NATIVE.illegalCommand)
    }
  }

  #error(rc: number): Buffer {
    if (this.#session?.active) {
      const out = this.#session.fail(rc)
      this.#session = null
      return out
    }
    this.#session = null
    return sw(rc)
  }

  #authenticateFirst(body: Buffer): Buffer {
    this.#session?.end()
    this.#session = null
    const request = parseAuthenticateFirstData(body)
    if (!request) return sw(NATIVE.lengthError)
    if (request.keyNo > 4) return sw(NATIVE.noSuchKey)
    if (this.card.lrp && !request.lrp) return sw(NATIVE.permissionDenied)
    if (this.card.keys.blocked(request.keyNo)) return sw(NATIVE.authenticationDelay)
    const key = this.card.keys.key(request.keyNo)
    const rndB = this.card.authRandom(16, 'RndB')
    const ti = this.card.authRandom(4, 'TI')
    const auth = this.card.lrp
      ? CardLrpAuthentication.first({ key, keyNo: request.keyNo, rndB, ti, pcdCap2: request.pcdCap2 })
      : // An AES chip asked for LRP answers with its AES challenge; the reader learns the mode from it.
        CardEv2Authentication.first({ key, keyNo: request.keyNo, rndB, ti, pcdCap2: request.pcdCap2 })
    this.#pending = { auth, keyNo: request.keyNo }
    return auth.part1Response
  }

  #authenticateNonFirst(body: Buffer): Buffer {
    const session = this.session
    if (!session) return this.#error(NATIVE.authenticationError)
    if (body.length !== 1) return this.#error(NATIVE.lengthError)
    const keyNo = body[0]!
    if (keyNo > 4) return this.#error(NATIVE.noSuchKey)
    if (this.card.keys.blocked(keyNo)) return this.#error(NATIVE.authenticationDelay)
    const key = this.card.keys.key(keyNo)
    const rndB = this.card.authRandom(16, 'RndB')
    const auth = this.card.lrp ? CardLrpAuthentication.nonFirst({ key, keyNo, rndB, session }) : CardEv2Authentication.nonFirst({ key, keyNo, rndB, session })
    this.#session = null
    this.#pending = { auth, keyNo }
    return auth.part1Response
  }

  #part2(body: Buffer): Buffer {
    const { auth, keyNo } = this.#pending!
    this.#pending = null
    const { response, session } = auth.answer(body)
    if (session) {
      this.card.keys.authenticated(keyNo)
      this.#session = session
    } else if (response[1] === NATIVE.authenticationError) this.card.keys.failed(keyNo)
    return response
  }

  /**
   * Splits a command body: plain without a session or under a free right (still
   * counted in the session's CmdCtr), verified and decrypted in a session otherwise.
   */
  #accept(ins: number, body: Buffer, headerLength: number, commMode: CommMode, secured: boolean): Accepted {
    const session = this.session
    if (!session || !secured) {
      if (body.length < headerLength) return { error: this.#error(NATIVE.lengthError) }
      if (session) session.acceptCommand(ins, body, { headerLength, commMode: 'plain' })
      return { header: body.subarray(0, headerLength), data: body.subarray(headerLength), secured: false }
    }
    const cmd = session.acceptCommand(ins, body, { headerLength, commMode })
    if (!cmd.ok) {
      this.#session = null
      return { error: sw(cmd.reason === 'length' ? NATIVE.lengthError : NATIVE.integrityError) }
    }
    return { header: cmd.header, data: cmd.data, secured: true }
  }

  /** The answer to an accepted command: secured in a session (CmdCtr advances even for plain), bare without. */
  #answer(data: Uint8Array, commMode: CommMode, rc: number = NATIVE.ok): Buffer {
    const session = this.session
    if (!session) return sw(rc, data)
    return session.respond(data, { commMode, rc })
  }

  #file(fileNo: number): CardFile | undefined {
    return this.card.files.find((f) => f.fileNo === fileNo)
  }

  #writeData(body: Buffer): Buffer {
    if (body.length < 7) return this.#error(NATIVE.lengthError)
    const file = this.#file(body[0]!)
    if (!file) return this.#error(NATIVE.fileNotFound)
    const ar = file.settings.accessRights
    const access = checkAccess([ar.write, ar.readWrite], this.sessionKeyNo)
    if (!access.allowed) return this.#error(access.status & 0xff)
    const commMode = access.secured ? file.settings.commMode : 'plain'
    const cmd = this.#accept(0x8d, body, 7, commMode, access.secured)
    if ('error' in cmd) return cmd.error
    const offset = cmd.header.readUIntLE(1, 3)
    const length = cmd.header.readUIntLE(4, 3)
    if (length === 0 || length !== cmd.data.length) return this.#error(NATIVE.lengthError)
    if (offset + length > file.size) return this.#error(NATIVE.boundaryError)
    cmd.data.copy(file.data, offset)
    if (file.fileNo === 2) this.card.ndefChanged('data')
    return this.#answer(Buffer.alloc(0), commMode)
  }

  #getFileSettings(body: Buffer): Buffer {
    const cmd = this.#accept(0xf5, body, 1, 'mac', this.session !== null)
    if ('error' in cmd) return cmd.error
    if (cmd.data.length !== 0) return this.#error(NATIVE.lengthError)
    const file = this.#file(cmd.header[0]!)
    if (!file) return this.#error(NATIVE.fileNotFound)
    return this.#answer(encodeGetFileSettingsAnswer(STANDARD_DATA_FILE, file.size, file.settings), 'mac')
  }

  #changeFileSettings(body: Buffer): Buffer {
    if (body.length < 1) return this.#error(NATIVE.lengthError)
    const file = this.#file(body[0]!)
    if (!file) return this.#error(NATIVE.fileNotFound)
    const access = checkAccess([file.settings.accessRights.change], this.sessionKeyNo)
    if (!access.allowed) return this.#error(access.status & 0xff)
    const cmd = this.#accept(0x5f, body, 1, 'full', access.secured)
    if ('error' in cmd) return cmd.error
    let settings: FileSettings
    try {
      settings = decodeChangeFileSettingsData(cmd.data)
    } catch (e) {
      if (e instanceof FileSettingsError) return this.#error(NATIVE.lengthError)
      throw e
    }
    const problems = validateFileSettings(settings, { fileNo: file.fileNo, mode: this.card.lrp ? 'lrp' : 'aes', fileSize: file.size })
    if (problems.length > 0) {
      // validateFileSettings names the status word a chip answers for each rule.
      const rc = problems.some((p) => p.includes('91 9D')) ? NATIVE.permissionDenied : problems.some((p) => p.includes('91 7E')) ? NATIVE.lengthError : NATIVE.parameterError
      return this.#error(rc)
    }
    file.settings = settings
    if (file.fileNo === 2) this.card.ndefChanged('settings')
    return this.#answer(Buffer.alloc(0), 'full')
  }

  #changeKey(body: Buffer): Buffer {
    const session = this.session
    if (!session) return this.#error(NATIVE.authenticationError)
    if (session.keyNo !== 0) return this.#error(NATIVE.permissionDenied)
    const cmd = this.#accept(0xc4, body, 1, 'full', true)
    if ('error' in cmd) return cmd.error
    const keyNo = cmd.header[0]!
    if (keyNo > 4) return this.#error(NATIVE.noSuchKey)
    const decoded = decodeChangeKeyData(keyNo, session.keyNo, cmd.data, this.card.keys.key(keyNo))
    if (!decoded.ok) return this.#error(decoded.reason === 'length' ? NATIVE.lengthError : NATIVE.integrityError)
    this.card.keys.change(keyNo, decoded.newKey, decoded.keyVersion)
    if (keyNo === session.keyNo) {
      // The session's own key: a bare 91 00, and the session is over (NT4H2421Gx §10.6.1).
      const out = session.respond(Buffer.alloc(0), { commMode: 'full', mac: false })
      this.#session = null
      return out
    }
    return this.#answer(Buffer.alloc(0), 'full')
  }

  #getKeyVersion(body: Buffer): Buffer {
    const cmd = this.#accept(0x64, body, 1, 'mac', this.session !== null)
    if ('error' in cmd) return cmd.error
    if (cmd.data.length !== 0) return this.#error(NATIVE.lengthError)
    const keyNo = cmd.header[0]!
    if (keyNo > 4) return this.#error(NATIVE.noSuchKey)
    return this.#answer(Buffer.from([this.card.keys.version(keyNo)]), 'mac')
  }

  #getCardUid(body: Buffer): Buffer {
    if (!this.session) return this.#error(NATIVE.authenticationError)
    const cmd = this.#accept(0x51, body, 0, 'full', true)
    if ('error' in cmd) return cmd.error
    if (cmd.data.length !== 0) return this.#error(NATIVE.lengthError)
    return this.#answer(this.card.uid, 'full')
  }

  #setConfiguration(body: Buffer): Buffer {
    const session = this.session
    if (!session) return this.#error(NATIVE.authenticationError)
    if (session.keyNo !== 0) return this.#error(NATIVE.permissionDenied)
    const cmd = this.#accept(0x5c, body, 1, 'full', true)
    if ('error' in cmd) return cmd.error
    const option = cmd.header[0]!
    const lengths: Record<number, number> = { 0x00: 1, 0x04: 2, 0x05: 10, 0x0a: 5, 0x0b: 1 }
    if (lengths[option] === undefined) return this.#error(NATIVE.parameterError)
    if (cmd.data.length !== lengths[option]) return this.#error(NATIVE.lengthError)
    const d = cmd.data
    if (option === 0x00 && (d[0]! & 0x02) !== 0) this.card.randomId = true
    if (option === 0x0a && (d[0]! & 0x01) !== 0) {
      const limit = d.readUInt16LE(1)
      if (limit === 0) return this.#error(NATIVE.parameterError)
      this.card.keys.setPolicy({ limit, decrement: d.readUInt16LE(3) })
    }
    if (option === 0x05 && (d[4]! & 0x02) !== 0 && !this.card.lrp) {
      if (!this.card.canEnableLrp()) return this.#error(NATIVE.permissionDenied)
      this.card.lrp = true
      // A real chip answers the switch to LRP with a bare 91 00 (AndroidCrypto's real-tag log); the AES session is over.
      const out = session.respond(Buffer.alloc(0), { commMode: 'full', mac: false })
      this.#session = null
      return out
    }
    return this.#answer(Buffer.alloc(0), 'full')
  }

  #readSig(body: Buffer): Buffer {
    const session = this.session
    if (!session && this.card.randomId) return this.#error(NATIVE.authenticationError)
    const cmd = this.#accept(0x3c, body, 1, 'full', session !== null)
    if ('error' in cmd) return cmd.error
    if (cmd.header[0] !== 0x00 || cmd.data.length !== 0) return this.#error(NATIVE.parameterError)
    return this.#answer(signOriginality(this.card.uid, this.card.originalityKey), 'full', NATIVE.readSigOk)
  }
}
