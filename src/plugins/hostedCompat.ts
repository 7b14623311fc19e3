import { STATUS_CODES } from 'node:http'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { decimalUid } from '../schemas/common.js'

/** An error body as the error handler builds it. */
export type ErrorBody = { success: false; error: string; message: string; errors?: Record<string, string> }

/**
 * The hosted API's error shape (`{statusCode, error: <reason phrase>, message}`), keeping ours beside
 * it: `success: false`, tapgate's stable code under `code`, `errors` on a validation failure. Apps
 * written for the hosted API show `message`, which is the same in both modes.
 *
 * @example
 * hostedErrorBody(400, { success: false, error: 'validation_failed', message: 'Invalid body' })
 * // { statusCode: 400, error: 'Bad Request', message: 'Invalid body', success: false, code: 'validation_failed' }
 */
export function hostedErrorBody(status: number, body: ErrorBody): Record<string, unknown> {
  const { error, ...rest } = body
  return { statusCode: status, error: STATUS_CODES[status] ?? 'Error', ...rest, code: error }
}

const HEX_UID = /^[0-9A-F]{14}$/

/** The OpenAPI tags of the operations the hosted API has (the spec's, and issue 26's own). */
const HOSTED_TAGS = new Set(['refs', 'otps', 'phygitals', 'transfers', 'chips', 'guestbook', 'metadata', 'taps', 'hosted API compatibility'])

/**
 * A JSON answer as the hosted API writes it: every `uid` (and `uids`, `updatedTags`) in decimal, and
 * the proof events also under the hosted names (`poapEvents[].poapEventId`, `poapEvent`). Done once
 * here on the way out rather than in each route, so no route can forget it; the response schemas
 * declare the added names as optional (a schema strips what it does not name).
 */
export function toHostedShape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toHostedShape)
  if (typeof value !== 'object' || value === null || value instanceof Date) return value
  const out: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(value)) {
    if (key === 'uid' && typeof field === 'string' && HEX_UID.test(field)) out[key] = decimalUid(field)
    else if ((key === 'uids' || key === 'updatedTags') && Array.isArray(field))
      out[key] = field.map((uid: unknown) => (typeof uid === 'string' && HEX_UID.test(uid) ? decimalUid(uid) : uid))
    else out[key] = toHostedShape(field)
  }
  if (Array.isArray(out.proofEvents)) out.poapEvents = out.proofEvents.map(withPoapEventId)
  if (typeof out.proofEvent === 'object' && out.proofEvent !== null) out.poapEvent = withPoapEventId(out.proofEvent)
  return out
}

const withPoapEventId = (event: unknown): unknown => {
  if (typeof event !== 'object' || event === null) return event
  const { proofEventId, ...rest } = event as Record<string, unknown>
  return { ...rest, poapEventId: proofEventId }
}

/**
 * Whether a request is for one of the hosted API's operations (by OpenAPI tag), or for no route at all.
 * Our own clients' routes are not: the station, the kiosk page, claim links and guest lists read hex
 * UIDs and switch on `error` codes. The OpenAPI document (hidden) is not either.
 */
export function isHostedRequest(request: FastifyRequest): boolean {
  if (request.is404) return true
  const schema = request.routeOptions.schema
  return schema?.hide !== true && (schema?.tags ?? []).some((tag) => HOSTED_TAGS.has(tag)) && !request.routeOptions.url?.startsWith('/station')
}

/** With compat=iyk, rewrites JSON answers to the hosted API's names (errors: errorHandler.ts). */
export default fp(
  async (app) => {
    if (app.services.config.compat !== 'iyk') return
    app.addHook('preSerialization', async (request, reply, payload) =>
      reply.statusCode < 400 && isHostedRequest(request) ? toHostedShape(payload) : payload,
    )
  },
  { name: 'hosted-compat', dependencies: ['services'] },
)
