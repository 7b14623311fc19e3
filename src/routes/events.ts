import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import {
  assignGuestbookEvent,
  createGuestbookEvent,
  listGuestbookContracts,
  listGuestbookEvents,
  updateGuestbookEventMetadata,
} from '../guestbook/guestbookEvents.js'
import { teamOf } from '../plugins/auth.js'
import { ApiKeyHeader, errorResponses, Success } from '../schemas/common.js'
import {
  AssignEventBody,
  CreateEventBody,
  EventMetadataBody,
  GuestbookContract,
  GuestbookEvent,
  ListEventsQuery,
} from '../schemas/events.js'

const tags = ['guestbook']

const events: FastifyPluginAsyncZod = async (app) => {
  const { store, now } = app.services
  app.addHook('onRequest', app.requireApiKey)

  app.get('/events/contracts', {
    schema: { tags, summary: "The team's guestbook contracts", headers: ApiKeyHeader, response: { 200: z.array(GuestbookContract), ...errorResponses } },
    handler: async (request) => listGuestbookContracts(store, { teamId: teamOf(request).id }),
  })

  app.post('/events', {
    schema: { tags, summary: 'Create a guestbook event', body: CreateEventBody, headers: ApiKeyHeader, response: { 200: Success.extend({ id: z.number() }), ...errorResponses } },
    handler: async (request) => {
      const { id } = createGuestbookEvent(store, { ...request.body, teamId: teamOf(request).id, now: now() })
      return { success: true as const, id }
    },
  })

  app.get('/events', {
    schema: { tags, summary: "The team's guestbook events", querystring: ListEventsQuery, headers: ApiKeyHeader, response: { 200: z.array(GuestbookEvent), ...errorResponses } },
    handler: async (request) => listGuestbookEvents(store, { teamId: teamOf(request).id, contractId: request.query.contractId }),
  })

  app.patch('/events/metadata', {
    schema: { tags, summary: "Replace a guestbook event's metadata", body: EventMetadataBody, headers: ApiKeyHeader, response: { 200: Success, ...errorResponses } },
    handler: async (request) => {
      const { metadata, ...selector } = request.body
      updateGuestbookEventMetadata(store, { teamId: teamOf(request).id, selector, metadata, now: now() })
      return { success: true as const }
    },
  })

  app.post('/events/assign/legacy', {
    schema: { tags, summary: 'Assign a guestbook event to chips', body: AssignEventBody, headers: ApiKeyHeader, response: { 200: Success, ...errorResponses } },
    handler: async (request) => {
      const { tagUIDs, guestbookEventId } = request.body
      assignGuestbookEvent(store, { teamId: teamOf(request).id, eventId: guestbookEventId, uids: tagUIDs, now: now() })
      return { success: true as const }
    },
  })
}

export default events
