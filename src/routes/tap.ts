import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { errorResponses } from '../schemas/common.js'
import { TapHtml, TapRedirect } from '../schemas/taps.js'
import { SealedKeyError } from '../keys/errors.js'
import { renderRejectedTapPage, renderTapPage, renderUnavailableTapPage, tapPageView, tapRedirectUrl } from '../taps/tapPage.js'
import { TapRejectedError } from '../taps/tapErrors.js'
import { verifyTapBatched } from '../taps/verifyTap.js'
import { publicRateLimit } from './rateLimit.js'

// A tap page is personal and single-use: never cached, never sent on as a Referer (it carries the tap URL).
const sendHtml = (reply: FastifyReply, status: number, html: string) =>
  reply
    .code(status)
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('content-security-policy', "default-src 'none'; img-src https: http:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'")
    .type('text/html; charset=utf-8')
    .send(html)

/**
 * Phone taps: the chip's SDM URL points here. Verifies the URL the chip wrote,
 * then redirects to the chip's (or team's) redirect URL with serviceRef, or
 * shows the tap page; a refused tap gets a page saying why, with a 4xx status.
 */
const tap: FastifyPluginAsyncZod = async (app) => {
  const { store, keyring, config, now } = app.services
  // The MAC covers the exact characters the chip wrote, so the URL is rebuilt from the raw request line.
  const tapUrlOf = (request: FastifyRequest): string =>
    config.publicBaseUrl ? `${config.publicBaseUrl.replace(/\/+$/, '')}${request.url}` : `${request.protocol}://${request.host}${request.url}`

  app.get(config.tapPath, {
    // A HEAD (a link preview, a prefetch) must not spend the tap.
    exposeHeadRoute: false,
    config: publicRateLimit(app),
    schema: {
      tags: ['taps'],
      summary: 'A phone tap: verify the chip URL, then redirect with serviceRef or show the tap page',
      description:
        'The path is config.tapPath (default /tap); the query is whatever the chip writes (e.g. e, c and d). Accepted: 302 to the redirect URL, or 200 with the tap page. Refused: an HTML page with the reason, with status 400 (malformed, not a SUN message, mode mismatch, no MAC, no counter), 403 (MAC or UID mismatch), 404 (unknown chip) or 409 (counter replay or at its limit).',
      response: {
        200: TapHtml('The tap page: the chip, its linked token and events, and serviceRef'),
        302: TapRedirect,
        400: TapHtml('Refused: malformed, not a SUN message, mode mismatch, no MAC or no counter'),
        403: TapHtml('Refused: MAC mismatch'),
        404: TapHtml('Refused: unknown chip'),
        409: TapHtml('Refused: counter replay or counter at its limit'),
        429: errorResponses[429],
        503: TapHtml('The gateway cannot check taps: the keys of a chip profile do not open (docs/keys.md)'),
      },
    },
    handler: async (request, reply) => {
      let verified
      try {
        verified = await verifyTapBatched(store, keyring, { url: tapUrlOf(request), source: 'phone', now: now() })
      } catch (error) {
        // A person is at the chip: both outcomes are pages, not JSON.
        if (error instanceof SealedKeyError) return sendHtml(reply, 503, renderUnavailableTapPage({ code: error.code, detail: error.message }))
        if (!(error instanceof TapRejectedError)) throw error
        return sendHtml(reply, error.statusCode, renderRejectedTapPage(error))
      }
      const redirect = tapRedirectUrl(store, verified)
      if (redirect) return reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(redirect, 302)
      return sendHtml(reply, 200, renderTapPage(tapPageView(store, verified)))
    },
  })
}

export default tap
