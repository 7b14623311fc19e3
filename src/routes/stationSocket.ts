import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { RawData, WebSocket } from 'ws'
import { z } from 'zod'
import { CLOSE_UNAUTHORIZED, STATION_SOCKET_PATH, STATUS_HEADER } from '../../station/link/protocol.js'
import type { TapVerdict } from '../../station/tap.js'
import type { StationRow } from '../db/stations.js'
import { BaseError } from '../errors.js'
import { recordPulledCard, recordReaderStatus } from '../feed/stationStatus.js'
import { StationTapBody } from '../schemas/taps.js'
import { authenticateStation } from '../stations/stations.js'
import { submitStationTap } from '../stations/submitStationTap.js'

/** A tap message: `{ id, tap }`; the tap is validated like a POST /station/taps body. */
const TapMessage = z.object({ id: z.union([z.string().min(1).max(100), z.number().int()]), tap: StationTapBody })

/** `{ status }`: the station's readers now (station/link/protocol.ts StatusMessage). */
const StatusMessage = z.object({
  status: z.object({ readers: z.array(z.string().max(200)).max(64), cardPresent: z.boolean(), pcscd: z.boolean() }),
})
/** `{ pulled }`: a card left mid-read. */
const PulledMessage = z.object({ pulled: z.object({ readerName: z.string().max(200), at: z.iso.datetime({ offset: true }).optional() }) })

/**
 * Taps one socket may have in flight: received and not yet answered, or answered and not yet handed
 * to the kernel. At the bound the socket is no longer read (TCP pushes back on the station) until
 * answers flush: a station that sends without reading cannot grow the gateway's memory.
 */
export const MAX_IN_FLIGHT_TAPS = 32

const tokenOf = (request: FastifyRequest): string | undefined => {
  const header = request.headers['x-station-token']
  return Array.isArray(header) ? header[0] : header
}

/**
 * GET /station/ws: the station's WebSocket, a route of @fastify/websocket (src/plugins/websocket.ts),
 * so the upgrade request runs the app's hooks like any request. The station token is checked in
 * onRequest, before the upgrade: a missing or bad one gets 401 with the API's error body. Each
 * `{ id, tap }` is verified exactly like POST /station/taps (submitStationTap) and answered
 * `{ id, verdict }`; a connection's messages are handled one after another, in the order sent, so
 * a queue drained in order keeps its order. `{ status }` and `{ pulled }` go to the station's feed
 * (src/feed/stationStatus.ts) and are not answered. The token is checked again at every message:
 * a revoked station's socket is closed with code 4401. Backpressure: see MAX_IN_FLIGHT_TAPS
 * (ws.pause() stops reading the underlying net.Socket).
 */
const stationSocket: FastifyPluginAsync = async (app) => {
  const { store, now } = app.services
  /** The station each accepted upgrade request authenticated as (onRequest → the socket handler). */
  const stations = new WeakMap<FastifyRequest, StationRow>()

  // Tells the station this gateway takes `{ status }` and `{ pulled }` (station/link/protocol.ts).
  app.websocketServer.on('headers', (headers: string[], request: { url?: string }) => {
    if (new URL(request.url ?? '/', 'http://gateway').pathname === STATION_SOCKET_PATH) headers.push(`${STATUS_HEADER}: 1`)
  })

  app.get(
    STATION_SOCKET_PATH,
    {
      websocket: true,
      onRequest: async (request) => {
        try {
          stations.set(request, await authenticateStation(store, tokenOf(request)))
        } catch (error) {
          if (error instanceof BaseError) request.log.info({ remoteAddress: request.ip, error: error.code }, 'station socket refused')
          throw error
        }
      },
    },
    (ws, request) => {
      const station = stations.get(request)
      const token = tokenOf(request)
      // onRequest ran (or the request was refused): both are set here.
      if (!station || !token) return void ws.close(CLOSE_UNAUTHORIZED, 'station_token_missing')
      serve(ws, station, token, request.ip)
    },
  )

  function serve(ws: WebSocket, station: StationRow, token: string, remoteAddress: string | undefined) {
    const log = app.log.child({ stationId: station.id })
    log.info({ remoteAddress }, 'station connected')
    // Frames read and not yet verified: bounded, since reading stops at the bound (a few more may
    // already sit in the chunk being parsed when it does: ws emits them all).
    const waiting: { data: RawData; isBinary: boolean }[] = []
    let verifying = false
    /** Answers given to ws.send whose bytes the kernel has not taken yet. */
    let unflushed = 0
    const inFlight = () => waiting.length + (verifying ? 1 : 0) + unflushed

    const pace = () => {
      if (ws.readyState !== ws.OPEN) return
      if (inFlight() >= MAX_IN_FLIGHT_TAPS) ws.pause()
      else if (ws.isPaused) ws.resume()
    }
    // One tap at a time, in the order sent; none while MAX_IN_FLIGHT_TAPS answers wait for the kernel.
    const next = () => {
      if (verifying || unflushed >= MAX_IN_FLIGHT_TAPS) return
      const frame = waiting.shift()
      if (!frame) return
      verifying = true
      void answer(ws, log, token, frame.data, frame.isBinary)
        .then((message) => {
          if (message === null || ws.readyState !== ws.OPEN) return
          unflushed++
          ws.send(JSON.stringify(message), () => {
            unflushed--
            next()
            pace()
          })
        })
        .catch((error: unknown) => log.error({ err: error }, 'station message failed'))
        .finally(() => {
          verifying = false
          next()
          pace()
        })
    }

    ws.on('message', (data: RawData, isBinary: boolean) => {
      waiting.push({ data, isBinary })
      pace()
      next()
    })
    ws.on('close', (code) => {
      waiting.length = 0
      log.info({ code }, 'station disconnected')
    })
    ws.on('error', (error) => log.warn({ err: error }, 'station socket error'))
  }

  /** The token's station, checked again at every message; a revoked one closes the socket (4401) and is null. */
  async function stationOrClose(ws: WebSocket, token: string): Promise<StationRow | null> {
    try {
      return await authenticateStation(store, token)
    } catch (error) {
      if (!(error instanceof BaseError)) throw error
      ws.close(CLOSE_UNAUTHORIZED, error.code)
      return null
    }
  }

  /** The answer to one frame, or null when there is none to send (the socket closed). */
  async function answer(ws: WebSocket, log: typeof app.log, token: string, data: RawData, isBinary: boolean): Promise<object | null> {
    if (ws.readyState !== ws.OPEN) return null
    let parsed: unknown
    try {
      if (isBinary) throw new Error('binary frame')
      parsed = JSON.parse(rawText(data))
    } catch {
      return { error: 'invalid_message', message: 'Messages are JSON text frames: { "id": …, "tap": { rfUid, url, readerName?, readAt? } }' }
    }
    if (isObject(parsed) && ('status' in parsed || 'pulled' in parsed)) return report(ws, log, token, parsed)
    const message = TapMessage.safeParse(parsed)
    if (!message.success) {
      const id = (parsed as { id?: unknown } | null)?.id
      const detail = message.error.issues.map((i) => `${i.path.join('.') || 'message'}: ${i.message}`).join('; ')
      if (typeof id === 'string' || typeof id === 'number') {
        const verdict: TapVerdict = { accepted: false, reason: 'validation_failed', message: `Invalid tap: ${detail}`, detail }
        return { id, verdict }
      }
      return { error: 'invalid_message', message: `Invalid message: ${detail}` }
    }
    // A token revoked while connected stops the station here, before this tap is verified.
    const station = await stationOrClose(ws, token)
    if (!station) return null
    const { id, tap } = message.data
    let verdict: TapVerdict
    try {
      // app.log, not the socket's child logger: submitStationTap names the station itself.
      const outcome = await submitStationTap({ ...app.services, log: app.log }, station, tap)
      verdict = outcome.accepted
        ? { accepted: true, refId: outcome.refId, uid: outcome.uid, counter: outcome.counter, mode: outcome.mode }
        : { accepted: false, reason: outcome.reason, message: outcome.message, detail: outcome.detail }
    } catch (error) {
      // A sealed key (503) and the like: the HTTP route would answer its code; so does the socket.
      if (error instanceof BaseError) verdict = { accepted: false, reason: error.code, message: error.message }
      else {
        log.error({ err: error }, 'station tap failed')
        verdict = { accepted: false, reason: 'internal_error', message: 'Internal server error' }
      }
    }
    return { id, verdict }
  }

  /**
   * A `{ status }` or `{ pulled }` message: into the station's feed. Never answered (an answer
   * would be taken for the in-flight tap's); one that does not parse is logged and dropped.
   */
  async function report(ws: WebSocket, log: typeof app.log, token: string, parsed: object): Promise<null> {
    const station = await stationOrClose(ws, token)
    if (!station) return null
    const status = StatusMessage.safeParse(parsed)
    if (status.success) {
      await recordReaderStatus(store, { stationId: station.id, status: status.data.status, now: now() })
      return null
    }
    const pulled = PulledMessage.safeParse(parsed)
    if (pulled.success) {
      await recordPulledCard(store, { stationId: station.id, readerName: pulled.data.pulled.readerName, now: now() })
      return null
    }
    log.warn({ issues: (status.error ?? pulled.error).issues.length }, 'station sent an invalid status message; dropped')
    return null
  }
}

const isObject = (value: unknown): value is object => typeof value === 'object' && value !== null && !Array.isArray(value)

function rawText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8')
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8')
  return Buffer.from(data).toString('utf8')
}

export default stationSocket
