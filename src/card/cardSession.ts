/*
 * A card in a reader's field, as everything above the hardware sees it: the station reading a
 * tap and a provisioning run both talk to a card through this, whichever reader (PC/SC, a
 * fixture being replayed, the virtual card) holds it. The readers themselves are the station's
 * (station/reader.ts); this module imports nothing, so the gateway's library can use a card
 * without importing the station app.
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

/** The card left the field before the station finished reading it. */
export class CardRemovedError extends Error {
  override name = 'CardRemovedError'
  constructor(message = 'card removed during read, tap again') {
    super(message)
  }
}
