import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../config.js'
import { authenticateConsole, CONSOLE_SESSION_MS, type ConsoleSession } from '../console/consoleSessions.js'
import { ForbiddenError } from '../errors.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The console session of the `tapgate_console` cookie (console API routes only; set before the handler runs). */
    consoleSession: ConsoleSession | null
  }
  interface FastifyContextConfig {
    /** The one console route that needs no session: signing in (POST /console/api/session). */
    consoleSignIn?: boolean
  }
}

export const CONSOLE_COOKIE = 'tapgate_console'
// GET and HEAD change nothing; every other method needs the gateway's own Origin.
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** The first `tapgate_console` value of the Cookie header (the browser sends the most specific path first). */
export function consoleCookieOf(request: FastifyRequest): string | undefined {
  for (const pair of (request.headers.cookie ?? '').split(';')) {
    const at = pair.indexOf('=')
    if (at !== -1 && pair.slice(0, at).trim() === CONSOLE_COOKIE) return pair.slice(at + 1).trim() || undefined
  }
  return undefined
}

/**
 * Sets (or, with null, clears) the session cookie. HttpOnly: no script reads it. SameSite=Strict: a
 * browser sends it on this gateway's own pages' requests only. Path=/console: the API and other pages
 * never get it. Secure when the request came over HTTPS (behind a trusted proxy, its X-Forwarded-Proto):
 * a plain-HTTP gateway on a LAN could not set a Secure cookie at all.
 */
export function setConsoleCookie(request: FastifyRequest, reply: FastifyReply, token: string | null): void {
  const maxAge = token === null ? 0 : CONSOLE_SESSION_MS / 1000
  const secure = request.protocol === 'https' ? '; Secure' : ''
  reply.header('set-cookie', `${CONSOLE_COOKIE}=${token ?? ''}; HttpOnly; SameSite=Strict; Path=/console; Max-Age=${maxAge}${secure}`)
}

const originOf = (url: string): string | null => {
  try {
    const origin = new URL(url).origin
    // A sandboxed frame or a file: page sends "null": nobody's origin.
    return origin === 'null' ? null : origin
  } catch {
    return null
  }
}

/**
 * The second wall against cross-site requests (SameSite=Strict is the first): a request that changes
 * something must carry the gateway's own Origin, publicBaseUrl's when configured, else the one this
 * request reached (its scheme and Host; behind a trusted proxy, X-Forwarded-Proto and -Host). No
 * Origin is refused too: every browser sends one on a POST, PATCH, PUT or DELETE fetch, and the
 * console is a browser's.
 *
 * @throws ForbiddenError console_cross_site
 */
export function checkConsoleOrigin(request: FastifyRequest, config: Pick<Config, 'publicBaseUrl'>): void {
  const own = originOf(config.publicBaseUrl ?? `${request.protocol}://${request.host}`)
  const sent = request.headers.origin === undefined ? null : originOf(request.headers.origin)
  if (own !== null && sent === own) return
  throw new ForbiddenError(
    'console_cross_site',
    request.headers.origin === undefined
      ? "A console request that changes something must carry the console page's Origin header"
      : `A console request that changes something must come from the console's own pages (origin ${request.headers.origin} is not ${own ?? 'this gateway'})`,
  )
}

/**
 * The console API's guard, for the routes of the plugin that registers it (routes/console.ts): the
 * Origin check on every request that may change something, then the session cookie (401
 * console_signed_out), except on the sign-in route. Both in onRequest: before the body is read.
 */
export default fp(
  async (app) => {
    const { store, config, now } = app.services
    app.decorateRequest('consoleSession', null)
    app.addHook('onRequest', async (request) => {
      if (!SAFE_METHODS.has(request.method)) checkConsoleOrigin(request, config)
      if (request.routeOptions.config.consoleSignIn) return
      request.consoleSession = await authenticateConsole(store, { token: consoleCookieOf(request), now: now() })
    })
  },
  { name: 'consoleSession', dependencies: ['services'] },
)
