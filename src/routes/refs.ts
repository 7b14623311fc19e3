import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { readTokenOwner } from '../phygitals/tokenOwner.js'
import { queryRef } from '../refs/queryRef.js'
import { errorResponses, PATH_ERRORS, security } from '../schemas/common.js'
import { RefParams, RefQuery, RefResponse } from '../schemas/refs.js'
import { publicRateLimit } from './rateLimit.js'

const refs: FastifyPluginAsyncZod = async (app) => {
  app.get('/refs/:id', {
    onRequest: app.optionalApiKey,
    config: publicRateLimit(app),
    schema: {
      tags: ['refs'],
      summary: 'Query a ref: valid (with OTPs) on its first query only',
      params: RefParams,
      querystring: RefQuery,
      security: security.optionalApiKey,
      response: { 200: RefResponse, ...errorResponses(...PATH_ERRORS, 401, 404, 429) },
    },
    handler: async (request) => {
      const { store, config, now, chains } = app.services
      // Read before the ref is touched: when the chain cannot answer (503), the ref is still unused.
      const ref = request.query.includeOwner ? await store.refs.get(request.params.id) : undefined
      const token = ref && await store.tokens.findByChip(ref.chipUid)
      const owner = token ? await readTokenOwner(chains, token) : null
      const view = await queryRef(store, {
        refId: request.params.id,
        callerTeamId: request.team?.id ?? null,
        includeMetadata: request.query.includeMetadata ?? false,
        now: now(),
        otpTtlMs: config.otpTtlSeconds * 1000,
      })
      if (owner && view.linkedToken) view.linkedToken.ownerAddress = owner
      return view
    },
  })
}

export default refs
