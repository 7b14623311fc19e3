import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { UnavailableError } from '../errors.js'
import { queryRef } from '../refs/queryRef.js'
import { ApiKeyHeader, errorResponses } from '../schemas/common.js'
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
      headers: ApiKeyHeader,
      response: { 200: RefResponse, ...errorResponses },
    },
    handler: async (request) => {
      const { store, config, now } = app.services
      // Refused before the ref is touched, so the caller can retry without the flag.
      if (request.query.includeOwner)
        throw new UnavailableError('chain_unavailable', 'includeOwner needs a chain connection, which this gateway does not have yet')
      return queryRef(store, {
        refId: request.params.id,
        callerTeamId: request.team?.id ?? null,
        includeMetadata: request.query.includeMetadata ?? false,
        now: now(),
        otpTtlMs: config.otpTtlSeconds * 1000,
      })
    },
  })
}

export default refs
