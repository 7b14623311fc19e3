/*
 * The card side of vsmartcard's vpcd protocol: puts a virtual card into a real
 * pcscd. The vpcd driver (Debian: vsmartcard-vpcd) listens on a TCP port per
 * reader slot; a card connects to insert itself and closes the connection to
 * leave. Every message is a 2-byte big-endian length and a payload; a 1-byte
 * payload is a control code (00 power off, 01 power on, 02 reset: no reply;
 * 04 get ATR: reply the ATR), anything longer a command APDU to answer.
 */
import net from 'node:net'
import { NTAG424_ATR, type VirtualNtag424 } from './ntag424.js'

export const VPCD_DEFAULT_HOST = '127.0.0.1'
/** Slot 0 of Debian's /etc/reader.conf.d/vpcd (0x8C7B); slot 1 is 35964. */
export const VPCD_DEFAULT_PORT = 35963

const CONTROL = { powerOff: 0x00, powerOn: 0x01, reset: 0x02, getAtr: 0x04 } as const

export type InsertCardOptions = {
  host?: string
  port?: number
  /** Give up connecting after this long (default 2000 ms). */
  connectTimeoutMs?: number
  /** Called with one line per message (control codes, APDUs with timing), e.g. console.error when DEBUG_APDU=1. */
  trace?: (line: string) => void
}

export type InsertedCard = {
  /** Resolves once pcscd has talked to the card (its first ATR request or power control): the card is in the reader. Stays pending if the card leaves first. */
  seen: Promise<void>
  /** Resolves when the card has left: remove(), removeAfter, or pcscd closed the connection. Never rejects. */
  removed: Promise<void>
  /** Why the card left, once it has: 'removed' (remove()), 'pulled' (removeAfter) or 'closed' (pcscd closed the connection or a socket error). */
  readonly reason: 'removed' | 'pulled' | 'closed' | null
  /** Takes the card out of the reader: closes the connection; resolves when it is closed. */
  remove(): Promise<void>
}

/** Connecting to the vpcd port failed: pcscd is not running, or it has no vpcd reader there. */
export class VpcdUnreachableError extends Error {
  override name = 'VpcdUnreachableError'
  constructor(
    readonly host: string,
    readonly port: number,
    cause: Error,
  ) {
    super(
      `cannot reach vpcd at ${host}:${port} (${(cause as NodeJS.ErrnoException).code ?? cause.message}): ` +
        'is pcscd running with vsmartcard-vpcd installed (apt-get install pcscd vsmartcard-vpcd)?',
      { cause },
    )
  }
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex').toUpperCase()

/**
 * Inserts a virtual card into pcscd through vpcd: connects to the driver's port and
 * answers pcscd until the card is removed. Only one card fits a slot: a second
 * connection waits (vpcd accepts it once the first card has left).
 *
 * @throws VpcdUnreachableError when the port cannot be reached
 * @example
 * const inserted = await insertCard(card, { port: 35963 })
 * await inserted.seen // pcscd has it; a PC/SC client now sees "Virtual PCD 00 00" with a card
 * await inserted.remove()
 */
export async function insertCard(card: VirtualNtag424, options: InsertCardOptions = {}): Promise<InsertedCard> {
  const host = options.host ?? VPCD_DEFAULT_HOST
  const port = options.port ?? VPCD_DEFAULT_PORT
  const trace = options.trace
  const socket = await connect(host, port, options.connectTimeoutMs ?? 2000)
  socket.setNoDelay(true)
  card.enterField()
  trace?.(`vpcd ${host}:${port}: connected (card inserted)`)

  let reason: InsertedCard['reason'] = null
  let markSeen!: () => void
  const seen = new Promise<void>((resolve) => (markSeen = resolve))
  const removed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      reason ??= 'closed'
      trace?.(`vpcd ${host}:${port}: closed (${reason})`)
      resolve()
    }),
  )
  // A reset by pcscd (e.g. when it stops) ends the insertion like a close; 'close' follows.
  socket.on('error', (error) => trace?.(`vpcd ${host}:${port}: ${error.message}`))

  let pending: Buffer = Buffer.alloc(0)
  let last = process.hrtime.bigint()
  const send = (payload: Buffer) => {
    const frame = Buffer.alloc(2 + payload.length)
    frame.writeUInt16BE(payload.length, 0)
    payload.copy(frame, 2)
    socket.write(frame)
  }

  const handle = (payload: Buffer) => {
    if (payload.length === 1) {
      markSeen()
      const code = payload[0]!
      if (code === CONTROL.getAtr) return send(Buffer.from(NTAG424_ATR, 'hex'))
      trace?.(`vpcd: control ${code.toString(16).padStart(2, '0')}`)
      // Power off, power on and reset all lose the selection; unknown codes are ignored (no reply expected).
      if (code === CONTROL.powerOff || code === CONTROL.powerOn || code === CONTROL.reset) card.reset()
      return
    }
    const started = process.hrtime.bigint()
    const { response, leaves } = card.exchange(payload)
    if (trace) {
      const ms = (n: bigint) => (Number(n) / 1e6).toFixed(1)
      trace(`vpcd: > ${hex(payload)}  < ${response ? hex(response) : '(card gone)'}  card ${ms(process.hrtime.bigint() - started)} ms, since last ${ms(started - last)} ms`)
      last = process.hrtime.bigint()
    }
    if (response) send(response)
    if (leaves) leave()
  }

  /**
   * The card leaves (removeAfter): FIN after the last answer, if any. vpcd reads end-of-file
   * where it waits for the next answer and ejects the card; pcscd hands that transmit a
   * 0-byte answer (no status word) and fails the ones after it.
   */
  const leave = () => {
    reason = 'pulled'
    socket.end()
    setTimeout(() => socket.destroy(), 500).unref()
  }

  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
    // Frames may arrive split (Debian's vpcd writes length and payload separately) or several per chunk.
    while (pending.length >= 2 && !socket.destroyed) {
      const length = pending.readUInt16BE(0)
      if (pending.length < 2 + length) break
      const payload = pending.subarray(2, 2 + length)
      pending = pending.subarray(2 + length)
      if (length > 0 && reason === null) handle(Buffer.from(payload))
    }
  })

  return {
    seen,
    removed,
    get reason() {
      return reason
    },
    async remove() {
      reason ??= 'removed'
      socket.end()
      // A peer that does not close its side would hold the socket half-open: do not wait for it.
      setTimeout(() => socket.destroy(), 500).unref()
      await removed
    },
  }
}

function connect(host: string, port: number, timeoutMs: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port })
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new VpcdUnreachableError(host, port, new Error(`no answer within ${timeoutMs} ms`)))
    }, timeoutMs)
    socket.once('connect', () => {
      clearTimeout(timer)
      socket.removeAllListeners('error')
      resolve(socket)
    })
    socket.once('error', (error) => {
      clearTimeout(timer)
      reject(new VpcdUnreachableError(host, port, error))
    })
  })
}
