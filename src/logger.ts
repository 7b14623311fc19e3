import type { FastifyServerOptions } from 'fastify'

// Ref ids and OTP codes travel in these paths; a log line must not carry them.
const secretPath = /\/(refs|otps)\/[^/?#]+/gi

const decoded = (url: string): string => {
  try {
    return decodeURI(url)
  } catch {
    return url
  }
}

/** The URL as it may appear in a log line. Decoded first: the router matches `/ref%73/…` as `/refs/…`. */
export const redactUrl = (url: string): string => decoded(url).replace(secretPath, '/$1/[redacted]')

/**
 * pino options for the gateway. API keys and OTPs arrive in headers that the
 * default serializer does not print; redact lists them anyway so a future
 * `headers` field cannot leak them.
 */
export function loggerOptions(level: string, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  return {
    level,
    ...(stream ? { stream } : {}),
    redact: {
      paths: ['req.headers["x-service-api-key"]', 'req.headers["x-service-code"]', 'headers["x-service-api-key"]', 'headers["x-service-code"]'],
      censor: '[redacted]',
    },
    serializers: {
      req: (req: { method: string; url: string; ip?: string }) => ({ method: req.method, url: redactUrl(req.url), remoteAddress: req.ip }),
    },
  }
}
