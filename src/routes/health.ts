import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { errorResponses, security } from '../schemas/common.js'
import { Health } from '../schemas/health.js'

const health: FastifyPluginAsyncZod = async (app) => {
  const { version, store, chains, relayer } = app.services
  app.get('/health', {
    schema: {
      tags: ['meta'],
      summary: 'Liveness, with a database round trip and the state of each chain',
      description: 'Always 200 while the gateway serves: a chain outage delays transactions but loses none.',
      security: security.none,
      // No 4xx of its own: only what any request can meet (a request not received in time, the database gone, shutting down).
      response: { 200: Health, ...errorResponses() },
    },
    handler: async () => {
      await store.ping()
      const status = new Map((relayer?.status() ?? []).map((s) => [s.chainId, s]))
      return {
        status: 'ok' as const,
        version,
        uptimeSeconds: Math.round(process.uptime()),
        chains: await Promise.all(
          chains.list().map(async (chain) => ({
            chainId: chain.chainId,
            embedded: chain.embedded,
            reachable: status.get(chain.chainId)?.reachable ?? false,
            pending: await store.chainTxs.countOpen(chain.chainId),
            lastError: status.get(chain.chainId)?.lastError ?? null,
          })),
        ),
      }
    },
  })
}

export default health
