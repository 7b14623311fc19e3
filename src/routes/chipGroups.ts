import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { iso } from '../ids.js'
import { teamOf } from '../plugins/auth.js'
import { errorResponses, security } from '../schemas/common.js'
import { ChipGroupList } from '../schemas/events.js'

const chipGroups: FastifyPluginAsyncZod = async (app) => {
  app.get('/chip-groups', {
    onRequest: app.requireApiKey,
    schema: { tags: ['chips'], summary: "The team's chip groups", security: security.apiKey, response: { 200: ChipGroupList, ...errorResponses(401) } },
    handler: async (request) =>
      (await app.services.store.chipGroups
        .listByTeam(teamOf(request).id))
        .map((g) => ({ id: g.id, name: g.name, createdAt: iso(g.createdAt) })),
  })
}

export default chipGroups
