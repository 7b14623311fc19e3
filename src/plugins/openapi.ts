import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import fp from 'fastify-plugin'
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod'

/**
 * OpenAPI document at /openapi.json and a docs UI at /docs, both generated
 * from the zod schemas the routes validate with.
 */
export default fp(
  async (app) => {
    await app.register(swagger, {
      openapi: {
        info: {
          title: 'tapgate phygital API',
          version: '1.0.0',
          description: 'Local gateway for NFC-linked phygital tokens. Errors: { success: false, error, message, errors? }.',
        },
        components: {
          securitySchemes: {
            apiKey: { type: 'apiKey', in: 'header', name: 'x-service-api-key' },
            otp: { type: 'apiKey', in: 'header', name: 'x-service-code' },
            station: { type: 'apiKey', in: 'header', name: 'x-station-token' },
          },
        },
      },
      transform: jsonSchemaTransform,
      transformObject: jsonSchemaTransformObject,
    })
    await app.register(swaggerUi, { routePrefix: '/docs' })
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  },
  { name: 'openapi' },
)
