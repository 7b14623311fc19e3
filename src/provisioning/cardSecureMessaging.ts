import { checkByte } from './bytes.js'
import { checkCommMode, type CommMode, type SessionKeys } from './smCrypto.js'
import { MAX_CMD_CTR, SmChannel } from './smChannel.js'

export type CardSecureSessionOptions = {
  keys: SessionKeys
  ti: Uint8Array
  /** The key the PCD authenticated with. */
  keyNo: number
  cmdCtr?: number
  /** LRP EncCtr (1 after AuthenticateLRPFirst, 0 after NonFirst). */
  encCtr?: number
}

/** What the card took from a secured command, or why it answers 91 1E (INTEGRITY_ERROR) and drops the session. */
export type AcceptedCommand = { ok: true; header: Buffer; data: Buffer } | { ok: false; reason: 'mac' | 'padding' | 'length' }

/** NT4H2421Gx return codes the card side uses for its own checks. */
export const RC = { ok: 0x00, integrityError: 0x1e, lengthError: 0x7e, authenticationError: 0xae } as const

/**
 * The card's (PICC's) side of a secure-messaging session: verifies and decrypts
 * a command's body, then MACs and encrypts the answer, advancing CmdCtr as the
 * chip does (§9.1.2: after validating the command, before the answer's MAC).
 * For a software NTAG 424 DNA; the sessions come from the card side of the
 * authentications.
 *
 * @example
 * const cmd = card.acceptCommand(0x51, body, { headerLength: 0, commMode: 'full' })
 * const answer = cmd.ok ? card.respond(uid, { commMode: 'full' }) : card.fail(RC.integrityError)
 */
export class CardSecureSession {
  readonly mode: 'aes' | 'lrp'
  readonly keyNo: number
  readonly #channel: SmChannel
  #active = true

  constructor(options: CardSecureSessionOptions) {
    checkByte(options.keyNo, 'keyNo', 0, 4)
    this.#channel = new SmChannel(options.keys, options.ti, options.cmdCtr ?? 0, options.encCtr ?? (options.keys.mode === 'lrp' ? 1 : 0))
    this.mode = options.keys.mode
    this.keyNo = options.keyNo
  }

  get ti(): Buffer {
    return Buffer.from(this.#channel.ti)
  }

  get cmdCtr(): number {
    return this.#channel.cmdCtr
  }

  get encCtr(): number {
    return this.#channel.encCtr
  }

  get active(): boolean {
    return this.#active
  }

  /**
   * Verifies a command body (everything after Lc, before Le): `header ‖ data`
   * in plain mode, `header ‖ data ‖ MACt` in MAC mode, `header ‖ E(data) ‖ MACt`
   * in Full mode. A failed check ends the session; answer with {@link fail}.
   *
   * @example
   * card.acceptCommand(0xc4, body, { headerLength: 1, commMode: 'full' }) // { ok: true, header: <02>, data: key data }
   */
  acceptCommand(cmd: number, body: Uint8Array, options: { headerLength: number; commMode: CommMode }): AcceptedCommand {
    checkCommMode(options.commMode)
    const b = Buffer.from(body)
    if (!this.#active || this.#channel.cmdCtr >= MAX_CMD_CTR) return this.#reject('length')
    if (b.length < options.headerLength) return this.#reject('length')
    const header = b.subarray(0, options.headerLength)
    if (options.commMode === 'plain') return { ok: true, header, data: b.subarray(options.headerLength) }
    if (b.length < options.headerLength + 8) return this.#reject('length')
    const sent = b.subarray(options.headerLength, b.length - 8)
    if (!this.#channel.macMatches(this.#channel.commandMac(cmd, header, sent), b.subarray(b.length - 8))) return this.#reject('mac')
    if (options.commMode === 'mac' || sent.length === 0) return { ok: true, header, data: Buffer.from(sent) }
    const data = this.#channel.decrypt('command', sent)
    if (data === null) return this.#reject('padding')
    return { ok: true, header, data }
  }

  /**
   * The answer to an accepted command: `RespData ‖ MACt ‖ 91 rc` (encrypted in
   * Full mode), or plain data with no MAC in plain mode. Advances CmdCtr.
   * With `mac: false` the answer is the bare status word (ChangeKey of the
   * session's own key), and the session ends.
   *
   * @example
   * card.respond(Buffer.from('04958CAA5C5E80', 'hex'), { commMode: 'full' }) // AN12196 Table 29's answer
   */
  respond(data: Uint8Array = new Uint8Array(0), options: { commMode: CommMode; mac?: boolean; rc?: number }): Buffer {
    checkCommMode(options.commMode)
    const rc = options.rc ?? RC.ok
    if (options.mac === false) {
      this.#channel.advance()
      this.#active = false
      return Buffer.from([0x91, rc])
    }
    let out: Buffer
    if (options.commMode === 'plain') out = Buffer.from(data)
    else {
      const sent = options.commMode === 'full' && data.length > 0 ? this.#channel.encrypt('response', data) : Buffer.from(data)
      out = Buffer.concat([sent, this.#channel.responseMac(rc, sent)])
    }
    this.#channel.advance()
    return Buffer.concat([out, Buffer.from([0x91, rc])])
  }

  /**
   * An error answer: the bare `91 rc` with no MAC, and the session is over (§9.1.9).
   *
   * @example
   * card.fail(RC.integrityError) // 91 1E
   */
  fail(rc: number): Buffer {
    this.#active = false
    return Buffer.from([0x91, rc])
  }

  /** Ends the session without answering (a new authentication, the field lost). */
  end(): void {
    this.#active = false
  }

  #reject(reason: 'mac' | 'padding' | 'length'): AcceptedCommand {
    this.#active = false
    return { ok: false, reason }
  }
}
