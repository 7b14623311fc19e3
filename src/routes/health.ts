import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'

const Health = z.object({ status: z.literal('ok'), version: z.string(), uptimeSeconds: z.number() })

const health: FastifyPluginAsyncZod = async (app) => {
  const version = app.services.version
  app.get('/health', {
    schema: { tags: ['meta'], summary: 'Liveness, with a database round trip', response: { 200: Health } },
    handler: async () => {
      app.services.store.ping()
      return { status: 'ok' as const, version, uptimeSeconds: Math.round(process.uptime()) }
    },
  })
}

export default health
