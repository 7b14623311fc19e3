import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import Fastify, { type FastifyInstance, type FastifyServerOptions, type RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { createJsonSchemaTransform, createJsonSchemaTransformObject } from 'fastify-type-provider-zod'
import { denyFraming } from './denyFraming.js'
import { docsUi, type OpenApiDocument } from './docsUi.js'

// The provider's default override drops every `{}` branch of a union, meant for unrepresentable
// types; but while zod converts, a schema used twice in one document is still a `{}` placeholder,
// so it dropped real branches (the digit-string form of chainId wherever two ids share a body).
// What else that override handles (dates, undefined, unions with null) these schemas do not use.
const zodToJsonConfig = { override: () => {} }

type Document = ReturnType<ReturnType<typeof createJsonSchemaTransformObject>>
type WithSchemas = { paths?: unknown; components?: { schemas?: Record<string, unknown> } }

/**
 * Keeps only the component schemas something refers to. The provider adds an
 * `…Input` twin of every registered schema; requests are inline, so the twins
 * would only be unused duplicates.
 */
export function dropUnusedSchemas(document: Document): Document {
  const doc = document as WithSchemas
  const schemas = doc.components?.schemas
  if (!schemas) return document
  const refsIn = (value: unknown): string[] =>
    [...JSON.stringify(value ?? null).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!)
  const used = new Set<string>()
  const pending = refsIn(doc.paths)
  while (pending.length > 0) {
    const name = pending.pop()!
    if (used.has(name)) continue
    used.add(name)
    pending.push(...refsIn(schemas[name]))
  }
  const kept = Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name)))
  return { ...document, components: { ...doc.components, schemas: kept } } as Document
}

/**
 * A nullable reference (`Schema.nullable()` of a registered schema) converts to `{ nullable: true,
 * allOf: [{ $ref }] }`; OpenAPI 3.0 gives `nullable` meaning only beside a `type`, so validators
 * refuse it (Ajv: "nullable cannot be used without type"). The referenced schema's type is copied next
 * to it: `{ type: 'object', nullable: true, allOf: [{ $ref }] }` says "that object, or null".
 */
export function typeNullableRefs(document: Document): Document {
  const schemas = (document as WithSchemas).components?.schemas ?? {}
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit)
    if (node === null || typeof node !== 'object') return
    const schema = node as Record<string, unknown>
    const only = Array.isArray(schema.allOf) && schema.allOf.length === 1 ? (schema.allOf[0] as { $ref?: unknown }) : undefined
    if (schema.nullable === true && schema.type === undefined && typeof only?.$ref === 'string') {
      const target = schemas[only.$ref.replace('#/components/schemas/', '')] as { type?: unknown } | undefined
      if (target?.type !== undefined) schema.type = target.type
    }
    Object.values(schema).forEach(visit)
  }
  visit(document)
  return document
}

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>
/** The document's instance never validates or serializes: it only reads the routes' schemas. */
const noCompilers = { buildValidator: () => () => () => true, buildSerializer: () => () => JSON.stringify } as unknown as CompilersFactory

const swaggerOptions = (): FastifyDynamicSwaggerOptions => {
  const transformObject = createJsonSchemaTransformObject({ zodToJsonConfig })
  return {
    openapi: {
      info: {
        title: 'tapgate phygital API',
        version: '1.0.0',
        description: 'Local gateway for NFC-linked phygital tokens. Errors: { success: false, error, message, errors? }; with compat=iyk the hosted API\'s { statusCode, error: <reason phrase>, message } plus success: false and tapgate\'s code in `code`.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-service-api-key', description: 'Team API key (`tapgate key create`); the hosted API\'s name `x-iyk-api-key` is accepted too' },
          otp: { type: 'apiKey', in: 'header', name: 'x-service-code', description: 'One-time code from the first query of a ref (GET /refs/{id}); the hosted API\'s name `x-iyk-code` is accepted too' },
          station: { type: 'apiKey', in: 'header', name: 'x-station-token', description: 'Station token (`tapgate station create`)' },
          kiosk: { type: 'apiKey', in: 'header', name: 'x-kiosk-token', description: 'Kiosk page token (`tapgate station kiosk-url`)' },
          staffSession: { type: 'apiKey', in: 'header', name: 'x-staff-session', description: 'Staff session (POST /kiosk/staff/session with the station PIN)' },
        },
      },
    },
    transform: createJsonSchemaTransform({ zodToJsonConfig }),
    transformObject: (documentObject) => typeNullableRefs(dropUnusedSchemas(transformObject(documentObject))),
  }
}

/**
 * The app's routes as registered, and the OpenAPI document made from them at the first request
 * for it. @fastify/swagger (with yaml and its resolver) costs every `tapgate serve` ~45 ms to load
 * and register, for a document read now and then; so the app only records its routes, and the
 * document comes from a Fastify instance of its own where the plugin sees the same routes (method,
 * URL, schema, config) registered again with no handler to run.
 */
function lazyDocument(app: FastifyInstance): () => Promise<OpenApiDocument> {
  const routes: RouteOptions[] = []
  // HEAD twins of GET routes: @fastify/swagger leaves them out, and the instance makes its own.
  app.addHook('onRoute', (route) => void (route.method !== 'HEAD' && routes.push(route)))
  let built: Promise<FastifyInstance> | null = null
  const build = async () => {
    const { default: swagger } = await import('@fastify/swagger')
    const inner = Fastify({ logger: false, schemaController: { compilersFactory: noCompilers } })
    await inner.register(swagger, swaggerOptions())
    for (const { method, url, schema, config } of routes) inner.route({ method, url, schema, config, handler: async () => null })
    await inner.ready()
    return inner
  }
  app.addHook('onClose', async () => {
    if (built) await (await built.catch(() => null))?.close()
  })
  return async () => {
    built ??= build()
    const inner = await built
    return inner.swagger.bind(inner)
  }
}

/**
 * OpenAPI document at /openapi.json and a docs UI at /docs, both generated
 * from the zod schemas the routes validate with. Each route states its
 * credential as `schema.security` (schemas/common.ts `security`).
 */
export default fp(
  async (app) => {
    const document = lazyDocument(app)
    // In a scope of its own, so the hook covers every /docs response (page, assets, redirect) and nothing else.
    await app.register(async (docs) => {
      docs.addHook('onSend', denyFraming)
      const ui = docsUi(app, document)
      docs.get('/docs', { schema: { hide: true } }, ui)
      docs.get('/docs/*', { schema: { hide: true } }, ui)
    })
    app.get('/openapi.json', { schema: { hide: true } }, async () => (await document())())
  },
  { name: 'openapi' },
)
