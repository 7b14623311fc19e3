import type { FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { ForbiddenError } from '../errors.js'

const originOf = (url: string): string | null => {
  try {
    return new URL(url).origin
  } catch {
    return null
  }
}

/**
 * The origins a kiosk page may open GET /kiosk/ws from: the gateway's own, as this request reached
 * it (its Host and scheme; behind a trusted proxy, X-Forwarded-Host and -Proto, as Fastify reads
 * them with trustProxy), and publicBaseUrl's. Normalized by URL (case, default ports).
 */
export function allowedSocketOrigins(request: FastifyRequest, config: Pick<Config, 'publicBaseUrl'>): string[] {
  const own = originOf(`${request.protocol}://${request.host}`)
  const published = config.publicBaseUrl === undefined ? null : originOf(config.publicBaseUrl)
  return [own, published].filter((o): o is string => o !== null)
}

/**
 * Refuses a kiosk socket opened by a page of another origin, before the upgrade: without this, any
 * web page a kiosk's browser (or a staff member's) visited could open the socket with a token it
 * got elsewhere, and a browser never blocks a cross-origin WebSocket by itself. A request without
 * Origin passes: every browser sends one on a WebSocket handshake, so it comes from a program,
 * which could send any Origin it liked anyway (the token in `hello` is what authenticates it).
 * `Origin: null` (a sandboxed frame, a file: page) is a browser's and is refused.
 *
 * @throws ForbiddenError origin_not_allowed
 * @example
 * app.get('/kiosk/ws', { websocket: true, onRequest: async (request) => checkSocketOrigin(request, config) }, handler)
 */
export function checkSocketOrigin(request: FastifyRequest, config: Pick<Config, 'publicBaseUrl'>): void {
  const raw = request.headers.origin
  if (raw === undefined) return
  const origin = originOf(raw)
  if (origin !== null && origin !== 'null' && allowedSocketOrigins(request, config).includes(origin)) return
  throw new ForbiddenError(
    'origin_not_allowed',
    `A kiosk socket is opened by the gateway's own pages only (origin ${raw} is not this gateway's; behind a proxy, set trustProxy or publicBaseUrl)`,
  )
}
