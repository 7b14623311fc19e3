import { EventEmitter } from 'node:events'
import type { IncomingMessage } from 'node:http'
import WebSocket, { type RawData } from 'ws'
import type { StationLog } from '../station.js'
import type { ReaderStatus, StationTap, TapSink, TapVerdict } from '../tap.js'
import { verdictLine } from '../verdictLine.js'
import { DiskQueue, type QueuedTap } from './diskQueue.js'
import { CLOSE_UNAUTHORIZED, STATION_SOCKET_PATH, STATUS_HEADER, type PulledMessage, type StatusMessage, type TapMessage } from './protocol.js'

export type LinkStatus = 'connecting' | 'up' | 'down' | 'unauthorized' | 'closed'

export type GatewayLinkOptions = {
  /** The gateway's URL (http(s)://host:port[/prefix]) or the socket's (ws(s)://…/station/ws). */
  gateway: string
  /** The station token (tgs_…). */
  token: string
  /** Where taps wait for the gateway; created if missing. */
  queueDir: string
  log: StationLog
  /** First reconnect delay (default 500 ms); doubles at each failure up to maxBackoffMs (default 30 s). */
  initialBackoffMs?: number
  maxBackoffMs?: number
  /** Ping period; a gateway that misses one pong is taken for gone (default 15 s). */
  pingIntervalMs?: number
  /** Opening handshake time limit (default 10 s). */
  connectTimeoutMs?: number
}

export type GatewayLinkEvents = {
  status: [status: LinkStatus, detail: string]
  /** Every verdict, including those of taps queued by an earlier run (no submit() waits for those). */
  verdict: [event: { tap: StationTap; verdict: TapVerdict; earlierRun: boolean }]
}

/** The gateway refused the station token (401, or revoked while connected): the link stops trying. */
export class LinkUnauthorizedError extends Error {
  override name = 'LinkUnauthorizedError'
}

/** The link was closed before the gateway answered; the tap stays in the queue dir. */
export class LinkClosedError extends Error {
  override name = 'LinkClosedError'
}

/** ws(s)://…/station/ws for a gateway URL. */
export function stationSocketUrl(gateway: string): string {
  const url = new URL(gateway)
  if (url.protocol === 'http:') url.protocol = 'ws:'
  else if (url.protocol === 'https:') url.protocol = 'wss:'
  else if (url.protocol !== 'ws:' && url.protocol !== 'wss:') throw new Error(`--gateway must be an http(s) URL, got ${gateway}`)
  if (!url.pathname.endsWith(STATION_SOCKET_PATH)) url.pathname = `${url.pathname.replace(/\/$/, '')}${STATION_SOCKET_PATH}`
  url.search = ''
  url.hash = ''
  return url.toString()
}

/** Below the gateway's frame limit (64 KiB); a tap is a few hundred bytes. */
const MAX_MESSAGE_BYTES = 60 * 1024

type Waiter = { resolve: (verdict: TapVerdict) => void; reject: (error: Error) => void }

/**
 * A TapSink over the gateway's WebSocket (GET /station/ws).
 *
 * Every tap is first written to the disk queue (one fsynced file per tap),
 * then sent; its file is deleted once the gateway answered. Taps go one at a
 * time, oldest first, so the gateway sees them in the order they were read,
 * and at most one tap is ever in doubt when the connection drops: it is sent
 * again, and if the gateway had already accepted it, its counter check
 * answers counter_replay (a tap is never counted twice). Taps left in the
 * queue dir by an earlier run are sent first.
 *
 * While the gateway is unreachable the link reconnects with capped
 * exponential backoff (with jitter) and `submit()` keeps waiting. A refused
 * token (401, or closed with 4401 when revoked) stops the link: it logs why,
 * does not retry, and `submit()` rejects with LinkUnauthorizedError (the taps
 * stay queued for a run with a valid token).
 *
 * Reader status is state, not a queue: the latest is sent on every (re)connect and on every
 * change, and nothing of it goes to disk. A card pulled mid-read is sent if the link is up and
 * dropped otherwise (by the time the gateway is back, "hold it longer" is stale). Both go only to a
 * gateway that says it takes them (STATUS_HEADER on its 101).
 */
export class GatewayLink extends EventEmitter<GatewayLinkEvents> implements TapSink {
  readonly url: string
  private readonly opts: Required<Omit<GatewayLinkOptions, 'gateway'>>
  private readonly queue: DiskQueue
  private readonly pending: QueuedTap[]
  private readonly waiters = new Map<string, Waiter>()
  private ws: WebSocket | null = null
  private inFlight: QueuedTap | null = null
  private attempt = 0
  private reconnectTimer: NodeJS.Timeout | undefined
  private pingTimer: NodeJS.Timeout | undefined
  private state: LinkStatus = 'connecting'
  private wasUp = false
  private unauthorizedMessage = ''
  private latestStatus: ReaderStatus | null = null
  /** The connected gateway takes `{ status }` and `{ pulled }` (its 101 carried STATUS_HEADER). */
  private takesStatus = false

  constructor(opts: GatewayLinkOptions) {
    super()
    this.url = stationSocketUrl(opts.gateway)
    this.opts = {
      token: opts.token,
      queueDir: opts.queueDir,
      log: opts.log,
      initialBackoffMs: opts.initialBackoffMs ?? 500,
      maxBackoffMs: opts.maxBackoffMs ?? 30_000,
      pingIntervalMs: opts.pingIntervalMs ?? 15_000,
      connectTimeoutMs: opts.connectTimeoutMs ?? 10_000,
    }
    this.queue = new DiskQueue(opts.queueDir)
    this.pending = this.queue.load((file, why) => this.opts.log.warn(`queue: ${file} is unreadable (${why}); kept as ${file}.bad`))
    if (this.pending.length > 0) this.opts.log.info(`${this.pending.length} taps queued by an earlier run in ${opts.queueDir}: sending them first`)
    this.connect()
  }

  get status(): LinkStatus {
    return this.state
  }

  /** Taps on disk waiting for the gateway. */
  get queued(): number {
    return this.pending.length
  }

  /** Queues the tap on disk, then resolves with the gateway's verdict (however long the gateway is away). */
  submit(tap: StationTap): Promise<TapVerdict> {
    if (this.state === 'closed') return Promise.reject(new LinkClosedError('the gateway link is closed'))
    const entry = this.queue.add(tap)
    this.pending.push(entry)
    const verdict = new Promise<TapVerdict>((resolve, reject) => this.waiters.set(entry.id, { resolve, reject }))
    if (this.state === 'unauthorized') {
      this.rejectWaiters((id) => new LinkUnauthorizedError(`${this.unauthorizedMessage}; tap ${id} kept in ${this.opts.queueDir}`))
    } else if (this.state === 'down') this.opts.log.info(`gateway unreachable: tap queued (${this.pending.length} waiting in ${this.opts.queueDir})`)
    this.pump()
    return verdict
  }

  /** Keeps the readers' status and sends it now if the gateway is connected (else on connect). */
  reportStatus(status: ReaderStatus): void {
    this.latestStatus = status
    this.sendStatus()
  }

  /** Tells a connected gateway a card left mid-read; dropped while the gateway is away. */
  reportPulled(event: { readerName: string; at: string }): void {
    const message: PulledMessage = { pulled: event }
    this.sendReport(message)
  }

  private sendStatus() {
    if (this.latestStatus) this.sendReport({ status: this.latestStatus } satisfies StatusMessage)
  }

  /** Not answered by the gateway, so it may go while a tap is in flight. */
  private sendReport(message: StatusMessage | PulledMessage) {
    const ws = this.ws
    if (this.state !== 'up' || !ws || ws.readyState !== WebSocket.OPEN || !this.takesStatus) return
    ws.send(JSON.stringify(message))
  }

  /** Stops reconnecting and closes the socket. Taps without a verdict stay in the queue dir; their submit() rejects with LinkClosedError. */
  async close(): Promise<void> {
    if (this.state === 'closed') return
    this.setStatus('closed', 'closed')
    clearTimeout(this.reconnectTimer)
    clearInterval(this.pingTimer)
    this.rejectWaiters((id) => new LinkClosedError(`the gateway link closed before the gateway answered; tap ${id} stays queued in ${this.opts.queueDir}`))
    const ws = this.ws
    this.ws = null
    if (ws && ws.readyState !== WebSocket.CLOSED) {
      const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()))
      if (ws.readyState === WebSocket.OPEN) ws.close(1000, 'station stopping')
      else ws.terminate()
      const timedOut = await Promise.race([closed.then(() => false), new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 1000).unref())])
      if (timedOut) ws.terminate()
    }
  }

  private setStatus(status: LinkStatus, detail: string) {
    if (this.state === status) return
    this.state = status
    this.emit('status', status, detail)
  }

  private rejectWaiters(errorFor: (id: string) => Error) {
    for (const [id, waiter] of this.waiters) waiter.reject(errorFor(id))
    this.waiters.clear()
  }

  private connect() {
    if (this.state === 'closed' || this.state === 'unauthorized') return
    this.setStatus('connecting', this.url)
    const ws = new WebSocket(this.url, {
      headers: { 'x-station-token': this.opts.token },
      handshakeTimeout: this.opts.connectTimeoutMs,
      maxPayload: 1024 * 1024,
    })
    this.ws = ws
    this.takesStatus = false
    ws.on('upgrade', (response: IncomingMessage) => (this.takesStatus = response.headers[STATUS_HEADER] === '1'))
    let refusal: { status: number; error: string; message: string } | null = null
    let failure = ''
    ws.on('unexpected-response', (_request, response: IncomingMessage) => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => (body = (body + chunk).slice(0, 4096)))
      response.on('end', () => {
        let parsed: { error?: unknown; message?: unknown } = {}
        try {
          parsed = JSON.parse(body) as typeof parsed
        } catch {
          // Not the gateway's JSON error body (a proxy's page): the status says enough.
        }
        const status = response.statusCode ?? 0
        refusal = {
          status,
          error: typeof parsed.error === 'string' ? parsed.error : `http_${status}`,
          message: typeof parsed.message === 'string' ? parsed.message : response.statusMessage ?? '',
        }
        ws.terminate()
      })
      response.on('error', () => ws.terminate())
    })
    ws.on('open', () => {
      this.attempt = 0
      const queued = this.pending.length
      this.opts.log.info(`gateway link up (${this.url})${queued > 0 ? `: sending ${queued} queued taps` : ''}`)
      this.wasUp = true
      this.setStatus('up', this.url)
      this.startPing(ws)
      // Before the queued taps: a kiosk shows the readers as they are now while the backlog drains.
      this.sendStatus()
      this.pump()
    })
    ws.on('message', (data: RawData) => this.onMessage(data))
    ws.on('error', (error: Error) => (failure = error.message))
    ws.on('close', (code: number, reason: Buffer) => {
      clearInterval(this.pingTimer)
      if (this.ws !== ws) return // closed on purpose (close()), or an older socket
      this.ws = null
      this.inFlight = null // sent again on the next connection
      const why: { status: number; error: string; message: string } | null = refusal
      if (why?.status === 401 || code === CLOSE_UNAUTHORIZED) {
        return this.unauthorized(why ? `${why.error}: ${why.message}` : `${reason.toString() || 'invalid_station_token'}: the station token was revoked`)
      }
      const detail = why ? `HTTP ${why.status} ${why.error}${why.message ? `: ${why.message}` : ''}` : failure || `connection closed (${code})`
      this.scheduleReconnect(detail)
    })
  }

  private unauthorized(message: string) {
    this.unauthorizedMessage = `the gateway refused the station token (401 ${message})`
    this.setStatus('unauthorized', message)
    this.opts.log.error(
      `${this.unauthorizedMessage}. Not retrying: check --token or $TAPGATE_STATION_TOKEN, or create a token with ` +
        `\`tapgate station create --team ID\` on the gateway. ${this.pending.length} taps kept in ${this.opts.queueDir}.`,
    )
    this.rejectWaiters((id) => new LinkUnauthorizedError(`${this.unauthorizedMessage}; tap ${id} kept in ${this.opts.queueDir}`))
  }

  private scheduleReconnect(detail: string) {
    if (this.state === 'closed' || this.state === 'unauthorized') return
    const delay = Math.min(this.opts.maxBackoffMs, this.opts.initialBackoffMs * 2 ** Math.min(this.attempt, 30))
    // Jitter: stations that lost the same gateway do not all come back at the same instant.
    const wait = Math.round(delay * (0.5 + Math.random() * 0.5))
    this.attempt += 1
    if (this.state !== 'down') {
      const queued = this.pending.length
      this.opts.log.warn(
        `gateway ${this.wasUp ? 'link down' : 'unreachable'} (${detail}); retrying with backoff up to ${Math.round(this.opts.maxBackoffMs / 1000)} s; ` +
          `taps wait in ${this.opts.queueDir} meanwhile (${queued} queued)`,
      )
    }
    this.setStatus('down', detail)
    clearTimeout(this.reconnectTimer)
    this.reconnectTimer = setTimeout(() => this.connect(), wait)
  }

  private startPing(ws: WebSocket) {
    let alive = true
    ws.on('pong', () => (alive = true))
    clearInterval(this.pingTimer)
    this.pingTimer = setInterval(() => {
      if (!alive) return void ws.terminate()
      alive = false
      ws.ping()
    }, this.opts.pingIntervalMs)
  }

  /** Sends the oldest queued tap, when the link is up and nothing is in flight. */
  private pump() {
    const ws = this.ws
    if (this.state !== 'up' || !ws || ws.readyState !== WebSocket.OPEN || this.inFlight) return
    const next = this.pending[0]
    if (!next) return
    const message: TapMessage = { id: next.id, tap: next.tap }
    const text = JSON.stringify(message)
    // The gateway closes the socket on a frame above its limit; sent again and again, it would never get through.
    if (Buffer.byteLength(text) > MAX_MESSAGE_BYTES)
      return this.complete(next, { accepted: false, reason: 'validation_failed', message: `the tap is ${Buffer.byteLength(text)} bytes as JSON, above the gateway's ${MAX_MESSAGE_BYTES}` })
    this.inFlight = next
    ws.send(text)
  }

  private onMessage(data: RawData) {
    let message: { id?: unknown; verdict?: TapVerdict; error?: unknown; message?: unknown }
    try {
      message = JSON.parse(data.toString()) as typeof message
    } catch {
      return this.opts.log.warn('the gateway sent a message that is not JSON; ignored')
    }
    const entry = this.inFlight
    if (!entry) return this.opts.log.warn('the gateway answered a tap the station did not send; ignored')
    if (message.verdict && String(message.id) === entry.id) return this.complete(entry, message.verdict)
    if (typeof message.error === 'string') {
      // The gateway could not read the message at all: sending it again would fail the same way.
      const text = typeof message.message === 'string' ? message.message : message.error
      return this.complete(entry, { accepted: false, reason: message.error, message: text })
    }
    this.opts.log.warn(`the gateway answered tap ${String(message.id)} while tap ${entry.id} was in flight; ignored`)
  }

  private complete(entry: QueuedTap, verdict: TapVerdict) {
    this.inFlight = null
    this.queue.remove(entry)
    if (this.pending[0] === entry) this.pending.shift()
    const waiter = this.waiters.get(entry.id)
    this.waiters.delete(entry.id)
    if (waiter) waiter.resolve(verdict)
    else this.opts.log.info(`${entry.tap.readerName}: (queued earlier) ${verdictLine(entry.tap, verdict)}`)
    this.emit('verdict', { tap: entry.tap, verdict, earlierRun: !waiter })
    this.pump()
  }
}
