import type { FastifyInstance } from 'fastify'

/**
 * Route config for the unauthenticated endpoints (refs, OTPs, claim links, product images):
 * per client IP, limits from config.rateLimit. Each route counts in a bucket of its own.
 */
export const publicRateLimit = (app: FastifyInstance) => ({
  rateLimit: { max: app.services.config.rateLimit.max, timeWindow: app.services.config.rateLimit.windowMs },
})

/**
 * How many times rateLimit.max a client address may poll claim statuses: a phone polls once a
 * second for minutes (60 a minute, half the default max), and phones on one venue Wi-Fi behind NAT
 * share an address. The default (1,200 a minute) leaves 20 phones per address polling; a flood
 * faster than 20 a second is refused.
 */
export const STATUS_POLL_FACTOR = 10

/** Route config for POST /c/:token/status: publicRateLimit's bucket, STATUS_POLL_FACTOR times larger. */
export const statusPollRateLimit = (app: FastifyInstance) => ({
  rateLimit: { max: app.services.config.rateLimit.max * STATUS_POLL_FACTOR, timeWindow: app.services.config.rateLimit.windowMs },
})
