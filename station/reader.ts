/*
 * The one hardware boundary of the station. A live PC/SC reader (nfc-pcsc),
 * a fixture being replayed and the in-process virtual card all implement
 * these interfaces, so everything above them (reading a tap, recording it,
 * sending it to the gateway) is the same code whatever the source.
 */

/** One APDU exchange, as fixtures record it (hex, uppercase, no spaces). */
export type ApduExchange = { command: string; response: string; ms: number }

/** A card resting on a reader: the station talks to it with APDUs until it is removed. */
export interface CardSession {
  readonly readerName: string
  /** The ATR as uppercase hex. */
  readonly atr: string
  /**
   * Sends one command APDU and resolves with the response APDU (data and SW1 SW2).
   * Rejects with CardRemovedError once the card has left the field.
   */
  transmit(command: Buffer): Promise<Buffer>
}

export type ReaderEvents = {
  /** A card was placed (once per placement: a card resting on the reader is not a stream). */
  card: (card: CardSession) => void
  /** The card left the reader. */
  cardRemoved: () => void
  /** Something failed that is not a card removal; the reader stays usable. */
  error: (error: Error) => void
  /** The reader is gone (unplugged, or closed). */
  end: () => void
}

/** One reader. */
export interface Reader {
  readonly name: string
  on<E extends keyof ReaderEvents>(event: E, listener: ReaderEvents[E]): this
  off<E extends keyof ReaderEvents>(event: E, listener: ReaderEvents[E]): this
  close(): Promise<void>
}

export type ReaderSourceEvents = {
  reader: (reader: Reader) => void
  error: (error: Error) => void
  /** The reader daemon (pcscd) went away (false) or answers again (true). Sources without one never emit it. */
  pcscd: (reachable: boolean) => void
}

/** All readers of one backend; readers plugged in later arrive as `reader` events. */
export interface ReaderSource {
  on<E extends keyof ReaderSourceEvents>(event: E, listener: ReaderSourceEvents[E]): this
  off<E extends keyof ReaderSourceEvents>(event: E, listener: ReaderSourceEvents[E]): this
  /** Closes every reader; resolves when they are all closed. */
  close(): Promise<void>
}

/** The card left the field before the station finished reading it. */
export class CardRemovedError extends Error {
  override name = 'CardRemovedError'
  constructor(message = 'card removed during read, tap again') {
    super(message)
  }
}

/** A card answered an APDU with an error status word. */
export class CardStatusError extends Error {
  override name = 'CardStatusError'
  constructor(
    readonly step: string,
    readonly sw: string,
  ) {
    super(`${step} failed with status ${sw}`)
  }
}
