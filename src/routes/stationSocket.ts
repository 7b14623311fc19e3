import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyPluginAsync } from 'fastify'
import { WebSocketServer, type RawData, type WebSocket } from 'ws'
import { z } from 'zod'
import { CLOSE_UNAUTHORIZED, STATION_SOCKET_PATH } from '../../station/link/protocol.js'
import type { TapVerdict } from '../../station/tap.js'
import type { StationRow } from '../db/stations.js'
import { BaseError } from '../errors.js'
import { StationTapBody } from '../schemas/taps.js'
import { authenticateStation } from '../stations/stations.js'
import { submitStationTap } from '../stations/submitStationTap.js'

/** A tap message: `{ id, tap }`; the tap is validated like a POST /station/taps body. */
const TapMessage = z.object({ id: z.union([z.string().min(1).max(100), z.number().int()]), tap: StationTapBody })

/** Far above one tap (a URL is at most 4 KiB). */
const MAX_MESSAGE_BYTES = 64 * 1024

/**
 * Taps one socket may have in flight: received and not yet answered, or answered and not yet handed
 * to the kernel. At the bound the socket is no longer read (TCP pushes back on the station) until
 * answers flush: a station that sends without reading cannot grow the gateway's memory.
 */
export const MAX_IN_FLIGHT_TAPS = 32

const statusText: Record<number, string> = { 401: 'Unauthorized', 404: 'Not Found', 400: 'Bad Request' }

/** Answers an upgrade request with a plain HTTP error (JSON body, like the API's) and closes the socket. */
function refuse(socket: Duplex, status: number, error: string, message: string) {
  const body = JSON.stringify({ success: false, error, message })
  socket.end(
    `HTTP/1.1 ${status} ${statusText[status] ?? 'Error'}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  )
}

const tokenOf = (request: IncomingMessage): string | undefined => {
  const header = request.headers['x-station-token']
  return Array.isArray(header) ? header[0] : header
}

/**
 * GET /station/ws: the station's WebSocket, on the gateway's own HTTP server
 * (the `ws` package in noServer mode on the server's 'upgrade' event). The
 * station token is checked before upgrading (401 with the API's error body
 * otherwise). Each `{ id, tap }` is verified exactly like POST /station/taps
 * (submitStationTap) and answered `{ id, verdict }`; a connection's taps are
 * verified one after another, in the order sent, so a queue drained in order
 * keeps its order. The token is checked again at every tap: a revoked
 * station's socket is closed with code 4401. Backpressure: see
 * MAX_IN_FLIGHT_TAPS (ws.pause() stops reading the underlying net.Socket).
 */
const stationSocket: FastifyPluginAsync = async (app) => {
  const { store, keyring, now } = app.services
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES })

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const pathname = new URL(request.url ?? '/', 'http://gateway').pathname
    // No other part of the gateway upgrades connections.
    if (pathname !== STATION_SOCKET_PATH) return refuse(socket, 404, 'route_not_found', `No WebSocket at ${pathname}`)
    const token = tokenOf(request)
    let station: StationRow
    try {
      station = authenticateStation(store, token)
    } catch (error) {
      if (!(error instanceof BaseError)) throw error
      app.log.info({ remoteAddress: request.socket.remoteAddress, error: error.code }, 'station socket refused')
      return refuse(socket, error.statusCode, error.code, error.message)
    }
    wss.handleUpgrade(request, socket, head, (ws) => serve(ws, station, token!, request.socket.remoteAddress))
  }

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
    let station: StationRow
    try {
      station = authenticateStation(store, token)
    } catch (error) {
      if (!(error instanceof BaseError)) throw error
      ws.close(CLOSE_UNAUTHORIZED, error.code)
      return null
    }
    const { id, tap } = message.data
    let verdict: TapVerdict
    try {
      // app.log, not the socket's child logger: submitStationTap names the station itself.
      const outcome = await submitStationTap({ store, keyring, now, log: app.log }, station, tap)
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

  app.server.on('upgrade', onUpgrade)
  // Before the HTTP server closes: it would otherwise wait for the upgraded sockets forever.
  app.addHook('preClose', async () => {
    app.server.off('upgrade', onUpgrade)
    for (const client of wss.clients) client.terminate()
    await new Promise<void>((resolve) => wss.close(() => resolve()))
  })
}

function rawText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8')
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8')
  return Buffer.from(data).toString('utf8')
}

export default stationSocket
