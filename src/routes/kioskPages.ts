import type { FastifyReply } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { NotFoundError, UnavailableError } from '../errors.js'
import type { KioskAssets } from '../kiosk/web/bundle.js'
import { ATTENDEE_HTML, ICON_SVG, KIOSK_CSP, STAFF_HTML } from '../kiosk/web/pages.js'

const pageHeaders = (reply: FastifyReply) =>
  reply
    .header('content-security-policy', KIOSK_CSP)
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    // The pages hold no data (it all comes over the socket), but a stale page after an upgrade
    // would speak an old protocol: revalidate every load.
    .header('cache-control', 'no-cache')

/**
 * The kiosk pages and their assets, served by the gateway itself: no CDN, no other origin, so a
 * kiosk works on a LAN with no internet. Not part of the API (hidden from the OpenAPI document).
 */
const kioskPages: FastifyPluginAsyncZod<{ assets: () => Promise<KioskAssets> }> = async (app, { assets: kioskAssets }) => {
  app.get('/kiosk', { schema: { hide: true } }, async (_request, reply) => pageHeaders(reply).type('text/html; charset=utf-8').send(ATTENDEE_HTML))
  app.get('/kiosk/staff', { schema: { hide: true } }, async (_request, reply) => pageHeaders(reply).type('text/html; charset=utf-8').send(STAFF_HTML))
  app.get('/kiosk/assets/icon.svg', { schema: { hide: true } }, async (_request, reply) =>
    pageHeaders(reply).type('image/svg+xml').send(ICON_SVG),
  )
  app.get(
    '/kiosk/assets/:name',
    { schema: { hide: true, params: z.object({ name: z.string().max(40) }) } },
    async (request, reply) => {
      const assets = await kioskAssets().catch(() => {
        throw new UnavailableError('kiosk_assets_unavailable', 'The kiosk pages could not be built; the gateway log says why')
      })
      const asset = assets.get(request.params.name)
      if (!asset) throw new NotFoundError('asset_not_found', `No kiosk asset named ${request.params.name}`)
      pageHeaders(reply).header('etag', asset.etag)
      if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send()
      return reply.type(asset.type).send(asset.body)
    },
  )
}

export default kioskPages
