import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { NotFoundError } from '../errors.js'
import { errorResponses, PATH_ERRORS, security } from '../schemas/common.js'
import { MetadataParams, TokenMetadataResponse } from '../schemas/tokenMetadata.js'

/**
 * GET /metadata/:chainId/:contract/:tokenId: the JSON our contracts' tokenURI
 * (ERC-721) and uri(id) (ERC-1155 guestbook) point at. Public: wallets and
 * marketplaces fetch it without a key.
 */
const metadata: FastifyPluginAsyncZod = async (app) => {
  const { store } = app.services
  app.get('/metadata/:chainId/:contract/:tokenId', {
    schema: {
      tags: ['metadata'],
      summary: 'Token metadata for tokenURI / uri(id)',
      params: MetadataParams,
      security: security.none,
      response: { 200: TokenMetadataResponse, ...errorResponses(...PATH_ERRORS, 404) },
    },
    handler: async (request, reply) => {
      const { chainId, contract, tokenId } = request.params
      const token = await store.tokens.findByKey({ chainId, contractAddress: contract, tokenId })
      const json = token?.metadata ?? (await store.guestbook.findEventByTokenOrPlanned(chainId, contract, tokenId))?.metadata
      if (!json) throw new NotFoundError('metadata_not_found', 'No metadata for this token')
      // Short: a metadata update (and its ERC-4906 event) should show within a minute.
      reply.header('cache-control', 'public, max-age=60')
      return JSON.parse(json) as Record<string, unknown>
    },
  })
}

export default metadata
