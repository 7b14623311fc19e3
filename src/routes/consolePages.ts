import type { FastifyReply } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { NotFoundError, UnavailableError } from '../errors.js'
import type { KioskAssets } from '../kiosk/web/bundle.js'
import { CONSOLE_CSP, CONSOLE_HTML, SIGNIN_HTML } from '../kiosk/web/consolePages.js'

/** What /console/assets serves of the browser bundle: the console's own files, not the kiosk's. */
const CONSOLE_ASSETS = new Set(['console.js', 'signin.js', 'console.css'])

const pageHeaders = (reply: FastifyReply) =>
  reply
    .header('content-security-policy', CONSOLE_CSP)
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    // Static pages, but one left from before an upgrade would call an API that changed: revalidate.
    .header('cache-control', 'no-cache')

/**
 * The web console's pages (issue 28): the sign-in page, the console's shell and their assets.
 * The data and the session are /console/api's (routes/console.ts); these hold neither, so they need
 * no session. Not part of the API (hidden from the OpenAPI document).
 */
const consolePages: FastifyPluginAsyncZod<{ assets: () => Promise<KioskAssets> }> = async (app, { assets }) => {
  app.get('/console', { schema: { hide: true } }, async (_request, reply) => pageHeaders(reply).type('text/html; charset=utf-8').send(CONSOLE_HTML))
  app.get('/console/sign-in', { schema: { hide: true } }, async (_request, reply) => pageHeaders(reply).type('text/html; charset=utf-8').send(SIGNIN_HTML))
  app.get(
    '/console/assets/:name',
    { schema: { hide: true, params: z.object({ name: z.string().max(40) }) } },
    async (request, reply) => {
      const { name } = request.params
      if (!CONSOLE_ASSETS.has(name)) throw new NotFoundError('asset_not_found', `No console asset named ${name}`)
      const built = await assets().catch(() => {
        throw new UnavailableError('console_assets_unavailable', 'The console pages could not be built; the gateway log says why')
      })
      const asset = built.get(name)
      if (!asset) throw new NotFoundError('asset_not_found', `No console asset named ${name}`)
      pageHeaders(reply).header('etag', asset.etag)
      if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send()
      return reply.type(asset.type).send(asset.body)
    },
  )
}

export default consolePages
