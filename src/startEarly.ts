import type { FastifyBaseLogger } from 'fastify'
import { type EmbeddedChain, startEmbeddedChain } from './chain/embeddedChain.js'
import type { Config } from './config.js'
import { createGatewayLogger } from './gatewayLogger.js'

/** The gateway's logger and the embedded chain's start, begun before anything else. */
export type EarlyStart = {
  log: FastifyBaseLogger
  embeddedStart: Promise<EmbeddedChain> | undefined
  /** Stops what was begun, for a start that fails before startServer takes it over. */
  abandon(): Promise<void>
}

/**
 * Creates the one logger shared by the chain, the store, the relayer and the app (the chain's
 * start-up lines come before the app exists), and starts anvil, which boots while the rest loads.
 * A module of its own with a small import graph: `tapgate serve` calls it before it imports the
 * server (~0.3 s of modules), so anvil's ~0.1 s boot is off the start-up's critical path.
 */
export function startEarly(config: Config, logStream?: NodeJS.WritableStream): EarlyStart {
  const log = createGatewayLogger(config.logLevel, config.tapPath, logStream)
  const embeddedStart = config.chain.embedded
    ? startEmbeddedChain({ dataDir: config.dataDir, saveEveryBlocks: config.chain.saveEveryBlocks, log })
    : undefined
  // Awaited later by startServer; a failure before then is not an unhandled rejection.
  embeddedStart?.catch(() => {})
  return { log, embeddedStart, abandon: async () => void (await embeddedStart?.then((chain) => chain.stop(), () => {})) }
}
