import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import {
  assignGuestbookEvent,
  createGuestbookEvent,
  listGuestbookContracts,
  listGuestbookEvents,
  updateGuestbookEventMetadata,
} from '../guestbook/guestbookEvents.js'
import { deployGuestbook, mintGuestbookEvent, mintGuestbookEventSelf, setGuestbookPaused } from '../guestbook/guestbookChain.js'
import { otpCodeOf, teamOf } from '../plugins/auth.js'
import { BODY_ERRORS, errorResponses, security, Success } from '../schemas/common.js'
import { RecipientBody } from '../schemas/phygitals.js'
import { recipientOf } from './transfers.js'
import {
  AssignEventBody,
  CreateEventBody,
  CreateEventResponse,
  DeployContractBody,
  DeployContractResponse,
  EventMetadataBody,
  GuestbookContractList,
  GuestbookEventList,
  ListEventsQuery,
  MintEventBody,
  TogglePauseBody,
  TxnResponse,
} from '../schemas/events.js'

const tags = ['guestbook']

const withApiKey: FastifyPluginAsyncZod = async (app) => {
  const { store, now } = app.services
  app.addHook('onRequest', app.requireApiKey)

  app.post('/events/contracts', {
    schema: {
      tags,
      summary: 'Deploy a guestbook contract (pending until mined)',
      body: DeployContractBody,
      security: security.apiKey,
      response: { 200: DeployContractResponse, ...errorResponses(...BODY_ERRORS, 401) },
    },
    handler: async (request) => {
      const { contractId } = await deployGuestbook(app.services, { ...request.body, teamId: teamOf(request).id })
      return { success: true as const, contractId }
    },
  })

  app.post('/events/mint', {
    schema: { tags, summary: 'Mint an event token to a recipient (API key)', body: MintEventBody, security: security.apiKey, response: { 200: TxnResponse, ...errorResponses(...BODY_ERRORS, 401, 404, 409) } },
    handler: async (request) => {
      const { recipient, ...selector } = request.body
      const result = await mintGuestbookEvent(app.services, { teamId: teamOf(request).id, selector, recipient: await recipientOf(app, recipient) })
      return { success: true as const, txnHash: result.txnHash }
    },
  })

  app.post('/events/toggle-pause-state', {
    schema: {
      tags,
      summary: 'Pause (soulbound) or unpause transfers of a guestbook contract',
      body: TogglePauseBody,
      security: security.apiKey,
      response: { 200: TxnResponse, ...errorResponses(...BODY_ERRORS, 401, 404, 409) },
    },
    handler: async (request) => {
      const result = await setGuestbookPaused(app.services, { ...request.body, teamId: teamOf(request).id })
      return { success: true as const, txnHash: result.txnHash }
    },
  })

  app.get('/events/contracts', {
    schema: { tags, summary: "The team's guestbook contracts", security: security.apiKey, response: { 200: GuestbookContractList, ...errorResponses(401) } },
    handler: async (request) => listGuestbookContracts(store, { teamId: teamOf(request).id }),
  })

  app.post('/events', {
    schema: { tags, summary: 'Create a guestbook event', body: CreateEventBody, security: security.apiKey, response: { 200: CreateEventResponse, ...errorResponses(...BODY_ERRORS, 401, 404, 409) } },
    handler: async (request) => {
      const { id } = await createGuestbookEvent(store, { ...request.body, teamId: teamOf(request).id, now: now() })
      return { success: true as const, id }
    },
  })

  app.get('/events', {
    schema: { tags, summary: "The team's guestbook events", querystring: ListEventsQuery, security: security.apiKey, response: { 200: GuestbookEventList, ...errorResponses(400, 401, 404) } },
    handler: async (request) => listGuestbookEvents(store, { teamId: teamOf(request).id, contractId: request.query.contractId }),
  })

  app.patch('/events/metadata', {
    schema: { tags, summary: "Replace a guestbook event's metadata", body: EventMetadataBody, security: security.apiKey, response: { 200: Success, ...errorResponses(...BODY_ERRORS, 401, 404) } },
    handler: async (request) => {
      const { metadata, ...selector } = request.body
      await updateGuestbookEventMetadata(store, { teamId: teamOf(request).id, selector, metadata, now: now() })
      return { success: true as const }
    },
  })

  app.post('/events/assign/legacy', {
    schema: { tags, summary: 'Assign a guestbook event to chips', body: AssignEventBody, security: security.apiKey, response: { 200: Success, ...errorResponses(...BODY_ERRORS, 401, 404) } },
    handler: async (request) => {
      const { tagUIDs, guestbookEventId } = request.body
      await assignGuestbookEvent(store, { teamId: teamOf(request).id, eventId: guestbookEventId, uids: tagUIDs, now: now() })
      return { success: true as const }
    },
  })
}

/** POST /events/mint/self is authorized by the OTP of a tap, not an API key. */
const withOtp: FastifyPluginAsyncZod = async (app) => {
  app.post('/events/mint/self', {
    preHandler: app.requireOtp,
    schema: { tags, summary: 'Mint an event token with the OTP of a tap', body: RecipientBody, security: security.otp, response: { 200: TxnResponse, ...errorResponses(...BODY_ERRORS, 401, 403, 404, 409) } },
    handler: async (request) => {
      const recipient = await recipientOf(app, request.body.recipient)
      const result = await mintGuestbookEventSelf(app.services, { code: otpCodeOf(request), recipient })
      return { success: true as const, txnHash: result.txnHash }
    },
  })
}

const events: FastifyPluginAsyncZod = async (app) => {
  await app.register(withApiKey)
  await app.register(withOtp)
}

export default events
