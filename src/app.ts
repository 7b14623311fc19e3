import rateLimit, { normalizeIP } from '@fastify/rate-limit'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod'
import { type LocalReadersSlot, localReadersSlot } from './card/localReaders.js'
import { type Chains, createChains } from './chain/chains.js'
import type { Config } from './config.js'
import type { Store } from './db/store.js'
import { BaseError } from './errors.js'
import { openGatewaySecret } from './profiles/secretCheck.js'
import { loggerOptions } from './logger.js'
import auth from './plugins/auth.js'
import hostedCompat from './plugins/hostedCompat.js'
import errorHandler from './plugins/errorHandler.js'
import openapi from './plugins/openapi.js'
import { SnapshotStore } from './plugins/rateLimitStore.js'
import services from './plugins/services.js'
import websocket from './plugins/websocket.js'
import { clientErrorHandler, frameworkErrors, MAX_PARAM_LENGTH, requestTimeouts } from './plugins/transportErrors.js'
import attendees from './routes/attendees.js'
import chipGroups from './routes/chipGroups.js'
import events from './routes/events.js'
import health from './routes/health.js'
import hosted from './routes/hosted.js'
import otps from './routes/otps.js'
import phygitals from './routes/phygitals.js'
import metadata from './routes/metadata.js'
import refs from './routes/refs.js'
import stationTaps from './routes/stationTaps.js'
import tap from './routes/tap.js'
import transfers from './routes/transfers.js'
import type { Relayer } from './relayer/relayer.js'
import { createFeedHub } from './feed/feedHub.js'
import { createMediaCache } from './media/mediaCache.js'
import { createKeyring } from './taps/createKeyring.js'
import { kioskAssetsOnce } from './kiosk/web/bundle.js'
import { version } from './version.js'

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>
// Fastify types these factories for ajv's and fast-json-stringify's compilers; the type provider's take zod schemas.
const zodCompilers = { buildValidator: () => validatorCompiler, buildSerializer: () => serializerCompiler } as unknown as CompilersFactory

export type BuildAppOptions = {
  config: Config
  store: Store
  /** Where log lines go (default stdout); tests pass a stream to inspect them. */
  logStream?: NodeJS.WritableStream
  /** A logger made before the app (server.ts: the chain logs before the app exists); takes the place of logStream. */
  logger?: FastifyBaseLogger
  now?: () => number
  /** Default: the configured chains, without the embedded one (server.ts starts that). */
  chains?: Chains
  relayer?: Relayer
  /** The kiosk pages' browser code (default: the package's own); tests point it at a broken copy. */
  kioskClientDir?: string
  /** This gateway's readers: server.ts fills it once its in-process station runs (default: none). */
  localReaders?: LocalReadersSlot
}

/**
 * Builds the gateway: plugins, then routes. It never listens (see server.ts),
 * so tests, the CLI and benches all get the same app.
 *
 * @example
 * const app = await buildApp({ config, store })
 * const res = await app.inject({ url: '/health' })
 */
export async function buildApp({
  config,
  store,
  logStream,
  logger,
  now = Date.now,
  chains = createChains({ config }),
  relayer,
  kioskClientDir,
  localReaders = localReadersSlot('this gateway runs no in-process station (`tapgate serve` starts one on its PC/SC readers)'),
}: BuildAppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(logger ? { loggerInstance: logger } : { logger: loggerOptions(config.logLevel, config.tapPath, logStream) }),
    bodyLimit: 1024 * 1024,
    // Behind a reverse proxy, request.ip (the rate-limit key) is the proxy's own address unless it is trusted.
    trustProxy: config.trustProxy,
    // A client trickling its request is cut off (Fastify's default, 0, waits forever); see transportErrors.ts.
    requestTimeout: config.requestTimeoutMs,
    http: requestTimeouts(config.requestTimeoutMs),
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Refusals before any route runs, in the API's error shape rather than Fastify's.
    frameworkErrors,
    return503OnClosing: false,
    clientErrorHandler: clientErrorHandler(config.requestTimeoutMs),
    // zod validates and serializes every route. Named here, not only through setValidatorCompiler
    // below: without a factory, Fastify loads ajv and fast-json-stringify at construction (~80 ms
    // of every start) for compilers nothing uses.
    schemaController: { compilersFactory: zodCompilers },
  })
  // The API speaks JSON only: without this, Fastify's built-in text/plain parser
  // turns a text body into a string and the caller gets a misleading 400.
  app.removeContentTypeParser('text/plain')
  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)

  const secret = await openGatewaySecret(store, { dataDir: config.dataDir, secretHex: config.secret })
  // The kiosk feed's live side. It hears every commit that appended station events from the store (this
  // process's at once; on PostgreSQL another gateway's too), so no domain function tells it.
  const feed = await createFeedHub(store, { onError: (error) => app.log.warn({ err: error }, 'the kiosk feed could not read new rows; retrying at the next poll') })
  const unlisten = await store.listen('tapgate_feed', () => feed.changed())
  app.addHook('onClose', async () => {
    feed.close()
    // LISTEN ends with its connection: a database already gone (or its client closed) must not stop the close.
    await unlisten().catch((error: unknown) => app.log.warn({ err: error }, 'could not UNLISTEN the kiosk feed'))
  })
  // Product images: fetches in flight are aborted before the store closes.
  const media = createMediaCache({ store, config, now, log: app.log, userAgent: `tapgate/${version}` })
  app.addHook('onClose', () => media.close())
  await app.register(services, { services: { store, config, now, version, secret, keyring: createKeyring(store, secret, config.taps), chains, relayer, feed, media, localReaders } })
  await app.register(errorHandler, { compat: config.compat })
  await app.register(hostedCompat)
  await app.register(auth)
  await app.register(rateLimit, {
    global: false,
    store: SnapshotStore,
    // The plugin's default key runs its IPv6 subnet regex on every request; only IPv6 needs it.
    keyGenerator: (request) => (request.ip.includes(':') ? normalizeIP(request.ip) : request.ip),
    errorResponseBuilder: (_request, context) =>
      new BaseError(429, 'rate_limited', `Too many requests; retry in ${context.after}`),
  })
  await app.register(openapi)
  // Before the routes: GET /station/ws and GET /kiosk/ws are routes of this one plugin.
  await app.register(websocket)

  await app.register(health)
  await app.register(refs)
  await app.register(otps)
  await app.register(phygitals)
  await app.register(transfers)
  await app.register(metadata)
  await app.register(chipGroups)
  await app.register(events)
  await app.register(attendees)
  await app.register(tap)
  await app.register(hosted)
  await app.register(stationTaps)
  await app.register(import('./routes/stationSocket.js'))
  await app.register(import('./routes/kioskSocket.js'))
  await app.register(import('./routes/kioskStaff.js'))
  // The browser pages' one bundle (kiosk, staff, claim and console), built at the first request for an asset.
  const pageAssets = kioskAssetsOnce({
    clientDir: kioskClientDir,
    onFailure: (error) => app.log.error({ err: error }, 'the pages\' assets failed to build: /kiosk/assets/* and /console/assets/* answer 503 until the gateway restarts'),
  })
  await app.register(import('./routes/kioskPages.js'), { assets: pageAssets })
  await app.register(import('./routes/media.js'))
  await app.register(import('./routes/kioskClaims.js'))
  await app.register(import('./routes/claimLinks.js'))
  await app.register(import('./routes/consolePages.js'), { assets: pageAssets })
  await app.register(import('./routes/console.js'))
  return app
}
