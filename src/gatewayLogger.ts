import type { FastifyBaseLogger } from 'fastify'
import { type LoggerOptions, pino } from 'pino'
import { loggerOptions } from './logger.js'

/**
 * The server's one pino logger, made before anything starts: the embedded
 * chain boots before the app exists, and what it says then (a corrupt state
 * file set aside, state since the last save lost) must reach the log. The app
 * gets it as its loggerInstance; Fastify adds its request serializers on top.
 */
export function createGatewayLogger(level: string, tapPath: string, stream?: NodeJS.WritableStream): FastifyBaseLogger {
  // loggerOptions is typed for Fastify's `logger` option; without a stream it is plain pino options.
  const options = loggerOptions(level, tapPath) as LoggerOptions
  return stream ? pino(options, stream) : pino(options)
}
