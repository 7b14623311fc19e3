import { macEquals } from '../sun/macEquals.js'
import { commandMacInput, decryptSessionData, encryptSessionData, lrpPaddedBlocks, macT, responseMacInput, sessionMac, type Direction, type SessionKeys } from './smCrypto.js'

/** CmdCtr is 16 bits; at FFFF the session can carry no further command (NT4H2421Gx §9.1.2). */
export const MAX_CMD_CTR = 0xffff

/**
 * The state both ends of a secure-messaging session share: keys, TI, CmdCtr and
 * (LRP) EncCtr, with the MAC and encryption steps applied in the order the data
 * sheet defines. Internal to the session classes, which add the APDU framing and
 * each side's checks.
 *
 * @example
 * const ch = new SmChannel(keys, ti, 0, 0)
 * const mac = ch.commandMac(0x51, Buffer.alloc(0), Buffer.alloc(0))
 */
export class SmChannel {
  readonly #keys: SessionKeys
  readonly ti: Buffer
  cmdCtr: number
  encCtr: number

  constructor(keys: SessionKeys, ti: Uint8Array, cmdCtr: number, encCtr: number) {
    if (ti.length !== 4) throw new RangeError('TI must be 4 bytes')
    if (!Number.isInteger(cmdCtr) || cmdCtr < 0 || cmdCtr > MAX_CMD_CTR) throw new RangeError('CmdCtr must be an integer 0…65535')
    if (!Number.isInteger(encCtr) || encCtr < 0 || encCtr > 0xffffffff) throw new RangeError('EncCtr must be a 32-bit unsigned integer')
    this.#keys = keys
    this.ti = Buffer.from(ti)
    this.cmdCtr = cmdCtr
    this.encCtr = encCtr
  }

  get mode(): 'aes' | 'lrp' {
    return this.#keys.mode
  }

  /** MACt of a command at the current CmdCtr. */
  commandMac(cmd: number, header: Uint8Array, body: Uint8Array): Buffer {
    return macT(sessionMac(this.#keys, commandMacInput(cmd, this.cmdCtr, this.ti, header, body)))
  }

  /** MACt of a response: over RC ‖ CmdCtr+1 ‖ TI ‖ body. */
  responseMac(rc: number, body: Uint8Array): Buffer {
    return macT(sessionMac(this.#keys, responseMacInput(rc, (this.cmdCtr + 1) & 0xffff, this.ti, body)))
  }

  /** Constant-time check of a received MACt. */
  macMatches(expected: Buffer, received: Uint8Array): boolean {
    return macEquals(expected, received)
  }

  /** Encrypts data flowing in `direction`; LRP consumes EncCtr blocks. */
  encrypt(direction: Direction, plaintext: Uint8Array): Buffer {
    const out = encryptSessionData(this.#keys, direction, this.ti, this.#ctrFor(direction), this.encCtr, plaintext)
    if (this.#keys.mode === 'lrp') this.encCtr += lrpPaddedBlocks(plaintext.length)
    return out
  }

  /** Decrypts data flowing in `direction`; null on a bad length or padding. */
  decrypt(direction: Direction, ciphertext: Uint8Array): Buffer | null {
    const out = decryptSessionData(this.#keys, direction, this.ti, this.#ctrFor(direction), this.encCtr, ciphertext)
    if (this.#keys.mode === 'lrp') this.encCtr += ciphertext.length >>> 4
    return out
  }

  /** The command/response pair is complete: CmdCtr moves on. */
  advance(): void {
    this.cmdCtr += 1
  }

  #ctrFor(direction: Direction): number {
    return direction === 'command' ? this.cmdCtr : (this.cmdCtr + 1) & 0xffff
  }
}
