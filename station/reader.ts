/*
 * The one hardware boundary of the station. A live PC/SC reader (nfc-pcsc),
 * a fixture being replayed and the in-process virtual card all implement
 * these interfaces, so everything above them (reading a tap, recording it,
 * sending it to the gateway) is the same code whatever the source. The card
 * itself (CardSession, CardRemovedError) is src/card/cardSession.ts: provisioning
 * talks to cards too, and the gateway's library does not import the station app.
 */
import type { CardSession } from '../src/card/cardSession.js'

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
