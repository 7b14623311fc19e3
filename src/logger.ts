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

/**
 * The URL as it may appear in a log line. Decoded first: the router matches
 * `/ref%73/…` as `/refs/…`. Below the tap path everything is redacted: a tap
 * URL refused for load (429) or a missing key (503) is still unspent, so a
 * log reader could replay it.
 */
export const redactUrl = (url: string, tapPath = '/tap'): string => {
  const plain = decoded(url)
  if (plain.startsWith(tapPath) && /^([/?#]|$)/.test(plain.slice(tapPath.length))) return `${tapPath}[redacted]`
  return plain.replace(secretPath, '/$1/[redacted]')
}

/**
 * pino options for the gateway. API keys, OTPs and station tokens arrive in headers that the
 * default serializer does not print; redact lists them anyway so a future
 * `headers` field cannot leak them.
 */
export function loggerOptions(level: string, tapPath: string, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  return {
    level,
    ...(stream ? { stream } : {}),
    redact: {
      paths: ['x-service-api-key', 'x-service-code', 'x-station-token'].flatMap((h) => [`req.headers["${h}"]`, `headers["${h}"]`]),
      censor: '[redacted]',
    },
    serializers: {
      req: (req: { method: string; url: string; ip?: string }) => ({ method: req.method, url: redactUrl(req.url, tapPath), remoteAddress: req.ip }),
    },
  }
}
