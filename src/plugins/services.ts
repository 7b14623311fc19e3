import fp from 'fastify-plugin'
import type { LocalReadersSlot } from '../card/localReaders.js'
import type { Chains } from '../chain/chains.js'
import type { Config } from '../config.js'
import type { Store } from '../db/store.js'
import type { FeedHub } from '../feed/feedHub.js'
import type { MediaCache } from '../media/mediaCache.js'
import type { Relayer } from '../relayer/relayer.js'
import type { Keyring } from '../taps/createKeyring.js'

export type Services = {
  store: Store
  config: Config
  /** Epoch ms; injectable so tests can move time (OTP expiry, claim windows). */
  now: () => number
  /** package.json version, for /health and the OpenAPI document. */
  version: string
  /** Seals chip keys at rest. */
  secret: Buffer
  /** Chip profiles with their keys opened, for tap verification. */
  keyring: Keyring
  /** Every chain the gateway can sign for (and reach, when its RPC is up). */
  chains: Chains
  /** The outbox worker; absent where nothing sends (CLI, some tests), and then queued work waits for a server. */
  relayer?: Relayer
  /** The per-station kiosk feed, live: the store tells it of every commit that appended station_events rows (app.ts). */
  feed: FeedHub
  /** Product images: GET /media/:key serves them; prefetch(key) when a card is about to be shown. */
  media: MediaCache
  /** This gateway's own readers (its in-process station's), once it runs; or why there are none. */
  localReaders: LocalReadersSlot
}

declare module 'fastify' {
  interface FastifyInstance {
    services: Services
  }
}

/** Decorates the instance with the services every route uses. */
export default fp<{ services: Services }>(
  async (app, { services }) => {
    app.decorate('services', services)
  },
  { name: 'services' },
)
