import type { FastifyError, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod'
import { isSerializationFailure, isStoreUnavailable, isUniqueViolation } from '../db/storeErrors.js'
import { BaseError, UnavailableError } from '../errors.js'
import { type ErrorBody, hostedErrorBody, isHostedRequest } from './hostedCompat.js'

// Fastify's own 4xx errors (bad JSON, wrong content type, body too large) get stable codes too.
const fastifyCodes: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_BODY_TOO_LARGE: 'body_too_large',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'bad_request',
}

/**
 * The one error handler: validation → 400 with an `errors` map, BaseError →
 * its status and code, Fastify's own client errors → their status, anything
 * else → a logged, generic 500 that leaks nothing. No route for the path: 404,
 * or 405 with `Allow` when the path has routes for other methods. (Refusals
 * before routing: transportErrors.ts.)
 */
export default fp<{ compat?: 'iyk' }>(
  async (app, options) => {
    // compat=iyk: the hosted API's error shape on its operations, our code kept under `code` (hostedCompat.ts).
    // An option, not the services' config: the error handler stands alone (test/plugins/storeErrors).
    const compat = options.compat === 'iyk'
    const shapedFor = (request: FastifyRequest) => (status: number, body: ErrorBody) =>
      compat && isHostedRequest(request) ? hostedErrorBody(status, body) : body
    app.setErrorHandler((error: FastifyError, request, reply) => {
      let status: number
      let body: ErrorBody
      if (hasZodFastifySchemaValidationErrors(error)) {
        const errors: Record<string, string> = {}
        let named: { code: string; message: string } | undefined
        for (const issue of error.validation) {
          const key = issue.instancePath.split('/').filter(Boolean).join('.') || (error.validationContext ?? 'body')
          errors[key] ??= issue.message ?? 'Invalid value'
          // A schema's refine may name the stable code it answers with (`params: { code }`), so a
          // rule kept in src/schemas keeps the code it had as a domain check.
          const code = (issue.params as { params?: { code?: unknown } } | undefined)?.params?.code
          if (named === undefined && typeof code === 'string') named = { code, message: issue.message ?? 'Invalid value' }
        }
        status = 400
        body = named
          ? { success: false, error: named.code, message: named.message, errors }
          : { success: false, error: 'validation_failed', message: `Invalid ${error.validationContext ?? 'request'}`, errors }
      } else if (error instanceof BaseError) {
        status = error.statusCode
        body = { success: false, error: error.code, message: error.message, ...(error.errors ? { errors: error.errors } : {}) }
        if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds))
      } else if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
        status = error.statusCode
        body = { success: false, error: fastifyCodes[error.code] ?? 'bad_request', message: error.message }
      } else if (isUniqueViolation(error) || isSerializationFailure(error)) {
        // A concurrent request (on this gateway or another) won a race a domain check did not see coming.
        request.log.warn({ err: error }, 'a concurrent write won')
        status = 409
        body = { success: false, error: 'conflict', message: 'A concurrent request changed this first; read it again and retry if still needed' }
      } else if (isStoreUnavailable(error)) {
        request.log.error({ err: error }, 'database unavailable')
        status = 503
        body = { success: false, error: 'database_unavailable', message: 'The database cannot be reached; retry shortly' }
      } else {
        request.log.error({ err: error }, 'unhandled error')
        status = 500
        body = { success: false, error: 'internal_error', message: 'Internal server error' }
      }
      if (status >= 500) reply.header('cache-control', 'no-store')
      return reply.code(status).type('application/json').serializer(JSON.stringify).send(shapedFor(request)(status, body))
    })
    // A request that reaches a closing gateway (pipelined on an open connection) gets our 503;
    // Fastify's own (return503OnClosing, off in app.ts) has its error shape.
    let closing = false
    app.addHook('preClose', async () => {
      closing = true
    })
    app.addHook('onRequest', async () => {
      if (closing) throw new UnavailableError('shutting_down', 'The gateway is shutting down; retry shortly')
    })

    // Every method some route uses (HEAD included: Fastify adds one per GET), to tell 405 from 404.
    const methods = new Set<string>()
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) methods.add(method)
    })
    app.setNotFoundHandler((request, reply) => {
      const path = request.url.split('?')[0]
      const allowed = [...methods].filter((method) => method !== request.method && app.findRoute({ method, url: request.url }) !== null).sort()
      if (allowed.length === 0) return reply.code(404).send(shapedFor(request)(404, { success: false, error: 'route_not_found', message: `No route ${request.method} ${path}` }))
      const choices = allowed.length === 1 ? allowed[0] : `${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}`
      return reply
        .code(405)
        .header('allow', allowed.join(', '))
        .send(shapedFor(request)(405, { success: false, error: 'method_not_allowed', message: `${request.method} is not allowed on ${path}; use ${choices}` }))
    })
  },
  { name: 'error-handler' },
)
