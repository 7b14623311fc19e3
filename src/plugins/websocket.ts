import fastifyWebsocket from '@fastify/websocket'
import fp from 'fastify-plugin'

/**
 * Far above any message of the station or kiosk sockets (a tap URL is at most 4 KiB). ws enforces
 * it per server, so both sockets share it; a larger frame closes the socket with 1009.
 */
export const MAX_SOCKET_MESSAGE_BYTES = 64 * 1024

/** How long a closing gateway waits for its sockets to take the close frame before cutting them. */
const CLOSE_GRACE_MS = 500

/**
 * @fastify/websocket, registered once for every WebSocket route (GET /station/ws, GET /kiosk/ws):
 * an upgrade request is routed like any request, so it runs the app's hooks, auth and error
 * handler, and a refusal gets the API's error body before any upgrade.
 *
 * On close, every socket gets a 1001 ("going away") and, after a short grace, is cut: the plugin's
 * default waits for each peer's close frame, and a peer that does not read (a station under
 * backpressure, a sleeping tablet) would hold the gateway's shutdown for ws's 30 s close timeout.
 */
export default fp(
  async (app) => {
    await app.register(fastifyWebsocket, {
      options: { maxPayload: MAX_SOCKET_MESSAGE_BYTES },
      preClose: async function () {
        const clients = [...app.websocketServer.clients]
        for (const client of clients) client.close(1001, 'gateway stopping')
        const closed = Promise.all(clients.map((client) => new Promise<void>((resolve) => (client.readyState === client.CLOSED ? resolve() : client.once('close', () => resolve())))))
        await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref())])
        for (const client of clients) if (client.readyState !== client.CLOSED) client.terminate()
        await new Promise<void>((resolve) => app.websocketServer.close(() => resolve()))
      },
    })
  },
  { name: 'websocket' },
)
