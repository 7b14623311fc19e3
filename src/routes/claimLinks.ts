import type { FastifyReply } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { claimOfPhone, openClaimLink, phoneClaim, sendFromPhone } from '../claims/claimLinks.js'
import { claimRecipient } from '../claims/claimRecipient.js'
import { resolveRecipient } from '../chain/resolveRecipient.js'
import { CLAIM_HTML } from '../kiosk/web/claimPage.js'
import { KIOSK_CSP } from '../kiosk/web/pages.js'
import {
  LinkParams,
  PhoneClaimResponse,
  PhoneOpenBody,
  PhoneOpenResponse,
  PhoneRecipientBody,
  PhoneResolveBody,
  PhoneResolveResponse,
  PhoneSessionBody,
} from '../schemas/claims.js'
import { BODY_ERRORS, errorResponses, PATH_ERRORS, security, tokenMoveErrorResponses } from '../schemas/common.js'
import { publicRateLimit, statusPollRateLimit } from './rateLimit.js'

const tags = ['claim links']

/**
 * The phone side of a claim (src/claims/claimLinks.ts): GET /c/<token> is the page a phone's camera
 * opens from the kiosk's QR code; the page then calls these with the token in the path and, after
 * the first open, the session that binds the link to that phone. No API key, no wallet connection:
 * the token is the credential, used once, and the tap's OTPs never leave the gateway.
 */
const claimLinks: FastifyPluginAsyncZod = async (app) => {
  const deps = app.services
  const { store, now } = deps
  const ens = () => deps.chains.ens !== undefined
  const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer')

  app.get('/c/:token', { schema: { hide: true, params: LinkParams }, config: publicRateLimit(app) }, async (_request, reply) =>
    // The page holds no data; no-store keeps a shared phone's back button from showing a claim.
    noStore(reply).header('content-security-policy', KIOSK_CSP).header('x-content-type-options', 'nosniff').type('text/html; charset=utf-8').send(CLAIM_HTML),
  )

  app.post('/c/:token/open', {
    config: publicRateLimit(app),
    schema: {
      tags,
      summary: "Open a claim link: the first phone takes it (the kiosk moves on); that phone's session reopens it",
      security: security.none,
      params: LinkParams,
      body: PhoneOpenBody,
      response: { 200: PhoneOpenResponse, ...errorResponses(...BODY_ERRORS, ...PATH_ERRORS, 404, 409, 410, 429) },
    },
    handler: async (request, reply) => {
      noStore(reply)
      return { success: true as const, ...await openClaimLink(deps, { token: request.params.token, session: request.body.session, ens: ens() }) }
    },
  })

  app.post('/c/:token/status', {
    config: statusPollRateLimit(app),
    schema: { tags, summary: 'Where the claim stands (the phone follows its transaction)', security: security.none, params: LinkParams, body: PhoneSessionBody, response: { 200: PhoneClaimResponse, ...errorResponses(...BODY_ERRORS, ...PATH_ERRORS, 403, 404, 429) } },
    handler: async (request, reply) => {
      noStore(reply)
      const claim = await claimOfPhone(store, { token: request.params.token, session: request.body.session })
      return { success: true as const, claim: await phoneClaim(store, claim, { now: now(), ens: ens() }) }
    },
  })

  app.post('/c/:token/resolve', {
    config: publicRateLimit(app),
    schema: { tags, summary: 'Resolve an ENS name before sending (shown to the customer first)', security: security.none, params: LinkParams, body: PhoneResolveBody, response: { 200: PhoneResolveResponse, ...errorResponses(...BODY_ERRORS, ...PATH_ERRORS, 403, 404, 429) } },
    handler: async (request, reply) => {
      noStore(reply)
      await claimOfPhone(store, { token: request.params.token, session: request.body.session })
      const address = await resolveRecipient(request.body.name, { ens: deps.chains.ens })
      return { success: true as const, name: request.body.name.trim().toLowerCase(), address }
    },
  })

  app.post('/c/:token/recipient', {
    config: publicRateLimit(app),
    schema: {
      tags,
      summary: 'Send the address: the token is transferred (or minted, or a 2-tap registration made)',
      security: security.none,
      params: LinkParams,
      body: PhoneRecipientBody,
      response: { 200: PhoneClaimResponse, ...tokenMoveErrorResponses(...BODY_ERRORS, ...PATH_ERRORS, 403, 404, 409, 410, 429) },
    },
    handler: async (request, reply) => {
      noStore(reply)
      const { token } = request.params
      await claimOfPhone(store, { token, session: request.body.session })
      const recipient = await claimRecipient(request.body.recipient, deps.chains.ens)
      return { success: true as const, claim: await sendFromPhone(deps, { token, session: request.body.session, recipient, ens: ens() }) }
    },
  })
}

export default claimLinks
