import { commandName, nativeApdu, splitResponse } from './apdu.js'
import { checkByte } from './bytes.js'
import { SecureMessagingError } from './errors.js'
import { checkCommMode, type CommMode, type SessionKeys } from './smCrypto.js'
import { MAX_CMD_CTR, SmChannel } from './smChannel.js'
import { NtagStatusError, SW_OK } from './statusWords.js'

export type SecureSessionOptions = {
  /** The session keys (aesSessionKeys / lrpSessionKeysFromMaster, or from an authentication). */
  keys: SessionKeys
  /** Transaction identifier, 4 bytes, from AuthenticateFirst. */
  ti: Uint8Array
  /** The key number the session was authenticated with (ChangeKey of that key ends the session). */
  keyNo: number
  /** CmdCtr at the start (0 after AuthenticateFirst; kept across NonFirst). */
  cmdCtr?: number
  /** LRP EncCtr at the start (1 after AuthenticateLRPFirst, 0 after NonFirst); ignored for AES. */
  encCtr?: number
  /** PDcap2 and PCDcap2 from AuthenticateFirst, when known. */
  pdCap2?: Uint8Array
  pcdCap2?: Uint8Array
}

export type CommandOptions = {
  /** CmdHeader: sent in clear, covered by the MAC (file number, offsets, key number, option byte). */
  header?: Uint8Array
  /** CmdData: encrypted in CommMode.Full. */
  data?: Uint8Array
  /** The command's communication mode; the answer is read in the same mode. */
  commMode: CommMode
}

export type ResponseOptions = {
  /** Status words that mean success (default 91 00). */
  okStatus?: readonly number[]
  /**
   * Whether the answer carries a MAC in CommMode.MAC/Full: `required` (default);
   * `none` when the command ends the session (ChangeKey of the session's own key);
   * `optional` for an answer that real chips send without one (SetConfiguration
   * switching to LRP) and that is therefore accepted unverified when bare.
   */
  mac?: 'required' | 'none' | 'optional'
  /** The command ends the session on success (ChangeKey of the authenticated key, the switch to LRP). */
  endsSession?: boolean
}

type Pending = { cmd: number; commMode: CommMode }

/**
 * The reader's (PCD's) side of an NTAG 424 DNA secure-messaging session
 * (NT4H2421Gx §9): builds each command APDU with its MAC and encryption, and
 * checks and decrypts the answer. One command at a time: {@link command}, send the
 * APDU, {@link response}. CmdCtr advances on every answered command, plain ones
 * included (AN12196 Tables 25→26). Any refusal, bad MAC or bad padding ends the
 * session, as it does on the card.
 *
 * Sessions come from the authentications (authenticateEv2.ts, authenticateLrp.ts);
 * {@link createSecureSession} builds one from known keys (for published vectors).
 * The keys live in private fields: a session never prints or serialises them.
 *
 * @example
 * const apdu = session.command(0x51, { commMode: 'full' })          // 90 51 00 00 08 MACt 00
 * const uid = session.response(await reader.transmit(apdu))        // decrypted, MAC checked
 */
export class SecureSession {
  readonly mode: 'aes' | 'lrp'
  readonly keyNo: number
  readonly pdCap2: Buffer | null
  readonly pcdCap2: Buffer | null
  readonly #channel: SmChannel
  #pending: Pending | null = null
  #ended: string | null = null

  constructor(options: SecureSessionOptions) {
    checkByte(options.keyNo, 'keyNo', 0, 4)
    this.#channel = new SmChannel(options.keys, options.ti, options.cmdCtr ?? 0, options.encCtr ?? (options.keys.mode === 'lrp' ? 1 : 0))
    this.mode = options.keys.mode
    this.keyNo = options.keyNo
    this.pdCap2 = options.pdCap2 ? Buffer.from(options.pdCap2) : null
    this.pcdCap2 = options.pcdCap2 ? Buffer.from(options.pcdCap2) : null
  }

  /** Transaction identifier (not secret: it is only an input to MACs and IVs). */
  get ti(): Buffer {
    return Buffer.from(this.#channel.ti)
  }

  /** CmdCtr of the next command. */
  get cmdCtr(): number {
    return this.#channel.cmdCtr
  }

  /** LRP EncCtr of the next encrypted block (0 and unused in AES mode). */
  get encCtr(): number {
    return this.#channel.encCtr
  }

  /** False once the session ended (refusal, bad answer, key 0 changed, superseded by a new authentication). */
  get active(): boolean {
    return this.#ended === null
  }

  /** Why the session ended, or null while it is active. */
  get endedBecause(): string | null {
    return this.#ended
  }

  /**
   * Builds the C-APDU of a command in this session.
   *
   * @throws SecureMessagingError (`session`) when the session ended, an answer is outstanding, or CmdCtr is exhausted;
   *   RangeError when the APDU would exceed 255 bytes of data
   * @example
   * session.command(0x8d, { header: Buffer.from('030000000A0000', 'hex'), data, commMode: 'full' }) // AN12196 Table 22
   */
  command(cmd: number, options: CommandOptions): Buffer {
    checkByte(cmd, 'command code')
    checkCommMode(options.commMode)
    if (this.#ended !== null) throw new SecureMessagingError('session', `${commandName(cmd)}: the session has ended (${this.#ended}); authenticate again`)
    if (this.#pending !== null)
      throw new SecureMessagingError('session', `${commandName(cmd)}: ${commandName(this.#pending.cmd)} is still waiting for its answer`)
    if (this.#channel.cmdCtr >= MAX_CMD_CTR) throw new SecureMessagingError('session', 'CmdCtr is exhausted (FFFF); authenticate again')
    const header = Buffer.from(options.header ?? [])
    const data = Buffer.from(options.data ?? [])
    let body: Buffer
    if (options.commMode === 'plain') body = Buffer.concat([header, data])
    else {
      const sent = options.commMode === 'full' && data.length > 0 ? this.#channel.encrypt('command', data) : data
      body = Buffer.concat([header, sent, this.#channel.commandMac(cmd, header, sent)])
    }
    const apdu = nativeApdu(cmd, body)
    this.#pending = { cmd, commMode: options.commMode }
    return apdu
  }

  /**
   * Checks the R-APDU of the outstanding command and returns its data, decrypted
   * in CommMode.Full, without the MAC.
   *
   * @throws NtagStatusError when the card refused (the session is over);
   *   SecureMessagingError (`response_mac`, `padding`, `length`, `sequence`) when the answer does not verify
   * @example
   * session.response(Buffer.from('FC222E5F7A5424529100', 'hex')) // <> (AN12196 Table 18: MAC checked)
   */
  response(rapdu: Uint8Array, options: ResponseOptions = {}): Buffer {
    const pending = this.#pending
    if (pending === null) throw new SecureMessagingError('sequence', 'an answer arrived, but no command is waiting for one')
    this.#pending = null
    const name = commandName(pending.cmd)
    const { data, sw } = splitResponse(rapdu)
    if (!(options.okStatus ?? [SW_OK]).includes(sw)) {
      this.end(`${name} was refused`)
      throw new NtagStatusError(name, sw)
    }
    let plain = data
    if (pending.commMode !== 'plain') plain = this.#verified(name, sw & 0xff, data, pending.commMode, options.mac ?? 'required')
    this.#channel.advance()
    if (options.endsSession) this.end(`${name} ended it`)
    return plain
  }

  /** Marks the session over (the card has dropped it, or a new authentication replaces it). */
  end(reason: string): void {
    this.#ended ??= reason
    this.#pending = null
  }

  #verified(name: string, rc: number, data: Buffer, commMode: CommMode, mac: 'required' | 'none' | 'optional'): Buffer {
    if (mac === 'none' || (mac === 'optional' && data.length === 0)) {
      if (data.length > 0) return this.#fail('length', `${name}: expected a bare status word, got ${data.length} bytes`)
      return data
    }
    if (data.length < 8) return this.#fail('length', `${name}: the answer has ${data.length} bytes, too short for its 8-byte MAC`)
    const body = data.subarray(0, data.length - 8)
    if (!this.#channel.macMatches(this.#channel.responseMac(rc, body), data.subarray(data.length - 8)))
      return this.#fail('response_mac', `${name}: the answer's MAC is not the card's (wrong session or CmdCtr out of step)`)
    if (commMode !== 'full' || body.length === 0) return Buffer.from(body)
    const plain = this.#channel.decrypt('response', body)
    if (plain === null) return this.#fail('padding', `${name}: the encrypted answer does not decrypt to valid padding`)
    return plain
  }

  #fail(kind: 'length' | 'response_mac' | 'padding', message: string): never {
    this.end(message)
    throw new SecureMessagingError(kind, message)
  }
}

/**
 * A session from known keys and counters: for replaying published vectors and
 * for tests. A real session comes from an authentication.
 *
 * @example
 * createSecureSession({ keys: aesSessionKeys(enc, mac), ti: Buffer.from('9D00C4DF', 'hex'), keyNo: 0, cmdCtr: 1 })
 */
export function createSecureSession(options: SecureSessionOptions): SecureSession {
  return new SecureSession(options)
}

/**
 * A command and the check of its answer, built for one session or for plain
 * (unauthenticated) use. Send {@link Exchange.apdu}, then pass the card's
 * answer to {@link Exchange.parse}; with a session, strictly in that order.
 */
export type Exchange<T> = {
  readonly apdu: Buffer
  parse(response: Uint8Array): T
}
