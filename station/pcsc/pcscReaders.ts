import { EventEmitter } from 'node:events'
import net from 'node:net'
import { CardRemovedError, type CardSession } from '../../src/card/cardSession.js'
import type { Reader, ReaderSource } from '../reader.js'

/** Where the reader backend says what it does: readers coming and going, odd failures. `console` fits. */
export type PcscLog = { info(message: string): void; warn(message: string): void }

export type OpenPcscReadersParameters = {
  /** Only readers whose name contains this (case-insensitive); every reader when absent. */
  readerFilter?: string
  log: PcscLog
}

/**
 * The PC/SC stack cannot be used: nfc-pcsc or libpcsclite is not installed, or
 * pcscd does not answer. The message says what to do; a stack trace would not
 * help whoever runs a station, so the stack is the message alone.
 */
export class PcscUnavailableError extends Error {
  override name = 'PcscUnavailableError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.stack = `${this.name}: ${message}`
  }
}

// ---- the parts of nfc-pcsc 0.8.1 used here (it ships no types) ----
type NfcReader = EventEmitter & {
  readonly name: string
  /** The @pokusew/pcsclite CardReader: `state` is set once its first status has been emitted. */
  readonly reader: EventEmitter & { state?: number }
  autoProcessing: boolean
  connection: unknown
  transmit(data: Buffer, responseMaxLength: number): Promise<Buffer>
  disconnect(): Promise<boolean>
  close(): void
}
type NfcCard = { atr?: Buffer }
type Nfc = EventEmitter & { close(): void }
type NfcConstructor = new () => Nfc
type NfcModule = { NFC?: NfcConstructor; default?: { NFC?: NfcConstructor } }

/** Room for the longest short APDU answer (256 bytes) and its status word; nfc-pcsc fails an answer longer than this. */
const RESPONSE_MAX = 258
/** How often to try pcscd again after it went away. */
const RETRY_MS = 1_000
/** How long close() waits for a reader's status thread to stop before giving up on it. */
const END_TIMEOUT_MS = 3_000
/** PC/SC codes that mean the context is dead (pcscd went away): invalid handle, no service, service stopped. */
const CONTEXT_GONE = /0x(80100003|8010001d|8010001e)|Invalid handle|Service not available|service was stopped/i
/** PC/SC codes that mean the card is gone or unusable until it is tapped again. */
const CARD_GONE = /0x(80100069|80100068|80100067|80100066|8010002f|80100017|80100009)|Card Reader not connected|No card or connection/i

const INSTALL_HINT = 'install the PC/SC stack: `apt-get install pcscd libpcsclite-dev`, then `npm install` (it builds nfc-pcsc)'

/**
 * Opens every PC/SC reader (or those whose name contains `readerFilter`) through
 * nfc-pcsc, which is loaded here so the gateway runs without it.
 *
 * nfc-pcsc's own tag processing is off on every reader (`autoProcessing = false`:
 * with it on, an ISO-DEP card such as an NTAG 424 DNA is only an `error` event);
 * the station sends its own APDUs through the CardSession. Every nfc-pcsc
 * `error` is handled: an unhandled one would end the process.
 *
 * @throws PcscUnavailableError when nfc-pcsc or libpcsclite is missing, or pcscd cannot be reached
 * @example
 * const source = await openPcscReaders({ readerFilter: 'ACR122', log: console })
 * source.on('reader', (reader) => reader.on('card', async (card) => console.log(await readTap(card))))
 * process.once('SIGINT', () => void source.close())
 */
export async function openPcscReaders(p: OpenPcscReadersParameters): Promise<ReaderSource> {
  const NFC = await loadNfc()
  if (!(await pcscdAnswers()))
    throw new PcscUnavailableError(
      `pcscd is not running (nothing answers at ${pcscdSocket()}): start it with \`sudo systemctl enable --now pcscd.socket\` or \`sudo pcscd\`, or ${INSTALL_HINT}`,
    )
  let nfc: Nfc
  try {
    nfc = new NFC()
  } catch (error) {
    throw new PcscUnavailableError(`cannot use the PC/SC daemon (${(error as Error).message}): restart pcscd`, { cause: error })
  }
  return new PcscReaderSource(NFC, nfc, p)
}

/** Where libpcsclite finds pcscd on Linux. */
const pcscdSocket = () => process.env.PCSCLITE_CSOCK_NAME ?? '/run/pcscd/pcscd.comm'

/**
 * Whether pcscd accepts connections. Asked before every `new NFC()`: without pcscd, pcsclite's
 * constructor retries SCardEstablishContext in a busy loop on the main thread, and the process
 * hangs at 100% CPU until pcscd appears. Other systems have no socket to probe: assumed up.
 */
function pcscdAnswers(): Promise<boolean> {
  if (process.platform !== 'linux') return Promise.resolve(true)
  return new Promise((resolve) => {
    const socket = net.connect(pcscdSocket())
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

async function loadNfc(): Promise<NfcConstructor> {
  // A variable specifier: nfc-pcsc is optional and untyped, and this module must load without it.
  const specifier = 'nfc-pcsc'
  let module: NfcModule
  try {
    module = (await import(specifier)) as NfcModule
  } catch (error) {
    const why = (error as Error).message
    const missing = /libpcsclite/.test(why) ? 'libpcsclite is missing' : 'nfc-pcsc is not installed or did not build'
    throw new PcscUnavailableError(`${missing} (${why.split('\n')[0]}): ${INSTALL_HINT}`, { cause: error })
  }
  const NFC = module.NFC ?? module.default?.NFC
  if (!NFC) throw new PcscUnavailableError(`nfc-pcsc has no NFC export (expected nfc-pcsc 0.8.1): ${INSTALL_HINT}`)
  return NFC
}

/** Emits `event` now, or once someone listens: a reader or card that arrives before the listener is not lost. */
function emitOrHold(emitter: EventEmitter, event: string, ...args: unknown[]): void {
  if (emitter.listenerCount(event) > 0) {
    emitter.emit(event, ...args)
    return
  }
  const deliver = (added: string | symbol) => {
    if (added !== event) return
    emitter.off('newListener', deliver)
    // newListener fires before the listener is added.
    setImmediate(() => emitter.emit(event, ...args))
  }
  emitter.on('newListener', deliver)
}

class PcscReaderSource extends EventEmitter implements ReaderSource {
  private readonly readers = new Map<string, PcscReader>()
  /** Readers the filter left out: closed at once, and awaited on close(). */
  private readonly ignored = new Set<Promise<void>>()
  private nfc: Nfc | null = null
  private retry: NodeJS.Timeout | null = null
  private probe: NodeJS.Timeout | null = null
  private closing: Promise<void> | null = null

  constructor(
    private readonly NFC: NfcConstructor,
    nfc: Nfc,
    private readonly p: OpenPcscReadersParameters,
  ) {
    super()
    this.watch(nfc)
  }

  private watch(nfc: Nfc) {
    this.nfc = nfc
    nfc.on('reader', (raw: NfcReader) => this.attach(raw, nfc))
    nfc.on('error', (error: Error) => this.lost(nfc, error))
    // pcscd going away usually ends nfc-pcsc's reader-list watch with an error, but not always: in one CI run
    // only the readers failed ("Invalid handle") and the watch stayed silent. The socket tells in any case.
    this.probe = setInterval(() => void pcscdAnswers().then((up) => up || this.lost(nfc, new Error('pcscd no longer answers on its socket'))), RETRY_MS)
    this.probe.unref()
  }

  /**
   * The watch `nfc` is dead (pcscd went away: stopped, restarted, upgraded); its readers end on their own.
   * Watch again once pcscd answers, so the station does not go deaf until restarted. Said once per watch.
   */
  private lost(nfc: Nfc, error: Error) {
    // close() cancels nfc-pcsc's reader-list watch, which reports "Command cancelled".
    if (this.closing || nfc !== this.nfc) return
    this.nfc = null
    if (this.probe) clearInterval(this.probe)
    this.probe = null
    setImmediate(() => nfc.close())
    this.fail(new Error(`lost the PC/SC daemon (${error.message}); retrying every ${RETRY_MS / 1000} s`, { cause: error }))
    this.emit('pcscd', false)
    this.scheduleRetry()
  }

  private scheduleRetry() {
    this.retry = setTimeout(async () => {
      if (this.closing) return
      if (!(await pcscdAnswers())) return this.scheduleRetry()
      this.retry = null
      if (this.closing) return
      let nfc: Nfc
      try {
        nfc = new this.NFC()
      } catch {
        return this.scheduleRetry()
      }
      this.p.log.info('the PC/SC daemon answers again: watching readers')
      this.watch(nfc)
      this.emit('pcscd', true)
    }, RETRY_MS)
  }

  private attach(raw: NfcReader, nfc: Nfc) {
    raw.autoProcessing = false
    // A reader whose context died says so before the watch does, if the watch says it at all.
    raw.on('error', (error: Error) => CONTEXT_GONE.test(errorText(error)) && this.lost(nfc, new Error(errorText(error))))
    const filter = this.p.readerFilter?.toLowerCase()
    if (this.closing || (filter && !raw.name.toLowerCase().includes(filter))) {
      if (!this.closing) this.p.log.info(`ignoring reader "${raw.name}": its name does not contain "${this.p.readerFilter}"`)
      raw.on('error', () => {})
      const ended = closeRaw(raw, this.p.log).then(() => void this.ignored.delete(ended))
      this.ignored.add(ended)
      return
    }
    const reader = new PcscReader(raw, this.p.log)
    this.readers.set(raw.name, reader)
    this.p.log.info(`reader attached: ${raw.name}`)
    reader.on('end', () => {
      // After a pcscd restart a new reader of the same name may be attached before the old one ended.
      if (this.readers.get(raw.name) === reader) this.readers.delete(raw.name)
      if (!this.closing) this.p.log.info(`reader removed: ${raw.name}`)
    })
    emitOrHold(this, 'reader', reader)
  }

  private fail(error: Error) {
    if (this.listenerCount('error') > 0) this.emit('error', error)
    else this.p.log.warn(error.message)
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.retry) clearTimeout(this.retry)
      if (this.probe) clearInterval(this.probe)
      this.nfc?.close()
      await Promise.all([...[...this.readers.values()].map((r) => r.close()), ...this.ignored])
    })()
    return this.closing
  }
}

class PcscReader extends EventEmitter implements Reader {
  /** Counts placements: a session of an earlier placement must not talk to the next card. */
  private placement = 0
  private present = false
  private ended = false
  private closing: Promise<void> | null = null

  constructor(
    private readonly raw: NfcReader,
    private readonly log: PcscLog,
  ) {
    super()
    // nfc-pcsc reports a failed connect or disconnect with `this.emit(err)`: the error object as the event name,
    // so it reaches no listener. Route it to the error handling below.
    const emit = raw.emit.bind(raw)
    raw.emit = (event: string | symbol | Error, ...args: unknown[]) => (event instanceof Error ? emit('error', event) : emit(event, ...args))
    raw.on('card', (card: NfcCard) => this.placed(card))
    raw.on('card.off', () => this.lifted())
    raw.on('error', (error: Error) => this.failed(error))
    raw.on('end', () => {
      this.ended = true
      this.lifted()
      this.emit('end')
    })
  }

  get name(): string {
    return this.raw.name
  }

  private placed(card: NfcCard) {
    // One event per placement: nfc-pcsc may report the same card again (e.g. around pcscd's power cycle).
    if (this.present) return
    this.present = true
    const placement = ++this.placement
    const session: CardSession = {
      readerName: this.raw.name,
      atr: (card.atr ?? Buffer.alloc(0)).toString('hex').toUpperCase(),
      transmit: (command) => this.transmit(placement, command),
    }
    emitOrHold(this, 'card', session)
  }

  private lifted() {
    if (!this.present) return
    this.present = false
    this.emit('cardRemoved')
  }

  private failed(error: Error) {
    if (this.closing) return
    // A card lifted while nfc-pcsc connects or disconnects: nothing was read, nothing to report.
    if (CARD_GONE.test(errorText(error))) {
      this.log.info(`${this.raw.name}: card left before it could be read (${error.message})`)
      return
    }
    const wrapped = new Error(`${this.raw.name}: ${errorText(error)}`, { cause: error })
    if (this.listenerCount('error') > 0) this.emit('error', wrapped)
    else this.log.warn(wrapped.message)
  }

  private async transmit(placement: number, command: Buffer): Promise<Buffer> {
    const current = () => placement === this.placement && this.present && !this.ended
    if (!current()) throw new CardRemovedError()
    const started = performance.now()
    let response: Buffer
    try {
      response = await this.raw.transmit(command, RESPONSE_MAX)
    } catch (error) {
      if (!current() || CARD_GONE.test(errorText(error))) throw Object.assign(new CardRemovedError(), { cause: error })
      throw error
    }
    if (process.env.DEBUG_APDU === '1')
      this.log.info(
        `${this.raw.name} > ${command.toString('hex').toUpperCase()} < ${response.toString('hex').toUpperCase()} (${(performance.now() - started).toFixed(1)} ms)`,
      )
    return response
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.ended) return
      if (this.raw.connection) await this.raw.disconnect().catch(() => {})
      if (!this.ended) await closeRaw(this.raw, this.log)
    })()
    return this.closing
  }
}

/** nfc-pcsc wraps the pcsclite error (with its PC/SC code) in `previous`. */
function errorText(error: unknown): string {
  const e = error as { message?: string; previous?: { message?: string } }
  return [e.message, e.previous?.message].filter(Boolean).join(': ')
}

/**
 * Closes an nfc-pcsc reader; resolves on its `end` (its status thread stopped), or after END_TIMEOUT_MS.
 *
 * Two traps of @pokusew/pcsclite's CardReader.close(), both seen here:
 * - it takes the mutex the status callback holds, so called from inside a status event (or a
 *   promise settled there: nfc-pcsc's `card.off`) it deadlocks the process: hence setImmediate;
 * - before the reader's first status its thread stops without the final wake-up, so `end` never
 *   comes and a libuv handle keeps the process alive: hence the wait for that status.
 */
async function closeRaw(raw: NfcReader, log: PcscLog): Promise<void> {
  /** Resolves true at `event`, false after END_TIMEOUT_MS. */
  const bounded = (event: string, emitter: EventEmitter) =>
    new Promise<boolean>((resolve) => {
      const done = (seen: boolean) => {
        clearTimeout(timer)
        emitter.off(event, onEvent)
        resolve(seen)
      }
      const onEvent = () => done(true)
      const timer = setTimeout(() => done(false), END_TIMEOUT_MS)
      emitter.on(event, onEvent)
    })
  if (raw.reader.state === undefined) await bounded('status', raw.reader)
  await new Promise((resolve) => setImmediate(resolve))
  const ended = bounded('end', raw)
  raw.close()
  if (!(await ended)) log.warn(`reader "${raw.name}" did not confirm it closed within ${END_TIMEOUT_MS / 1000} s`)
}
