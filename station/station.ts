import { EventEmitter } from 'node:events'
import type { RecordedOutcome } from './fixtures/format.js'
import type { FixtureRecorder, RecordingSession } from './fixtures/recorder.js'
import { readTap as defaultReadTap } from './readTap.js'
import { CardRemovedError, type CardSession } from '../src/card/cardSession.js'
import { ReadersBusyError, type GiveBack, type LocalReader } from '../src/card/localReaders.js'
import type { Reader, ReaderSource } from './reader.js'
import type { ReaderStatus, StationTap, TapSink, TapVerdict } from './tap.js'
import { verdictLine } from './verdictLine.js'

/** Where the station's one-line messages go (a console, or the gateway's pino logger). */
export type StationLog = {
  info: (line: string) => void
  warn: (line: string) => void
  error: (line: string) => void
}

/** What readTap gives back; the station stamps the reader and the time. */
export type ReadTap = (card: CardSession) => Promise<Pick<StationTap, 'rfUid' | 'url' | 'chip'>>

export type StationOptions = {
  /** Every reader of a backend, or a single reader. */
  source: ReaderSource | Reader
  /** Where taps go; null: read and report them only (`tapgate station --replay` without a gateway). */
  sink: TapSink | null
  log: StationLog
  /** Also record every tap (APDU transcript and verdict) to this fixture. */
  recorder?: FixtureRecorder
  /**
   * Print ref ids shortened (default true): a console or log is read by others, and a ref is a
   * bearer secret until its first query. False prints them whole.
   */
  redactRefs?: boolean
  /** Default: ./readTap.js. */
  readTap?: ReadTap
  now?: () => Date
}

export type StationEvents = {
  /** A reader arrived. */
  reader: [name: string]
  /** A reader left (unplugged, closed, or a replay ended). */
  readerGone: [name: string]
  /** A card was read; its verdict follows (`verdict`), unless there is no sink. */
  read: [tap: StationTap]
  /** The gateway's answer to a tap. */
  verdict: [event: { tap: StationTap; verdict: TapVerdict }]
  /** The card left before it was read: nothing was sent (the sink is told: the kiosk says "hold it longer"). */
  removed: [event: { readerName: string; at: string }]
  /** The readers' status changed (readers, a card on one, pcscd): also given to the sink. */
  status: [status: ReaderStatus]
  /** A read or a submit failed (the station carries on). */
  failed: [event: { readerName: string; stage: 'read' | 'submit' | 'reader'; error: Error }]
  /**
   * What became of a card, once known: `placed` numbers the cards in the order they were placed
   * (from 1), so a replay matches each outcome to its fixture line whatever order they finish in.
   */
  outcome: [event: { placed: number; readerName: string; tap: StationTap | null; outcome: RecordedOutcome }]
}

/** "Tap again" on the reader's console: the one message for a card pulled too soon. */
export const CARD_REMOVED_LINE = 'card removed during read, tap again'

/** How long close() waits for the readers. */
const CLOSE_READERS_MS = 3000

/**
 * A source finds its readers a moment after it opens (PC/SC: a few hundred ms). "No reader" is
 * reported only if none came by then, so a start does not flash "Reader disconnected" on a kiosk.
 */
const FIRST_STATUS_MS = 1500

function withTimeout(promise: Promise<void>, ms: number, message: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<void>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms)
    timer.unref()
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

const errorOf = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)))

const isReader = (source: ReaderSource | Reader): source is Reader => 'name' in source && typeof source.name === 'string'

/**
 * The station: on every card a reader sees, read the tap (readTap), stamp the
 * reader and the time, submit it to the sink and log the verdict in one line.
 * Taps are submitted in the order the cards were placed (a fast read never
 * overtakes a slow one), so a sink that keeps order keeps placement order.
 * Nothing a card, a reader or the sink does crashes the process: failures are
 * logged and emitted as `failed`.
 *
 * @example
 * const station = new Station({ source: openPcscReaders({ log }), sink: createInProcessSink(…), log })
 * station.on('verdict', ({ verdict }) => kiosk.show(verdict))
 * await station.close()
 */
export class Station extends EventEmitter<StationEvents> {
  private readonly source: ReaderSource | Reader
  private readonly sink: TapSink | null
  private readonly log: StationLog
  private readonly recorder: FixtureRecorder | undefined
  private readonly readTap: ReadTap
  private readonly now: () => Date
  private readonly redactRefs: boolean
  private readonly readers = new Map<Reader, { card: (card: CardSession) => void; cardRemoved: () => void; error: (e: Error) => void; end: () => void }>()
  private readonly inFlight = new Set<Promise<void>>()
  /** Resolves when every tap placed so far has been handed to the sink (or given up). */
  private submitTurn: Promise<void> = Promise.resolve()
  private closing = false
  /** Cards placed so far. */
  private placed = 0
  /** Readers with a card on them now. */
  private readonly cardOn = new Set<Reader>()
  private pcscd = true
  /** The last status reported (JSON), or null before the first. */
  private reported: string | null = null
  private readonly firstStatus: NodeJS.Timeout
  /** Who borrowed the readers (a provisioning run), and its queue of cards; null: cards are taps. */
  private borrower: { onCard: (card: CardSession) => Promise<void>; queue: Promise<void> } | null = null

  constructor(opts: StationOptions) {
    super()
    this.source = opts.source
    this.sink = opts.sink
    this.log = opts.log
    this.recorder = opts.recorder
    this.readTap = opts.readTap ?? defaultReadTap
    this.now = opts.now ?? (() => new Date())
    this.redactRefs = opts.redactRefs ?? true
    this.firstStatus = setTimeout(() => this.reported === null && this.reportStatus(), FIRST_STATUS_MS)
    this.firstStatus.unref()
    if (isReader(this.source)) this.addReader(this.source)
    else {
      this.source.on('reader', this.onReader)
      this.source.on('error', this.onSourceError)
      this.source.on('pcscd', this.onPcscd)
    }
  }

  /** Readers attached, a card on any of them, pcscd reachable. */
  get status(): ReaderStatus {
    // Sorted: the same readers are the same status, whatever order they attached in.
    return { readers: this.readerNames.sort(), cardPresent: this.cardOn.size > 0, pcscd: this.pcscd }
  }

  /** Readers currently attached. */
  get readerNames(): string[] {
    return [...this.readers.keys()].map((r) => r.name)
  }

  /** Each reader attached, with whether a card is on it now (sorted by name, as the status). */
  readerCards(): LocalReader[] {
    return [...this.readers.keys()].map((r) => ({ name: r.name, cardPresent: this.cardOn.has(r) })).sort((a, b) => a.name.localeCompare(b.name))
  }

  /**
   * Lends the readers: until given back, a card placed on one goes to `onCard` (one at a time, in
   * the order placed) and is not read as a tap, nor recorded (a provisioning run's APDUs, given the
   * old keys, reveal the new ones). The status (a card present) is reported as for a tap. A card
   * placed before the borrow stays a tap, one placed after the give-back is a tap again.
   *
   * @returns the give-back, which resolves once the cards already handed over are done
   * @throws ReadersBusyError when they are lent already
   */
  borrow(onCard: (card: CardSession) => Promise<void>): GiveBack {
    if (this.borrower) throw new ReadersBusyError()
    const borrower = { onCard, queue: Promise.resolve() }
    this.borrower = borrower
    return async () => {
      if (this.borrower === borrower) this.borrower = null
      await borrower.queue
    }
  }

  /** Resolves once no tap is being read or waiting for its verdict. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight])
  }

  /**
   * Stops taking cards and closes the readers, the sink and the recorder.
   * Taps waiting for a verdict are left to the sink (a GatewayLink keeps them in its disk queue).
   */
  async close(): Promise<void> {
    if (this.closing) return
    this.closing = true
    // The error listener stays: a source without one may throw on a late error.
    if (!isReader(this.source)) this.source.off('reader', this.onReader)
    // A reader stuck in its driver must not hold the process: it gets a few seconds.
    await this.settle('closing the readers', withTimeout(this.source.close(), CLOSE_READERS_MS, `the readers did not close within ${CLOSE_READERS_MS / 1000} s`))
    clearTimeout(this.firstStatus)
    for (const reader of [...this.readers.keys()]) this.dropReader(reader)
    // Said before the link closes: a kiosk shows the station's readers gone, not its last state.
    this.reportStatus()
    if (this.sink) await this.settle('closing the link', this.sink.close())
    // Reads still running end with the closed reader; taps still waiting end with the closed sink.
    await Promise.race([this.idle(), new Promise((resolve) => setTimeout(resolve, 2000).unref())])
    try {
      this.recorder?.close()
    } catch (error) {
      this.log.error(`closing the recording failed: ${errorOf(error).message}`)
    }
  }

  private async settle(what: string, promise: Promise<void>) {
    try {
      await promise
    } catch (error) {
      this.log.warn(`${what} failed: ${errorOf(error).message}`)
    }
  }

  private readonly onReader = (reader: Reader) => {
    if (this.closing) return void reader.close().catch(() => {})
    this.addReader(reader)
  }

  private readonly onPcscd = (reachable: boolean) => {
    this.pcscd = reachable
    this.reportStatus()
  }

  /** Tells the sink and the listeners the status, when it changed since it was last told. */
  private reportStatus() {
    const status = this.status
    const key = JSON.stringify(status)
    if (key === this.reported) return
    this.reported = key
    this.safeEmit('status', status)
    this.tellSink('reader status', () => this.sink?.reportStatus?.(status))
  }

  /** A sink that fails to take a status or a pulled card must not stop the station: logged. */
  private tellSink(what: string, fn: () => void) {
    try {
      fn()
    } catch (error) {
      this.log.warn(`could not report the ${what}: ${errorOf(error).message}`)
    }
  }

  private readonly onSourceError = (error: Error) => {
    this.log.warn(`readers: ${error.message}`)
    this.safeEmit('failed', { readerName: '', stage: 'reader', error })
  }

  private addReader(reader: Reader) {
    const handlers = {
      card: (card: CardSession) => {
        this.cardOn.add(reader)
        this.reportStatus()
        this.onCard(card)
      },
      cardRemoved: () => {
        if (this.cardOn.delete(reader)) this.reportStatus()
      },
      error: (error: Error) => {
        // Some backends name the reader in the message already.
        this.log.warn(error.message.startsWith(reader.name) ? error.message : `${reader.name}: ${error.message}`)
        this.safeEmit('failed', { readerName: reader.name, stage: 'reader', error })
      },
      end: () => {
        this.log.info(`${reader.name}: reader gone`)
        this.dropReader(reader)
        this.safeEmit('readerGone', reader.name)
        this.reportStatus()
      },
    }
    this.readers.set(reader, handlers)
    reader.on('card', handlers.card)
    reader.on('cardRemoved', handlers.cardRemoved)
    reader.on('error', handlers.error)
    reader.on('end', handlers.end)
    this.log.info(`${reader.name}: ready`)
    this.safeEmit('reader', reader.name)
    this.reportStatus()
  }

  private dropReader(reader: Reader) {
    const handlers = this.readers.get(reader)
    if (!handlers) return
    this.readers.delete(reader)
    this.cardOn.delete(reader)
    reader.off('card', handlers.card)
    reader.off('cardRemoved', handlers.cardRemoved)
    reader.off('end', handlers.end)
    // The error listener stays: an EventEmitter without one throws on a late error.
  }

  private onCard(card: CardSession) {
    if (this.closing) return
    if (this.borrower) return this.lend(card, this.borrower)
    // The submit order is taken now, when the card is placed.
    const previous = this.submitTurn
    let handedOver!: () => void
    this.submitTurn = new Promise<void>((resolve) => (handedOver = resolve))
    const task = this.handleCard(card, ++this.placed, previous, handedOver).catch((error: unknown) => {
      handedOver()
      this.log.error(`${card.readerName}: ${errorOf(error).message}`)
    })
    this.inFlight.add(task)
    void task.finally(() => this.inFlight.delete(task))
  }

  /** A card for the borrower, after the cards it was handed before; what it throws is logged (it must not stop the station). */
  private lend(card: CardSession, borrower: NonNullable<Station['borrower']>) {
    const task = borrower.queue.then(() => borrower.onCard(card)).catch((error: unknown) => {
      this.log.error(`${card.readerName}: ${errorOf(error).message}`)
    })
    borrower.queue = task
    // close() waits for it as for a tap being read.
    this.inFlight.add(task)
    void task.finally(() => this.inFlight.delete(task))
  }

  private async handleCard(card: CardSession, placed: number, previous: Promise<void>, handedOver: () => void) {
    const session: CardSession | RecordingSession = this.recorder ? this.recorder.begin(card) : card
    const readerName = card.readerName
    let tap: StationTap | null = null
    const record = (outcome: RecordedOutcome) => {
      if (this.recorder && session !== card) this.recorder.finish(session as RecordingSession, outcome)
      this.safeEmit('outcome', { placed, readerName, tap, outcome })
    }
    let read: Awaited<ReturnType<ReadTap>>
    try {
      read = await this.readTap(session)
    } catch (error) {
      handedOver()
      if (error instanceof CardRemovedError) {
        record({ error: 'card_removed' })
        this.log.info(`${readerName}: ${CARD_REMOVED_LINE}`)
        const at = this.now().toISOString()
        this.safeEmit('removed', { readerName, at })
        this.tellSink('pulled card', () => this.sink?.reportPulled?.({ readerName, at }))
      } else {
        const failure = errorOf(error)
        record({ error: 'read_failed', message: failure.message })
        this.log.warn(`${readerName}: could not read the card: ${failure.message}`)
        this.safeEmit('failed', { readerName, stage: 'read', error: failure })
      }
      return
    }
    tap = { rfUid: read.rfUid, url: read.url, chip: read.chip, readerName, readAt: this.now().toISOString() }
    this.safeEmit('read', tap)
    if (!this.sink) {
      handedOver()
      record({ error: 'not_sent' })
      this.log.info(`${readerName}: read ${tap.chip} ${tap.rfUid} ${tap.url}`)
      return
    }
    await previous
    let pending: Promise<TapVerdict>
    try {
      pending = this.sink.submit(tap)
    } finally {
      handedOver()
    }
    let verdict: TapVerdict
    try {
      verdict = await pending
    } catch (error) {
      record({ error: 'not_answered' })
      const failure = errorOf(error)
      if (!this.closing) this.log.error(`${readerName}: tap ${tap.rfUid} not submitted: ${failure.message}`)
      this.safeEmit('failed', { readerName, stage: 'submit', error: failure })
      return
    }
    record({ verdict })
    this.log.info(`${readerName}: ${verdictLine(tap, verdict, { redactRef: this.redactRefs })}`)
    this.safeEmit('verdict', { tap, verdict })
  }

  /** A listener that throws must not take the station down. */
  private safeEmit<E extends keyof StationEvents>(event: E, ...args: StationEvents[E]) {
    try {
      ;(this.emit as (event: E, ...args: StationEvents[E]) => boolean)(event, ...args)
    } catch (error) {
      this.log.error(`a ${event} listener failed: ${errorOf(error).message}`)
    }
  }
}

/** Starts a station (see {@link Station}). */
export function startStation(opts: StationOptions): Station {
  return new Station(opts)
}
