import { randomBytes } from 'node:crypto'
import { toAesKey, type KeyInput } from '../sun/aesKey.js'
import { fixedBytes } from './bytes.js'
import { SecureMessagingError } from './errors.js'
import type { SecureSession } from './secureMessaging.js'

/**
 * What an AES (EV2) and an LRP authentication share from the reader's side:
 * the command of part 1, the reader's challenge RndA, the card's RndB once
 * part 1 is answered, and the order part2 → finish. Each mode does its own
 * cryptography (AN12196 for AES, AN12321 for LRP); a NonFirst one carries the
 * session it replaces.
 */
export abstract class ReaderAuthentication {
  /** Part 1, as built by the mode's First or NonFirst function. */
  readonly command: Buffer
  readonly keyNo: number
  protected readonly key: Buffer
  protected readonly rndA: Buffer
  /** The session a NonFirst authentication replaces; null for First. */
  protected readonly previous: SecureSession | null
  #rndB: Buffer | null = null
  #step: 'part1' | 'part2' | 'done' = 'part1'
  /** The command's names for messages, First and NonFirst. */
  protected abstract readonly names: { first: string; nonFirst: string }

  constructor(keyNo: number, key: KeyInput, rndA: Uint8Array | undefined, command: Buffer, previous: SecureSession | null) {
    this.keyNo = keyNo
    this.key = toAesKey(key)
    this.rndA = rndA === undefined ? randomBytes(16) : fixedBytes(rndA, 16, 'RndA')
    this.command = command
    this.previous = previous
  }

  /** The card's challenge, once part 1 was answered (for tests against published tables). */
  get rndB(): Buffer | null {
    return this.#rndB && Buffer.from(this.#rndB)
  }

  protected get name(): string {
    return this.previous === null ? this.names.first : this.names.nonFirst
  }

  /** Throws unless part 1 was sent and not yet answered: the start of part2. */
  protected startPart2(): void {
    if (this.#step !== 'part1') throw new SecureMessagingError('sequence', `${this.name}: part2 called out of order`)
  }

  /** part2 read the card's challenge: finish comes next. */
  protected answeredPart1(rndB: Buffer): void {
    this.#rndB = rndB
    this.#step = 'part2'
  }

  /** The start of finish: once, and only after part2. Returns RndB. */
  protected startFinish(): Buffer {
    if (this.#step !== 'part2') throw new SecureMessagingError('sequence', `${this.name}: finish called out of order`)
    this.#step = 'done'
    return this.#rndB!
  }
}
