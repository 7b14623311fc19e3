import type { FastifyPluginAsync } from 'fastify'
import type { RawData, WebSocket } from 'ws'
import { z } from 'zod'
import type { StationRow } from '../db/stations.js'
import { BaseError } from '../errors.js'
import { authenticateKiosk } from '../kiosk/kioskTokens.js'
import { kioskCounts, kioskSettings, kioskStation } from '../kiosk/kioskViews.js'
import { KIOSK_CLOSE, type KioskServerMessage, publicView, type StationEvent } from '../wire/feedProtocol.js'
import { checkSocketOrigin } from '../kiosk/socketOrigin.js'
import { checkStaffSession } from '../kiosk/staffAuth.js'

/** The page's first message must come within this long. */
export const HELLO_TIMEOUT_MS = 5000
/**
 * How often an open socket checks its credentials again: the kiosk token (a revoked token, or
 * station, stops its kiosks) and, for the staff view, the session (it ends a minute after the last staff request).
 */
const RECHECK_MS = 1000

const ClientMessage = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('hello'),
    token: z.string().min(1).max(200),
    since: z.number().int().min(0).optional(),
    staffSession: z.string().min(1).max(200).optional(),
  }),
  z.object({ type: z.literal('ping') }),
])

const rawText = (data: RawData): string =>
  Buffer.isBuffer(data) ? data.toString('utf8') : Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data).toString('utf8')

/**
 * GET /kiosk/ws: a kiosk page (or the staff view) follows its station's feed; opened from another
 * origin's page, it is refused with 403 before the upgrade (socketOrigin.ts). The token comes in
 * the first message (`hello`), not the URL: the page keeps it in its URL fragment, which never
 * reaches a log. Then `welcome`, every event after `since` (or none before the welcome, without
 * it), and live events, each with the counts from the database at the time it is sent. A kiosk
 * gets publicView(event); a staff session the whole event, until the session ends (close 4403).
 */
const kioskSocket: FastifyPluginAsync = async (app) => {
  const { store, now, feed, config } = app.services

  // The origin is checked in onRequest: a refusal is a plain 403 answer, before any upgrade.
  app.get('/kiosk/ws', { websocket: true, schema: { hide: true }, onRequest: async (request) => checkSocketOrigin(request, config) }, (socket: WebSocket, request) => {
    const log = request.log
    // One subscription per socket. `helloSeen` is set before the first await: hellos sent together
    // all arrive before the first is answered, and each would otherwise subscribe (and start its own
    // recheck) with only the last one's handles kept for the close.
    let helloSeen = false
    let stopped = false
    let unsubscribe: (() => void) | null = null
    let recheckTimer: NodeJS.Timeout | null = null
    const send = (message: KioskServerMessage) => {
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message))
    }
    // Everything this socket holds, let go at once: at its close, and at a refusal (the close
    // handshake may take the peer up to ws's 30 s; no recheck or delivery runs for it meanwhile).
    const stop = () => {
      stopped = true
      clearTimeout(helloTimer)
      if (recheckTimer) clearTimeout(recheckTimer)
      recheckTimer = null
      unsubscribe?.()
      unsubscribe = null
    }
    const refuse = (code: number, error: string, message: string) => {
      if (stopped) return
      stop()
      send({ type: 'error', error, message })
      socket.close(code, error)
    }
    const helloTimer = setTimeout(() => refuse(KIOSK_CLOSE.helloTimeout, 'hello_timeout', `Send { type: "hello", token } within ${HELLO_TIMEOUT_MS / 1000} s`), HELLO_TIMEOUT_MS)

    /** The token (and staff session) checked again; the next check is scheduled only after this one ends, so checks never overlap. */
    const recheck = async (token: string, stationId: number, staffSession: string | undefined) => {
      try {
        // A page that stays open is still seen (written once a minute at most).
        await authenticateKiosk(store, token, { seenAt: now() })
        if (staffSession !== undefined) await checkStaffSession(store, { stationId, token: staffSession, now: now(), touch: false })
      } catch (error) {
        // A timer's throw would be an unhandled rejection: the database gone for a moment is logged and checked again next time.
        if (!(error instanceof BaseError)) log.warn({ err: error }, 'kiosk recheck failed')
        else return refuse(error.code.startsWith('staff_') ? KIOSK_CLOSE.staffSessionEnded : KIOSK_CLOSE.unauthorized, error.code, error.message)
      }
      if (!stopped) recheckTimer = setTimeout(() => void recheck(token, stationId, staffSession), RECHECK_MS)
    }

    const hello = async (token: string, since: number | undefined, staffSession: string | undefined) => {
      let station: StationRow
      try {
        station = await authenticateKiosk(store, token, { seenAt: now() })
        if (staffSession !== undefined) await checkStaffSession(store, { stationId: station.id, token: staffSession, now: now(), touch: true })
      } catch (error) {
        if (!(error instanceof BaseError)) throw error
        return refuse(error.code.startsWith('staff_') ? KIOSK_CLOSE.staffSessionEnded : KIOSK_CLOSE.unauthorized, error.code, error.message)
      }
      const staff = staffSession !== undefined
      const lastEventId = (await store.stationEvents.last(station.id))?.id ?? 0
      const welcome: KioskServerMessage = {
        type: 'welcome',
        station: await kioskStation(store, station),
        counts: await kioskCounts(store, station, now()),
        reader: (await store.stationEvents.lastOfKind(station.id, 'reader'))?.data ?? null,
        lastEventId,
        staff,
        settings: kioskSettings(config),
      }
      // Closed while the welcome was read: nothing to subscribe for.
      if (stopped) return
      send(welcome)
      // Deliveries reading the counts take turns, so the kiosk gets the events in id order.
      let delivered = Promise.resolve()
      const unsubscribeFeed = await feed.subscribe(station.id, since ?? lastEventId, (events: StationEvent[]) => {
        delivered = delivered.then(async () => {
          if (stopped) return
          // The station row again: a mode or event change is among these events.
          const counts = await kioskCounts(store, (await store.stations.get(station.id)) ?? station, now())
          for (const event of events) {
            const view = staff ? event : publicView(event)
            if (view) send({ type: 'event', event: view, counts })
          }
        }).catch((error: unknown) => log.warn({ err: error }, 'kiosk feed delivery failed'))
      })
      // Closed while subscribing: the close has run already, nobody else will unsubscribe.
      if (stopped) return unsubscribeFeed()
      unsubscribe = unsubscribeFeed
      recheckTimer = setTimeout(() => void recheck(token, station.id, staffSession), RECHECK_MS)
    }

    socket.on('message', async (data: RawData, isBinary: boolean) => {
      let parsed: z.infer<typeof ClientMessage>
      try {
        if (isBinary) throw new Error('binary frame')
        parsed = ClientMessage.parse(JSON.parse(rawText(data)))
      } catch {
        return send({ type: 'error', error: 'invalid_message', message: 'Messages are JSON text: { type: "hello", token, since?, staffSession? } or { type: "ping" }' })
      }
      if (parsed.type === 'ping') return send({ type: 'pong' })
      // A second hello changes nothing (not the token, not `since`): answered, and the socket goes on as the first made it.
      if (helloSeen) return send({ type: 'error', error: 'hello_already_sent', message: 'This socket already had its hello; open a new socket to use another token or since' })
      helloSeen = true
      clearTimeout(helloTimer)
      try {
        await hello(parsed.token, parsed.since, parsed.staffSession)
      } catch (error) {
        // An event handler's rejection is nobody's: answered here (the database gone: try again), never an unhandled rejection.
        log.error({ err: error }, 'kiosk hello failed')
        stop()
        socket.close(1011, 'unavailable')
      }
    })
    socket.on('close', stop)
    socket.on('error', (error) => log.warn({ err: error }, 'kiosk socket error'))
  })
}

export default kioskSocket
