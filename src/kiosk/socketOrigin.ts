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
 * The origins a kiosk page may open GET /kiosk/ws from. Configured (publicBaseUrl's origin and
 * kiosk.origins): those alone. Nothing configured (a LAN or a laptop gateway): the gateway's own, as
 * this request reached it (its Host and scheme; behind a trusted proxy, X-Forwarded-Host and
 * -Proto, as Fastify reads them with trustProxy). The Host is the client's word: a page of a name
 * that an attacker's DNS points at the gateway (DNS rebinding) sends its own name as Host and as
 * Origin, and passes; it still needs a kiosk token, which only the gateway's real origin's pages
 * hold (docs/decisions.md, issue 24 point 9). Normalized by URL (case, default ports).
 */
export function allowedSocketOrigins(request: FastifyRequest, config: Pick<Config, 'publicBaseUrl' | 'kiosk'>): string[] {
  const published = config.publicBaseUrl === undefined ? null : originOf(config.publicBaseUrl)
  const configured = [published, ...config.kiosk.origins].filter((o): o is string => o !== null)
  if (configured.length > 0) return configured
  const own = originOf(`${request.protocol}://${request.host}`)
  return own === null ? [] : [own]
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
export function checkSocketOrigin(request: FastifyRequest, config: Pick<Config, 'publicBaseUrl' | 'kiosk'>): void {
  const raw = request.headers.origin
  if (raw === undefined) return
  const origin = originOf(raw)
  if (origin !== null && origin !== 'null' && allowedSocketOrigins(request, config).includes(origin)) return
  throw new ForbiddenError(
    'origin_not_allowed',
    config.publicBaseUrl !== undefined || config.kiosk.origins.length > 0
      ? `A kiosk socket is opened by pages of publicBaseUrl or kiosk.origins only (origin ${raw} is neither; add it to kiosk.origins, TAPGATE_KIOSK_ORIGINS)`
      : `A kiosk socket is opened by the gateway's own pages only (origin ${raw} is not this gateway's; behind a proxy, set trustProxy, publicBaseUrl or kiosk.origins)`,
  )
}
