import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { authenticateApiKey } from '../auth/apiKeys.js'
import type { TeamRow } from '../db/teams.js'
import { UnauthorizedError } from '../errors.js'
import { findOtp } from '../otps/spendOtp.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The team of a valid `x-service-api-key`, or null when none was sent. */
    team: TeamRow | null
  }
  interface FastifyInstance {
    /** onRequest hook: 401 unless a valid API key is sent. */
    requireApiKey: (request: FastifyRequest, reply: FastifyReply) => Promise<void>
    /** onRequest hook: a key is optional, but a key that is sent must be valid. */
    optionalApiKey: (request: FastifyRequest, reply: FastifyReply) => Promise<void>
    /**
     * preHandler hook: 401 unless an OTP this gateway issued is sent. The route's
     * domain function still checks its kind and state, and spends it.
     */
    requireOtp: (request: FastifyRequest, reply: FastifyReply) => Promise<void>
  }
}

/** The first of the headers sent: the spec's name, else the hosted API's alias (issue 26, always on). */
const firstHeader = (request: FastifyRequest, names: readonly string[]): string | undefined => {
  for (const name of names) {
    const raw = request.headers[name]
    const value = Array.isArray(raw) ? raw[0] : raw
    if (value !== undefined) return value
  }
  return undefined
}

const headerOf = (request: FastifyRequest): string | undefined => firstHeader(request, ['x-service-api-key', 'x-iyk-api-key'])

/** Resolves API keys to teams; routes opt in with `onRequest: app.requireApiKey`. */
export default fp(
  async (app) => {
    app.decorateRequest('team', null)
    app.decorate('optionalApiKey', async (request: FastifyRequest) => {
      const key = headerOf(request)
      if (key) request.team = await authenticateApiKey(app.services.store, key)
    })
    app.decorate('requireApiKey', async (request: FastifyRequest) => {
      const key = headerOf(request)
      if (!key) throw new UnauthorizedError('api_key_missing', 'This endpoint needs an API key in the x-service-api-key header')
      request.team = await authenticateApiKey(app.services.store, key)
    })
    // After validation (a malformed body stays a 400), before the handler: no work for an unknown
    // code, not even resolving its ENS recipient.
    app.decorate('requireOtp', async (request: FastifyRequest) => {
      await findOtp(app.services.store, otpCodeOf(request))
    })
  },
  { name: 'auth', dependencies: ['services'] },
)

/** The caller's team inside a route guarded by `requireApiKey`. */
export function teamOf(request: FastifyRequest): TeamRow {
  if (!request.team) throw new UnauthorizedError('api_key_missing', 'This endpoint needs an API key in the x-service-api-key header')
  return request.team
}

/** The `x-service-code` header (or its hosted alias `x-iyk-code`), if sent. */
export function otpCodeOf(request: FastifyRequest): string | undefined {
  return firstHeader(request, ['x-service-code', 'x-iyk-code'])
}
