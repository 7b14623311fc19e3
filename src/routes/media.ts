import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { NotFoundError } from '../errors.js'
import { publicRateLimit } from './rateLimit.js'

/**
 * What an image from our origin may do: nothing. An SVG is a document that can carry script; opened
 * directly from /media/<key> it would run with the gateway's origin. `sandbox` gives it an opaque
 * origin and no scripts, `default-src 'none'` stops it loading anything (inline styles are common
 * in SVGs and harmless).
 */
export const MEDIA_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"

/**
 * GET /media/:key: the product images the kiosk and the phone page show (`ProductCard.image`),
 * from the data dir, fetched once from their origin. Public like the pages that use it, and hidden
 * from the OpenAPI document like them. A 404 means "show the placeholder".
 */
const media: FastifyPluginAsyncZod = async (app) => {
  app.get('/media/:key', { schema: { hide: true, params: z.object({ key: z.string() }) }, config: publicRateLimit(app) }, async (request, reply) => {
    reply.header('x-content-type-options', 'nosniff')
    const found = await app.services.media.get(request.params.key)
    if (found.status === 'unknown') throw new NotFoundError('media_not_found', 'No image with this key')
    if (found.status === 'unavailable') throw new NotFoundError('media_unavailable', 'The image cannot be fetched now; try again later')
    return reply
      .header('content-security-policy', MEDIA_CSP)
      // The key is the URL's hash, and metadata naming a new image names a new URL.
      .header('cache-control', 'public, max-age=86400, immutable')
      .type(found.contentType)
      .send(found.body)
  })
}

export default media
