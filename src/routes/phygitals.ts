import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import {
  createClaimRegistration,
  deleteClaimRegistration,
  getClaimRegistration,
  registerWithOtp,
} from '../phygitals/claimRegistrations.js'
import { getTokenChips } from '../tokens/findTeamToken.js'
import { updateTokenMetadata } from '../phygitals/updateTokenMetadata.js'
import { otpCodeOf, teamOf } from '../plugins/auth.js'
import { BODY_ERRORS, errorResponses, security, Success, tokenMoveErrorResponses } from '../schemas/common.js'
import {
  ChipResponse,
  ClaimRegistration,
  ClaimRegistrationBody,
  ClaimRegistrationQuery,
  ClaimRegistrationStatus,
  MetadataBody,
  RecipientBody,
  TokenKeyQuery,
} from '../schemas/phygitals.js'
import { publicRateLimit } from './rateLimit.js'
import { recipientOf as recipientOfApp } from './transfers.js'

const tags = ['phygitals']

const phygitals: FastifyPluginAsyncZod = async (app) => {
  const { store, now } = app.services
  const recipientOf = (raw: string) => recipientOfApp(app, raw)

  app.get('/phygitals/chip', {
    onRequest: app.requireApiKey,
    schema: { tags, summary: 'The chip linked to a token', querystring: TokenKeyQuery, security: security.apiKey, response: { 200: ChipResponse, ...errorResponses(400, 401, 404) } },
    handler: async (request) => getTokenChips(store, { key: request.query, teamId: teamOf(request).id }),
  })

  app.get('/phygitals/claim-registration', {
    config: publicRateLimit(app),
    schema: {
      tags,
      summary: 'Whether a 2-tap claim applies and whether the recipient may claim now',
      querystring: ClaimRegistrationQuery,
      security: security.none,
      response: { 200: ClaimRegistrationStatus, ...errorResponses(400, 404, 429) },
    },
    handler: async (request) => {
      const { recipient, ...key } = request.query
      return getClaimRegistration(store, { key, recipient: await recipientOf(recipient), now: now() })
    },
  })

  app.post('/phygitals/claim-registration', {
    onRequest: app.requireApiKey,
    schema: { tags, summary: 'Register a recipient for a 2-tap claim (API key)', body: ClaimRegistrationBody, security: security.apiKey, response: { 200: ClaimRegistration, ...errorResponses(...BODY_ERRORS, 401, 404, 409) } },
    handler: async (request) => {
      const { recipient, ...key } = request.body
      return createClaimRegistration(store, { key, teamId: teamOf(request).id, recipient: await recipientOf(recipient), now: now() })
    },
  })

  app.post('/phygitals/claim-registration/pullable', {
    preHandler: app.requireOtp,
    schema: { tags, summary: 'Register a recipient for a 2-tap claim (OTP)', body: RecipientBody, security: security.otp, response: { 200: ClaimRegistration, ...tokenMoveErrorResponses(...BODY_ERRORS, 401, 403, 409) } },
    handler: async (request) =>
      registerWithOtp(app.services, { code: otpCodeOf(request), recipient: await recipientOf(request.body.recipient), now: now() }),
  })

  app.delete('/phygitals/claim-registration', {
    onRequest: app.requireApiKey,
    schema: { tags, summary: "Delete a recipient's unused claim registration", body: ClaimRegistrationBody, security: security.apiKey, response: { 200: Success, ...errorResponses(...BODY_ERRORS, 401, 404) } },
    handler: async (request) => {
      const { recipient, ...key } = request.body
      await deleteClaimRegistration(store, { key, teamId: teamOf(request).id, recipient: await recipientOf(recipient) })
      return { success: true as const }
    },
  })

  app.patch('/phygitals/metadata', {
    onRequest: app.requireApiKey,
    schema: { tags, summary: "Replace a token's metadata", body: MetadataBody, security: security.apiKey, response: { 200: Success, ...errorResponses(...BODY_ERRORS, 401, 404) } },
    handler: async (request) => {
      const { metadata, ...key } = request.body
      await updateTokenMetadata(app.services, { key, teamId: teamOf(request).id, metadata })
      return { success: true as const }
    },
  })
}

export default phygitals
