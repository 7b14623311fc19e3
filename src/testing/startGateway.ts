import fs from 'node:fs'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { buildApp } from '../app.js'
import { createApiKey } from '../auth/apiKeys.js'
import { EMBEDDED_CHAIN_ID } from '../chain/chainKeys.js'
import { type Chains, createChains } from '../chain/chains.js'
import { type EmbeddedChain, rpc, startEmbeddedChain } from '../chain/embeddedChain.js'
import { ConfigSchema, type Config, type ConfigInput } from '../config.js'
import type { SqliteStore } from '../db/store.js'
import { restoreSnapshotFile, writeSnapshotFile } from '../db/sqlite/snapshotFile.js'
import { importData, parseImportFile } from '../importer/importData.js'
import { openGatewaySecret } from '../profiles/secretCheck.js'
import { readTokenOwner } from '../phygitals/tokenOwner.js'
import { createRelayer, type Relayer } from '../relayer/relayer.js'
import { restoreEmbeddedChain } from '../relayer/restoreEmbeddedChain.js'
import { createTestClock, type TestClock } from './testClock.js'
import { createTestChip, tapUrlOnGateway, type ChipScheme, type TestChip, type TokenRef } from './testChip.js'
import { listTaps, type TapRecord } from './tapRecords.js'
import { replayFixture, type ReplayedTap } from './replayFixture.js'
import { makeTempDataDir } from './tempDirs.js'
import { openTestStore } from './testStore.js'

export type StartGatewayOptions = {
  /** 'embedded' (default): a local anvil as chain 31337, started for this gateway; false: no chain (tokens cannot move). */
  chain?: 'embedded' | false
  /**
   * The import document to start from (README "Import file format"), or its file's path. Its first
   * team is the gateway's team. Default: one team, "Test team", with a phygital contract on the
   * embedded chain when there is one.
   */
  seed?: string | object
  /** Off unless given: a suite taps far more than 120 times a minute. */
  rateLimit?: { max: number; windowMs?: number }
  /** Anything else of tapgate.config.json (e.g. `claim`, `taps`); dataDir, host and port are the gateway's own. */
  config?: ConfigInput
  /** The port on 127.0.0.1; default: a free one. */
  port?: number
}

export type TestGateway = {
  /** http://127.0.0.1:<port>: the API, the tap path and the kiosk pages, for the app under test. */
  readonly url: string
  /** An API key of the team (header x-service-api-key). */
  readonly apiKey: string
  readonly teamId: number
  /** The gateway's temp data dir: removed at stop(), and by the reaper if this process (or its runner) dies first. */
  readonly dataDir: string
  /** The embedded chain's RPC URL; null with `chain: false`. */
  readonly chainUrl: string | null
  /** A request to the gateway without a socket (Fastify's inject), for unit tests. */
  inject(options: InjectOptions | string): Promise<LightMyRequestResponse>
  /** The gateway's time: real time plus what advance() and set() added. */
  readonly clock: TestClock
  /** A new chip registered to the team; `token: true` links it to a new token of the team's phygital contract. */
  chip(options?: { scheme?: ChipScheme; token?: boolean }): Promise<TestChip>
  /** Sends a tap URL (a chip's, or one made by hand) to the tap route; the verdict from the tap log. */
  tap(url: string): ReturnType<TestChip['tap']>
  /** Back to the state right after start: the store, the chain and the clock. The URL and API key stay. */
  reset(): Promise<void>
  /** The store, the chain and the clock as they are now, for restore(). */
  snapshot(): Promise<GatewaySnapshot>
  /** Back to a snapshot. As with anvil's, restoring one drops the snapshots taken after it. */
  restore(snapshot: GatewaySnapshot): Promise<void>
  /** Resolves once every transaction the gateway queued is mined (default timeout 20 s). */
  waitForChain(options?: { timeoutMs?: number }): Promise<void>
  /** The token's owner on chain (a chip's token, or a token of the team); null while it is not minted. */
  ownerOf(token: TokenRef | TestChip): Promise<`0x${string}` | null>
  readonly taps: { list(options?: { refused?: boolean; uid?: string; limit?: number }): Promise<TapRecord[]> }
  /** Plays a recorded station fixture (JSON Lines, `tapgate station --record`) through the team's station path. */
  replay(fixture: string): Promise<ReplayedTap[]>
  /** Stops the gateway and its chain and removes the data dir. Idempotent. */
  stop(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/** What snapshot() returns: opaque, for restore(). */
export type GatewaySnapshot = { readonly id: number }

const DEFAULT_TEAM = 'Test team'
const DEFAULT_CONTRACT = { name: 'Test tokens', symbol: 'TEST', chainId: EMBEDDED_CHAIN_ID }

/**
 * A gateway for a test, in this process: a temp data dir (SQLite), the embedded chain, a team and
 * its API key, listening on a free port of 127.0.0.1. Fast enough for one per test file (or per
 * worker, with reset() between tests).
 *
 * @example
 * await using gw = await startGateway()
 * const chip = await gw.chip({ token: true })
 * const { refId } = await chip.tap()
 */
export async function startGateway(options: StartGatewayOptions = {}): Promise<TestGateway> {
  // The seed and the settings first: a bad one is refused before anything is started or made.
  const seed = parseImportFile(readSeed(options.seed, options.chain !== false))
  const settings = (dataDir: string) =>
    ConfigSchema.parse({
      logLevel: 'silent',
      ...options.config,
      dataDir,
      host: '127.0.0.1',
      port: options.port ?? 0,
      demo: false,
      station: { enabled: false },
      rateLimit: options.rateLimit ?? { max: 1_000_000_000 },
      // No idle blocks: the chain moves when a transaction or the clock moves it, so tests are repeatable.
      chain: { idleBlockSeconds: 0, pollIntervalMs: 50, ...options.config?.chain, embedded: options.chain !== false },
    })
  settings('/nowhere')
  const dataDir = makeTempDataDir()
  const config = settings(dataDir)
  const offset = { ms: 0 }
  let embedded: EmbeddedChain | undefined
  let store: SqliteStore | undefined
  let parts: Running | undefined
  try {
    embedded = config.chain.embedded ? await startEmbeddedChain({ dataDir }) : undefined
    const chainUrl = embedded?.url ?? null
    const clock = createTestClock(chainUrl, offset)
    const db = (store = openTestStore(dataDir))
    const secret = await openGatewaySecret(db, { dataDir, secretHex: config.secret })
    const chains = createChains({ config, embedded })
    const summary = await importData(db, seed, { config, now: clock.now(), secret })
    const team = summary.teams[0]
    if (!team) throw new Error('the seed has no team: a test gateway serves its first team')
    const { apiKey } = await createApiKey(db, { teamId: team.id, label: 'tapgate/testing', now: clock.now() })
    // One relayer identity for every rebuild: a snapshot holds the relayer's lease, and a relayer of
    // another name would wait out that lease (leaseSeconds) before sending anything after a restore.
    const holder = `tapgate-testing-${process.pid}-${dataDir.slice(-6)}`
    parts = await run({ config, store: db, chains, now: clock.now, holder, restoreChain: true })
    const running = { current: parts }
    const url = parts.url
    // The state reset() returns to: the store and the chain as seeded, the seed's contracts deployed
    // (a contract still queued answers 409 not_a_phygital_contract to the API).
    const snapshots = createSnapshots({ dataDir, store: db, chainUrl, offset })
    if (embedded) await parts.relayer.waitIdle({ timeoutMs: 30_000 })
    const initial = embedded ? await parts.relayer.hold(EMBEDDED_CHAIN_ID, () => snapshots.take()) : await snapshots.take()

    const swapParts = async (work: () => Promise<void>) => {
      await running.current.close()
      await work()
      running.current = await run({ config, store: db, chains, now: clock.now, holder, port: portOf(url) })
    }
    let stopped: Promise<void> | undefined
    const gw: TestGateway = {
      url,
      apiKey,
      teamId: team.id,
      dataDir,
      chainUrl,
      inject: (o) => running.current.app.inject(o),
      clock,
      chip: (o = {}) =>
        createTestChip(
          {
            app: () => running.current.app,
            store: () => db,
            baseUrl: url,
            tapPath: config.tapPath,
            register: (chip) => registerChip({ store: db, config, secret, now: clock.now(), teamName: team.name, teamId: team.id, chip }),
          },
          o,
        ),
      tap: (tapUrl) => tapUrlOnGateway({ app: () => running.current.app, store: () => db }, null, tapUrl),
      reset: () => swapParts(() => snapshots.restore(initial)),
      snapshot: async () => {
        // Nothing is sent meanwhile: the outbox and the chain are taken at one point.
        if (!embedded) return snapshots.take()
        return running.current.relayer.hold(EMBEDDED_CHAIN_ID, () => snapshots.take())
      },
      restore: (s) => swapParts(() => snapshots.restore(s)),
      waitForChain: ({ timeoutMs = 20_000 } = {}) => running.current.relayer.waitIdle({ timeoutMs }),
      ownerOf: async (token) => {
        const key = 'tokenId' in token ? token : token.token
        if (!key) throw new Error(`chip ${'uid' in token ? token.uid : ''} has no token: make it with chip({ token: true })`)
        const row = await db.tokens.findByKey({ chainId: key.chainId, contractAddress: key.contractAddress, tokenId: key.tokenId })
        if (!row) throw new Error(`token ${key.tokenId} of ${key.contractAddress} is not one of this gateway's`)
        return readTokenOwner(chains, row)
      },
      taps: { list: (o = {}) => listTaps(db, o) },
      replay: (fixture) => replayFixture({ app: running.current.app, store: db, teamId: team.id, now: clock.now }, fixture),
      stop: () =>
        (stopped ??= (async () => {
          await running.current.close()
          await chains.close()
          await db.close()
          fs.rmSync(dataDir, { recursive: true, force: true })
        })()),
      [Symbol.asyncDispose]: () => gw.stop(),
    }
    return gw
  } catch (error) {
    await parts?.close()
    await embedded?.stop()
    store?.close()
    fs.rmSync(dataDir, { recursive: true, force: true })
    throw error
  }
}

/** The parts reset() rebuilds: the app and the relayer hold state of the store's rows in memory (caches, cursors). */
type Running = { app: FastifyInstance; relayer: Relayer; url: string; close(): Promise<void> }

async function run(p: { config: Config; store: SqliteStore; chains: Chains; now: () => number; holder: string; restoreChain?: boolean; port?: number }): Promise<Running> {
  const log = { info() {}, warn() {}, error() {} }
  const relayer = createRelayer({ store: p.store, chains: p.chains, config: p.config, log, now: p.now, holder: p.holder })
  const app = await buildApp({ config: p.config, store: p.store, chains: p.chains, relayer, now: p.now })
  const embedded = p.chains.get(EMBEDDED_CHAIN_ID)
  if (embedded && p.restoreChain) await restoreEmbeddedChain({ store: p.store, chain: embedded, log, now: p.now() })
  relayer.start()
  await app.listen({ host: '127.0.0.1', port: p.port ?? p.config.port })
  return {
    app,
    relayer,
    url: `http://127.0.0.1:${portOf(app)}`,
    close: async () => {
      await relayer.stop()
      await app.close()
    },
  }
}

function portOf(where: FastifyInstance | string): number {
  if (typeof where === 'string') return Number(new URL(where).port)
  const address = where.server.address()
  if (typeof address !== 'object' || !address) throw new Error('the test gateway is not listening')
  return address.port
}

function readSeed(seed: StartGatewayOptions['seed'], withChain: boolean): unknown {
  if (typeof seed === 'string') return JSON.parse(fs.readFileSync(seed, 'utf8'))
  if (seed !== undefined) return seed
  return { teams: [{ name: DEFAULT_TEAM, ...(withChain ? { phygitalContracts: [DEFAULT_CONTRACT] } : {}) }] }
}

/** Store and chain snapshots, numbered; a snapshot's chain id changes at each restore (anvil's revert spends it). */
function createSnapshots(p: { dataDir: string; store: SqliteStore; chainUrl: string | null; offset: { ms: number } }) {
  const taken = new Map<number, { file: string; chainId: string | null; offsetMs: number }>()
  let next = 1
  return {
    async take(): Promise<GatewaySnapshot> {
      const id = next++
      const file = `${p.dataDir}/snapshot-${id}.sqlite`
      writeSnapshotFile(p.store.db, file)
      const chainId = p.chainUrl === null ? null : await rpc<string>(p.chainUrl, 'evm_snapshot')
      taken.set(id, { file, chainId, offsetMs: p.offset.ms })
      return { id }
    },
    async restore(snapshot: GatewaySnapshot): Promise<void> {
      const s = taken.get(snapshot.id)
      if (!s) throw new Error(`snapshot ${snapshot.id} is not there: restoring an earlier one dropped it`)
      restoreSnapshotFile(p.store.db, s.file)
      p.offset.ms = s.offsetMs
      if (p.chainUrl === null) return
      if (!(await rpc<boolean>(p.chainUrl, 'evm_revert', [s.chainId]))) throw new Error(`the chain could not go back to snapshot ${snapshot.id}`)
      for (const [id, other] of taken) if (id > snapshot.id && other.chainId !== null) taken.delete(id)
      s.chainId = await rpc<string>(p.chainUrl, 'evm_snapshot')
    },
  }
}

/** One chip (its profile with its own keys, and a new token when asked) through the import, as a user's file would add it. */
async function registerChip(p: {
  store: SqliteStore
  config: Config
  secret: Buffer
  now: number
  teamId: number
  teamName: string
  chip: { uid: string; scheme: ChipScheme; keys: { metaKey: string; fileKey: string } | null; token: boolean }
}): Promise<TokenRef | null> {
  const { chip } = p
  const profile = chip.keys ? { name: `test chip ${chip.uid}`, mode: chip.scheme === 'lrp' ? 'lrp' : 'aes', keyScheme: 'static', ...chip.keys } : null
  let token: { contract: { name: string; symbol: string; address: string; chainId: number }; tokenId: string } | null = null
  if (chip.token) {
    const contract = (await p.store.phygitalContracts.list(p.teamId)).find((c) => c.chainId === EMBEDDED_CHAIN_ID)
    if (!contract) throw new Error('chip({ token: true }) needs a phygital contract of the team on the embedded chain (the default seed has one; chain: false has none)')
    const ids = (await p.store.tokens.listByTeam(p.teamId)).filter((t) => t.contractAddress === contract.address).map((t) => BigInt(t.tokenId))
    const tokenId = String(ids.reduce((max, id) => (id > max ? id : max), 0n) + 1n)
    token = { contract: { name: contract.name, symbol: contract.symbol, address: contract.address, chainId: contract.chainId }, tokenId }
  }
  const document = {
    teams: [
      {
        name: p.teamName,
        ...(profile ? { chipProfiles: [profile] } : {}),
        chips: [{ uid: chip.uid, kind: chip.scheme === 'ntag21x' ? 'ntag21x' : 'ntag424', ...(profile ? { profile: profile.name } : {}) }],
        ...(token
          ? {
              // Matched by name: the stored contract, not a new deploy.
              phygitalContracts: [{ name: token.contract.name, symbol: token.contract.symbol, chainId: token.contract.chainId }],
              tokens: [
                {
                  chainId: token.contract.chainId,
                  contract: token.contract.name,
                  tokenId: token.tokenId,
                  chips: [chip.uid],
                  metadata: { name: `Test token #${token.tokenId}`, description: 'Made by tapgate/testing', image: 'https://example.com/token.png', attributes: [], media_gallery: [], collection: token.contract.name },
                },
              ],
            }
          : {}),
      },
    ],
  }
  await importData(p.store, parseImportFile(document), { config: p.config, now: p.now, secret: p.secret })
  return token ? { chainId: token.contract.chainId, contractAddress: token.contract.address as `0x${string}`, tokenId: token.tokenId } : null
}
