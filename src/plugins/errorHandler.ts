import type { FastifyError } from 'fastify'
import fp from 'fastify-plugin'
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod'
import { BaseError } from '../errors.js'

type ErrorBody = { success: false; error: string; message: string; errors?: Record<string, string> }

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
 * else → a logged, generic 500 that leaks nothing.
 */
export default fp(
  async (app) => {
    app.setErrorHandler((error: FastifyError, request, reply) => {
      let status: number
      let body: ErrorBody
      if (hasZodFastifySchemaValidationErrors(error)) {
        const errors: Record<string, string> = {}
        for (const issue of error.validation) {
          const key = issue.instancePath.split('/').filter(Boolean).join('.') || (error.validationContext ?? 'body')
          errors[key] ??= issue.message ?? 'Invalid value'
        }
        status = 400
        body = { success: false, error: 'validation_failed', message: `Invalid ${error.validationContext ?? 'request'}`, errors }
      } else if (error instanceof BaseError) {
        status = error.statusCode
        body = { success: false, error: error.code, message: error.message, ...(error.errors ? { errors: error.errors } : {}) }
      } else if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
        status = error.statusCode
        body = { success: false, error: fastifyCodes[error.code] ?? 'bad_request', message: error.message }
      } else {
        request.log.error({ err: error }, 'unhandled error')
        status = 500
        body = { success: false, error: 'internal_error', message: 'Internal server error' }
      }
      if (status >= 500) reply.header('cache-control', 'no-store')
      return reply.code(status).type('application/json').serializer(JSON.stringify).send(body)
    })
    app.setNotFoundHandler((request, reply) =>
      reply.code(404).send({ success: false, error: 'route_not_found', message: `No route ${request.method} ${request.url.split('?')[0]}` }),
    )
  },
  { name: 'error-handler' },
)
