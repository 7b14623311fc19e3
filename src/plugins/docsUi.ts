import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'

/** The OpenAPI document's generator, once built: @fastify/swagger's `swagger()` of the document's instance. */
export type OpenApiDocument = FastifyInstance['swagger']

/** The response headers of swagger-ui's routes that the outer reply carries over. */
const FORWARDED = ['content-type', 'cache-control', 'etag', 'last-modified', 'location', 'vary', 'content-security-policy']

/**
 * The docs UI (@fastify/swagger-ui) at /docs, built at the first visit in a Fastify instance of its
 * own and reached through `inject`. Registered with the app, swagger-ui and @fastify/static cost
 * every `tapgate serve` ~60 ms of start-up (loading them, reading swagger-ui's files) for a page an
 * operator opens now and then. The document is the one /openapi.json serves.
 */
export function docsUi(app: FastifyInstance, document: () => Promise<OpenApiDocument>): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  let ui: Promise<FastifyInstance> | null = null
  const build = async () => {
    const { default: swaggerUi } = await import('@fastify/swagger-ui')
    const swagger = await document()
    const inner = Fastify({ logger: false })
    // swagger-ui asks for @fastify/swagger by name and reads the document through its decorator.
    await inner.register(fp(async (scope) => void scope.decorate('swagger', swagger), { name: '@fastify/swagger' }))
    await inner.register(swaggerUi, { routePrefix: '/docs' })
    await inner.ready()
    return inner
  }
  app.addHook('onClose', async () => {
    if (ui) await (await ui.catch(() => null))?.close()
  })
  return async (request, reply) => {
    ui ??= build()
    const res = await (await ui).inject({ method: 'GET', url: request.url, headers: request.headers })
    reply.code(res.statusCode)
    for (const name of FORWARDED) if (res.headers[name] !== undefined) reply.header(name, res.headers[name])
    return reply.send(res.rawPayload)
  }
}
