import type { FastifyInstance } from 'fastify'

/**
 * Route config for the unauthenticated endpoints (refs, OTPs, claim status):
 * per client IP, limits from config.rateLimit.
 */
export const publicRateLimit = (app: FastifyInstance) => ({
  rateLimit: { max: app.services.config.rateLimit.max, timeWindow: app.services.config.rateLimit.windowMs },
})
