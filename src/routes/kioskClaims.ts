import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { createClaimLink } from '../claims/claimLinks.js'
import { claimRecipient } from '../claims/claimRecipient.js'
import { publicClaimSummary } from '../claims/claimViews.js'
import { giveClaimAddress } from '../claims/giveClaimAddress.js'
import { NotFoundError } from '../errors.js'
import { authenticateKiosk } from '../kiosk/kioskTokens.js'
import { ClaimIdParams, HandoffResponse, KioskClaimResponse, KioskRecipientBody } from '../schemas/claims.js'
import { BODY_ERRORS, errorResponses, PATH_ERRORS, security, tokenMoveErrorResponses } from '../schemas/common.js'

const tags = ['kiosk']
const kioskToken = (request: FastifyRequest): string | undefined => {
  const value = request.headers['x-kiosk-token']
  return Array.isArray(value) ? value[0] : value
}

/**
 * What the customer does at the kiosk's screen with an open claim (src/claims): ask for the phone
 * link, or give an address there (typed on the on-screen keyboard or typed by a USB scanner from a
 * wallet's receive QR). The kiosk token is the credential: the screen beside the reader is where
 * the customer stands, and a claim is only its own station's.
 */
const kioskClaims: FastifyPluginAsyncZod = async (app) => {
  const deps = app.services
  const { store, now, config } = deps
  // The credential first (401), as for /kiosk/staff/*: before the body is even read.
  app.decorateRequest('kioskStation', null)
  app.addHook('onRequest', async (request) => {
    request.kioskStation = await authenticateKiosk(store, kioskToken(request))
  })

  app.post('/kiosk/claims/:id/handoff', {
    schema: {
      tags,
      summary: 'A one-time link to finish the claim on a phone, and its QR code (a new one replaces the last)',
      security: security.kiosk,
      params: ClaimIdParams,
      response: { 200: HandoffResponse, ...errorResponses(...BODY_ERRORS, ...PATH_ERRORS, 401, 404, 409, 410) },
    },
    handler: async (request) => {
      const station = request.kioskStation!
      // Phones reach the gateway at its public address; without one configured, at the address the kiosk used.
      const baseUrl = config.publicBaseUrl ?? `${request.protocol}://${request.host}`
      return { success: true as const, ...await createClaimLink(store, { stationId: station.id, claimId: request.params.id, baseUrl, now: now() }) }
    },
  })

  app.post('/kiosk/claims/:id/recipient', {
    schema: {
      tags,
      summary: 'Give the claim an address at the kiosk (typed, or scanned from a wallet QR: 0x… or ethereum:0x…)',
      security: security.kiosk,
      params: ClaimIdParams,
      body: KioskRecipientBody,
      response: { 200: KioskClaimResponse, ...tokenMoveErrorResponses(...BODY_ERRORS, ...PATH_ERRORS, 401, 404, 409, 410) },
    },
    handler: async (request) => {
      const station = request.kioskStation!
      if ((await store.claims.get(request.params.id))?.stationId !== station.id) throw new NotFoundError('claim_not_found', 'No such claim at this station')
      const recipient = await claimRecipient(request.body.recipient, deps.chains.ens)
      const claim = await giveClaimAddress(deps, { claimId: request.params.id, recipient, via: 'kiosk' })
      return { success: true as const, claim: await publicClaimSummary(store, claim, now()) }
    },
  })
}

export default kioskClaims
