import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { errorResponses, security } from '../schemas/common.js'
import { TapHtml, TapRedirect, TapUnavailable } from '../schemas/taps.js'
import { SealedKeyError } from '../keys/errors.js'
import { renderRejectedTapPage, renderTapPage, renderUnavailableTapPage, tapPageView, tapRedirectUrl } from '../taps/tapPage.js'
import { TapRejectedError } from '../taps/tapErrors.js'
import { verifyTapBatched } from '../taps/verifyTap.js'
import { denyFraming } from '../plugins/denyFraming.js'
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
 * Every refusal answers this one status and one page: a distinct status or reason per refusal
 * would let anyone probe which UIDs are registered and what kind of chip each is.
 */
const REFUSED_STATUS = 400

/**
 * Phone taps: the chip's SDM URL points here. Verifies the URL the chip wrote,
 * then redirects to the chip's (or team's) redirect URL with serviceRef, or
 * shows the tap page; a refused tap gets a plain "not accepted" page (the reason
 * goes to the tap log and the server log, for staff).
 */
const tap: FastifyPluginAsyncZod = async (app) => {
  const { store, keyring, config, now } = app.services
  // A tap page (and its redirect) never in a frame: another site could dress it up as its own.
  app.addHook('onSend', denyFraming)
  // The MAC covers the exact characters the chip wrote, so the URL is rebuilt from the raw request line.
  const tapUrlOf = (request: FastifyRequest): string =>
    config.publicBaseUrl ? `${config.publicBaseUrl.replace(/\/+$/, '')}${request.url}` : `${request.protocol}://${request.host}${request.url}`

  app.get(config.tapPath, {
    // A HEAD (a link preview, a prefetch) must not spend the tap.
    exposeHeadRoute: false,
    config: publicRateLimit(app),
    schema: {
      tags: ['taps'],
      security: security.none,
      summary: 'A phone tap: verify the chip URL, then redirect with serviceRef or show the tap page',
      description:
        'The path is config.tapPath (default /tap); the query is whatever the chip writes (e.g. e, c and d). Accepted: 302 to the redirect URL, or 200 with the tap page. Refused, for any reason: 400 with one plain "not accepted" page; the reason is in the tap log (`tapgate taps list`) and the server log.',
      response: {
        200: TapHtml('The tap page: the chip, its linked token and events, and serviceRef'),
        302: TapRedirect,
        ...errorResponses(429),
        400: TapHtml('Refused (any reason): a plain "not accepted" page'),
        503: TapUnavailable,
      },
    },
    handler: async (request, reply) => {
      let verified
      try {
        verified = await verifyTapBatched(store, keyring, { url: tapUrlOf(request), source: 'phone', now: now() })
      } catch (error) {
        // A person is at the chip: both outcomes are pages, not JSON.
        if (error instanceof SealedKeyError) {
          request.log.error({ code: error.code, detail: error.message }, 'tap not checked')
          return sendHtml(reply, 503, renderUnavailableTapPage({ code: error.code }))
        }
        if (!(error instanceof TapRejectedError)) throw error
        // Staff read the reason here and the detail in the tap log (a detail may quote part of the URL,
        // which stays out of the server log); the public page says the same for all.
        request.log.info({ reason: error.reason, uid: error.uid }, 'tap refused')
        return sendHtml(reply, REFUSED_STATUS, renderRejectedTapPage())
      }
      const redirect = await tapRedirectUrl(store, verified, { compat: app.services.config.compat })
      if (redirect) return reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(redirect, 302)
      return sendHtml(reply, 200, renderTapPage(await tapPageView(store, verified)))
    },
  })
}

export default tap
