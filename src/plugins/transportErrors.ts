import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify'

/**
 * What Fastify and Node's HTTP parser refuse before any route runs, in the
 * API's error shape `{ success: false, error, message }` instead of their own.
 * These are Fastify constructor options (app.ts); the error handler plugin
 * covers everything that reaches a route or the not-found handler.
 */

const errorJson = (error: string, message: string) => JSON.stringify({ success: false, error, message })

/** Fastify's default, stated: ref ids and OTP codes are 21 characters, the longest parameter (a uint256) 78. */
export const MAX_PARAM_LENGTH = 100

/** The router's own refusals: a path parameter over maxParamLength, a URL that does not decode. */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const [status, code, message] =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? [414, 'uri_too_long', `A path parameter is longer than ${MAX_PARAM_LENGTH} characters`]
      : error.code === 'FST_ERR_BAD_URL'
        ? [400, 'bad_url', 'The URL path is not valid percent-encoding']
        : [500, 'internal_error', 'Internal server error']
  if (status >= 500) reply.log.error({ err: error }, 'router error')
  void reply.code(status).type('application/json; charset=utf-8').send(errorJson(code, message))
}

/**
 * Node's HTTP parser errors, before there is a request: the request (headers
 * and body) not received within requestTimeoutMs, headers over the parser's
 * limit, or bytes that are not HTTP. The connection is answered and closed.
 */
export function clientErrorHandler(requestTimeoutMs: number): NonNullable<FastifyServerOptions['clientErrorHandler']> {
  return (error, socket: Socket) => {
    // A reset connection has nobody left to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return
    const [status, code, message] =
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout', `The request was not received within ${requestTimeoutMs} ms`]
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? [431, 'headers_too_large', 'The request line and headers are larger than the server accepts']
          : [400, 'bad_request', 'The request is not valid HTTP']
    if (!socket.writable) return void socket.destroy()
    const body = errorJson(code, message)
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      // Closed once written, whether or not the client ever reads or closes its side.
      () => socket.destroy(),
    )
  }
}

/**
 * Node's timers for a request: the whole request within `requestTimeoutMs`,
 * its headers too (Node requires headersTimeout ≤ requestTimeout). Node checks
 * them on an interval, 30 s by default, which would stretch a short timeout.
 */
export function requestTimeouts(requestTimeoutMs: number) {
  return {
    requestTimeout: requestTimeoutMs,
    headersTimeout: Math.min(60_000, requestTimeoutMs),
    connectionsCheckingInterval: Math.min(1000, Math.max(10, Math.floor(requestTimeoutMs / 4))),
  }
}
