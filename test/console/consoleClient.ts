import type { InjectOptions } from 'fastify'
import { expect } from 'vitest'
import { createConsoleLink } from '../../src/console/consoleSessions.js'
import { type BackendGateway, call } from '../helpers/gateway.js'

// The console's requests as its browser half makes them, for the console's API tests.

/** app.inject's requests reach `localhost:80` over http: the gateway's own origin, as URL normalizes it. */
export const OWN = 'http://localhost'

export type Call = { status: number; body: any; headers: Record<string, unknown> }

export type ConsoleRequest = { cookie?: string; body?: unknown; origin?: string | null; contentType?: string }

/** A console request: the session cookie, and Origin on what changes something (a page's fetch sends it on every non-GET). */
export function consoleRequest(gw: Pick<BackendGateway, 'app'>, method: InjectOptions['method'], url: string, opts: ConsoleRequest = {}): Promise<Call> {
  const origin = opts.origin === undefined ? (method === 'GET' ? null : OWN) : opts.origin
  return call(gw, {
    method,
    url,
    headers: {
      ...(opts.cookie ? { cookie: `tapgate_console=${opts.cookie}` } : {}),
      ...(origin ? { origin } : {}),
      ...(opts.contentType ? { 'content-type': opts.contentType } : {}),
    },
    ...(opts.body === undefined ? {} : { payload: opts.body as InjectOptions['payload'] }),
  })
}

export const cookieOf = (res: Call): string => {
  const header = String(res.headers['set-cookie'])
  return /^tapgate_console=([^;]*)/.exec(header)![1]!
}

/** Signs in to a team's console with a new link; the session cookie's value. */
export async function signInConsole(gw: Pick<BackendGateway, 'app' | 'store' | 'clock'>, teamId: number): Promise<string> {
  const { token } = await createConsoleLink(gw.store, { teamId, now: gw.clock.now })
  const res = await consoleRequest(gw, 'POST', '/console/api/session', { body: { link: token } })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return cookieOf(res)
}
