import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import { bootstrapDemo } from './bootstrapDemo.js'
import { consoleSignInUrl, createConsoleLink } from './console/consoleSessions.js'
import type { Config } from './config.js'
import { openGatewayStore, type Store } from './db/store.js'
import { checkGatewaySecret, openGatewaySecret } from './profiles/secretCheck.js'
import { dataDirExposure } from './paths.js'
import { EMBEDDED_CHAIN_ID } from './chain/chainKeys.js'
import { type Chains, createChains } from './chain/chains.js'
import { createRelayer, type Relayer } from './relayer/relayer.js'
import { restoreEmbeddedChain } from './relayer/restoreEmbeddedChain.js'
import { resumeAttendeeImports } from './attendees/importAttendees.js'
import { type EarlyStart, startEarly } from './startEarly.js'
import { startInProcessStation } from '../station/inProcessStation.js'
import { localReadersSlot } from './card/localReaders.js'

export type StartServerOptions = {
  /** Where log lines go (default stdout); tests pass a stream to read them. */
  logStream?: NodeJS.WritableStream
  /** What startEarly began before this module was loaded (the CLI's `serve`); default: begun here. */
  early?: EarlyStart
}

export type StartServerReturnType = {
  app: FastifyInstance
  store: Store
  url: string
  /** The demo team's API key, when this start created the team (it is printed once and kept nowhere). */
  demoApiKey?: string
  chains: Chains
  relayer: Relayer
  close: () => Promise<void>
}

/**
 * Opens the data dir, seeds the demo team on first start, and listens.
 * `say` prints the human-facing start-up text (the demo key appears there once, never in logs).
 */
export async function startServer(
  config: Config,
  say: (line: string) => void = console.log,
  options: StartServerOptions = {},
): Promise<StartServerReturnType> {
  let app: FastifyInstance | undefined
  const { log, embeddedStart } = options.early ?? startEarly(config, options.logStream)
  let store: Store | undefined
  let chains: Chains | undefined
  let relayer: Relayer | undefined
  try {
    store = await openGatewayStore({ dataDir: config.dataDir, databaseUrl: config.database.url, backgroundCheckpoints: true, log })
    // Before anything is sealed or served: a secret that cannot open the stored chip keys stops the start here.
    const secretSource = { dataDir: config.dataDir, secretHex: config.secret }
    const secret = await openGatewaySecret(store, secretSource)
    await checkGatewaySecret(store, secret, secretSource)
    // An import a crash cut short: dropped while it was being checked, finished once every row had passed.
    await resumeAttendeeImports(store, Date.now())
    const demo = config.demo ? await bootstrapDemo(store, { config, now: Date.now(), secret }) : null
    chains = createChains({ config, embedded: await embeddedStart })
    relayer = createRelayer({ store, chains, config, log })
    // Filled once the in-process station runs (it starts in the background, after the app listens).
    const localReaders = localReadersSlot('the in-process station is starting; try again in a moment')
    app = await buildApp({ config, store, chains, relayer, logger: log, localReaders })
    const exposure = dataDirExposure(config.dataDir)
    if (exposure) app.log.warn({ dataDir: config.dataDir }, exposure)
    const embedded = chains.get(EMBEDDED_CHAIN_ID)
    if (embedded && chains.embedded?.owner) {
      const restore = () => restoreEmbeddedChain({ store: store!, chain: embedded, log, now: Date.now() })
      await restore()
      // anvil died under us: nothing sends while it is replaced, and the outbox then replays what its saved state lacks.
      chains.embedded.onRestart((respawn) =>
        relayer!.hold(EMBEDDED_CHAIN_ID, async () => {
          await respawn()
          await restore()
        }),
      )
    }
    relayer.start()
    await app.listen({ host: config.host, port: config.port })
    const address = app.server.address()
    const port = typeof address === 'object' && address ? address.port : config.port
    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`
    // One write for the whole block, so no log line of the start lands in the middle of it.
    const listening = `tapgate listening on ${url} (data: ${config.dataDir})`
    // `station kiosk-url` prints http://127.0.0.1:<port> unless told the address the gateway is at.
    const kioskBase = config.publicBaseUrl === undefined && url === `http://127.0.0.1:${config.port}` ? '' : ` --base-url ${url}`
    if (demo) {
      // The demo team's console link, made with its key and shown once beside it: one sign-in, within the hour.
      const team = demo.summary.teams[0]!
      const consoleLink = consoleSignInUrl(config.publicBaseUrl ?? url, (await createConsoleLink(store, { teamId: team.id, now: Date.now() })).token)
      say([listening, ...demoLines({ url, tapPath: config.tapPath, apiKey: demo.key.apiKey, team, kioskBase, consoleLink })].join('\n'))
    } else say(listening)

    // ---- In-process station (station/inProcessStation.ts): the local PC/SC readers, verified here. ----
    // Started in the background, so it never delays or fails the start: without PC/SC (or with
    // station.enabled false) it logs one line and stays off.
    // Its readers go to the app then: the console provisions chips on them (src/card/localReaders.ts).
    const station = startInProcessStation({ app, store, config, onOff: (why) => localReaders.off(`the in-process station is off: ${why}`) }).then(
      (started) => {
        if (started) localReaders.set(started.readers)
        return started
      },
      (error: unknown) => {
        app!.log.warn({ err: error }, 'in-process station off: it failed to start')
        localReaders.off('the in-process station failed to start (see the gateway\'s log)')
        return null
      },
    )
    // ---- end of the in-process station ----

    const close = async () => {
      localReaders.off('the gateway is stopping')
      await (await station)?.close()
      await relayer!.stop()
      await app!.close()
      await chains!.close()
      await store!.close()
    }
    return { app, store, url, ...(demo ? { demoApiKey: demo.key.apiKey } : {}), chains, relayer, close }
  } catch (error) {
    await relayer?.stop()
    await app?.close()
    await (chains ? chains.close() : embeddedStart?.then((chain) => chain.stop(), () => {}))
    await store?.close()
    throw error
  }
}

/** What a new user reads after the first start: the demo team's key (only here, once) and what to try. */
function demoLines(p: { url: string; tapPath: string; apiKey: string; team: { id: number; name: string }; kioskBase: string; consoleLink: string }): string[] {
  const { url, team } = p
  return [
    '',
    `Created the demo team "${team.name}" from fixtures/demo.json.`,
    `Its API key is shown only this once; keep it:`,
    `  ${p.apiKey}`,
    '',
    // The key once, above: a terminal's scroll-back and a screen share hold every copy printed.
    'Try (API_KEY=<the key above>):',
    `  Console (sign in, one use, 1 hour): ${p.consoleLink}`,
    `  curl ${url}/health`,
    `  curl -H "x-service-api-key: $API_KEY" ${url}/chip-groups`,
    `  curl -H "x-service-api-key: $API_KEY" ${url}/events`,
    `  npx tapgate tap --uid 04DE5F1EACC040        # prints a ref id`,
    `  curl ${url}/refs/<ref id>                   # first query: isValidRef true + OTPs`,
    `  open ${url}${p.tapPath}?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086`,
    `                                              # NXP's published tap, verified for the demo chip; again: a replay`,
    `  API docs: ${url}/docs   OpenAPI: ${url}/openapi.json`,
    '',
    'A check-in kiosk for the demo event (README, "Running a check-in kiosk"):',
    `  npx tapgate station create --team ${team.id} --name "Door A"   # prints the station's id and token`,
    `  npx tapgate station set --station <id> --mode checkin --event 1`,
    `  npx tapgate station kiosk-url --station <id>${p.kioskBase}        # open it on the kiosk's screen`,
    '',
  ]
}
