/*
 * An in-process reader for software cards (the virtual NTAG 424 DNA, the NTAG 213
 * of the fixture recorder): tests and benches tap them without pcscd. It
 * implements the same Reader/CardSession interfaces as a live PC/SC reader, so
 * the station code above cannot tell the difference.
 */
import { CardRemovedError, type CardSession } from '../../src/card/cardSession.js'
import type { Reader, ReaderEvents } from '../reader.js'
import type { CardExchange } from './ntag424.js'

/** What the reader needs of a card: the ATR a PC/SC reader reports for it, a power-up, and its answer to each APDU. */
export interface VirtualCard {
  readonly atr: string
  /** A tap: the card powers up in the field. */
  enterField(): void
  exchange(command: Uint8Array): CardExchange
}

export type VirtualReaderOptions = {
  /** Delay before each response, to imitate RF and reader time (default 0: answered on the next tick). */
  apduLatencyMs?: number
}

/** A Reader you place a virtual card on by hand. */
export interface VirtualReader<C extends VirtualCard = VirtualCard> extends Reader {
  /** The card on the reader, if any. */
  readonly card: C | null
  /**
   * A tap: puts `card` on the reader and emits `card` (synchronously) with its session.
   *
   * @throws Error when a card is already on the reader, or the reader is closed
   */
  place(card: C): CardSession
  /** Lifts the card: emits `cardRemoved`; the session's pending and later transmits reject with CardRemovedError. No-op without a card. */
  remove(): void
}

type Listeners = { [E in keyof ReaderEvents]: Set<ReaderEvents[E]> }

/**
 * Creates an in-process reader for virtual cards. Its sessions answer APDUs with the
 * card's own state machine, asynchronously, like a real reader.
 *
 * @example
 * const reader = createVirtualReader('Virtual reader 0')
 * reader.on('card', async (session) => console.log(await session.transmit(Buffer.from('FFCA000000', 'hex'))))
 * reader.place(new VirtualNtag424({ uid: '04DE5F1EACC040', metaKey: K, fileKey: K }))
 */
export function createVirtualReader<C extends VirtualCard = VirtualCard>(name = 'Virtual NTAG 424 reader', options: VirtualReaderOptions = {}): VirtualReader<C> {
  const latency = options.apduLatencyMs ?? 0
  const listeners: Listeners = { card: new Set(), cardRemoved: new Set(), error: new Set(), end: new Set() }
  let current: { card: C; session: CardSession } | null = null
  let closed = false
  /** A card that left after answering: its cardRemoved event is due on the next turn of the loop. */
  let leaving: NodeJS.Immediate | null = null

  function emit<E extends keyof ReaderEvents>(event: E, ...args: Parameters<ReaderEvents[E]>): void {
    for (const listener of [...listeners[event]]) (listener as (...a: Parameters<ReaderEvents[E]>) => void)(...args)
  }

  const tick = () => new Promise<void>((resolve) => (latency > 0 ? setTimeout(resolve, latency) : setImmediate(resolve)))

  function flushLeaving(): void {
    if (!leaving) return
    clearImmediate(leaving)
    leaving = null
    emit('cardRemoved')
  }

  function remove(): void {
    flushLeaving()
    if (!current) return
    current = null
    emit('cardRemoved')
  }

  const reader: VirtualReader<C> = {
    name,
    get card() {
      return current?.card ?? null
    },
    on(event, listener) {
      listeners[event].add(listener)
      return this
    },
    off(event, listener) {
      listeners[event].delete(listener)
      return this
    },
    place(card) {
      if (closed) throw new Error(`${name} is closed`)
      if (current) throw new Error(`${name} already holds a card: remove it first`)
      flushLeaving()
      card.enterField()
      const session: CardSession = {
        readerName: name,
        atr: card.atr,
        async transmit(command) {
          if (current?.session !== session) throw new CardRemovedError()
          await tick()
          if (current?.session !== session) throw new CardRemovedError()
          const { response, leaves } = card.exchange(command)
          if (!response) {
            remove()
            throw new CardRemovedError()
          }
          if (leaves) {
            // Later transmits fail at once; the event follows the response, as the card leaves after answering.
            current = null
            leaving = setImmediate(flushLeaving)
          }
          return response
        },
      }
      current = { card, session }
      emit('card', session)
      return session
    },
    remove,
    async close() {
      if (closed) return
      closed = true
      remove()
      emit('end')
    },
  }
  return reader
}
