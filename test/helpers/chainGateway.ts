import fs from 'node:fs'
import type { FastifyInstance } from 'fastify'
import { type Address, createPublicClient, createTestClient, createWalletClient, type Hex, http, type PublicClient } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { foundry } from 'viem/chains'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'
import { buildApp } from '../../src/app.js'
import { type Chains, createChains } from '../../src/chain/chains.js'
import { startEmbeddedChain } from '../../src/chain/embeddedChain.js'
import { ConfigSchema, type Config, type ConfigInput } from '../../src/config.js'
import { openStore, type PostgresStore, type SqliteStore, type Store } from '../../src/db/store.js'
import { createRelayer, type Relayer } from '../../src/relayer/relayer.js'
import { restoreEmbeddedChain } from '../../src/relayer/restoreEmbeddedChain.js'
import { makeTempDir, metadata, openBackendStore, TEST_BACKEND, type TeamSeed } from './gateway.js'

/** anvil's dev accounts 1 and 2: funded, used as users who submit their own transactions. */
export const USER_KEY: Hex = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'
export const OTHER_KEY: Hex = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a'
export const USER = privateKeyToAccount(USER_KEY).address
export const OTHER = privateKeyToAccount(OTHER_KEY).address

export type ChainGateway<S extends SqliteStore | PostgresStore = SqliteStore> = {
  app: FastifyInstance
  store: S
  config: Config
  dataDir: string
  chains: Chains
  relayer: Relayer
  /** The app's clock is real time plus this offset (to test expiry windows). */
  clock: { offsetMs: number }
  publicClient: PublicClient
  testClient: ReturnType<typeof createTestClient>
  /** A wallet client for a funded dev account, for transactions a user sends themselves. */
  wallet: (key: Hex) => ReturnType<typeof createWalletClient>
  /** Waits until the relayer has no transaction left that is not mined (the embedded chain's, or the first configured one's). */
  settle: (timeoutMs?: number) => Promise<void>
  close: () => Promise<void>
}

/**
 * A gateway with the real embedded chain (one anvil), the real relayer and a
 * real SQLite file in a temp dir, built the way server.ts builds it, minus
 * listen. Start one per test file (beforeAll): anvil and the relayer are the
 * slow parts.
 */
export function createChainGateway(opts: ChainGatewayOptions = {}): Promise<ChainGateway> {
  // As createTestGateway: a file listed to run on both engines must not run on SQLite twice.
  if (TEST_BACKEND === 'postgres') throw new Error('this run is PostgreSQL\'s (TAPGATE_TEST_BACKEND): use createBackendChainGateway()')
  return startChainGateway(opts, (dataDir) => openStore({ dataDir }))
}

/** createChainGateway on TEST_BACKEND (test/helpers/gateway.ts), its store empty: `store.backend` says which. */
export function createBackendChainGateway(opts: ChainGatewayOptions = {}): Promise<ChainGateway<SqliteStore | PostgresStore>> {
  return startChainGateway(opts, openBackendStore)
}

type ChainGatewayOptions = {
  config?: ConfigInput
  env?: NodeJS.ProcessEnv
  /** The RPC URL the gateway (its routes and relayer) uses for the embedded chain, given anvil's own (e.g. a test/helpers/rpcProxy.ts in front of it); the test's clients keep anvil's. */
  embeddedRpcUrl?: (anvilUrl: string) => Promise<string>
}

async function startChainGateway<S extends SqliteStore | PostgresStore>(
  opts: ChainGatewayOptions,
  open: (dataDir: string) => S | Promise<S>,
): Promise<ChainGateway<S>> {
  const dataDir = makeTempDir('tapgate-chain-')
  // No idle blocks unless a test asks: tests compare block numbers read moments apart.
  const config = ConfigSchema.parse({ logLevel: 'silent', demo: false, ...opts.config, dataDir, chain: { pollIntervalMs: 100, idleBlockSeconds: 0, ...opts.config?.chain } })
  const clock = { offsetMs: 0 }
  const now = () => Date.now() + clock.offsetMs
  const embedded = config.chain.embedded ? await startEmbeddedChain({ dataDir }) : undefined
  const store = await open(dataDir)
  const seenByGateway = embedded && opts.embeddedRpcUrl ? { ...embedded, url: await opts.embeddedRpcUrl(embedded.url) } : embedded
  const chains = createChains({ config, embedded: seenByGateway, env: opts.env })
  const log = { info() {}, warn() {}, error(obj: object, msg?: string) { console.error('relayer:', msg, obj) } }
  const relayer = createRelayer({ store, chains, config, log, now })
  const app = await buildApp({ config, store, now, chains, relayer })
  await app.ready()
  if (embedded) await restoreEmbeddedChain({ store, chain: chains.get(31337)!, log, now: now() })
  relayer.start()
  const transport = http(embedded?.url ?? chains.list()[0]!.rpc.url)
  const publicClient = createPublicClient({ chain: foundry, transport, pollingInterval: 20 }) as PublicClient
  return {
    app,
    store,
    config,
    dataDir,
    chains,
    relayer,
    clock,
    publicClient,
    testClient: createTestClient({ chain: foundry, transport, mode: 'anvil' }),
    wallet: (key) => createWalletClient({ chain: foundry, transport, account: privateKeyToAccount(key) }),
    settle: (timeoutMs = 20_000) => relayer.waitIdle({ timeoutMs }),
    close: async () => {
      await relayer.stop()
      await app.close()
      await chains.close()
      await store.close()
      fs.rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * A team with a phygital contract deployed by the gateway on the embedded
 * chain and tokens on it, linked to chips. Waits for the deploy to be mined.
 * Returns the contract address next to the usual seed result.
 */
export function phygitalTeam(name: string, tokens: { tokenId: string; chips: string[]; twoTapClaim?: unknown }[]): TeamSeed {
  return {
    name,
    chips: tokens.flatMap((t) => t.chips.map((uid) => ({ uid }))),
    phygitalContracts: [{ name: `${name} merch`, symbol: 'TGT', chainId: 31337 }],
    tokens: tokens.map((t) => ({
      chainId: 31337,
      contract: `${name} merch`,
      tokenId: t.tokenId,
      chips: t.chips,
      metadata: metadata({ name: `${name} #${t.tokenId}` }),
      ...(t.twoTapClaim === undefined ? {} : { twoTapClaim: t.twoTapClaim }),
    })),
  }
}

/** The address of a team's phygital contract (known before its deploy is mined). */
export async function contractOf(gw: { store: Store }, teamId: number): Promise<Address> {
  const [contract] = await gw.store.phygitalContracts.list(teamId)
  if (!contract) throw new Error(`team ${teamId} has no phygital contract`)
  return contract.address as Address
}

/**
 * Holds the embedded chain's relayer (nothing is sent) until `release()`: a test sees the screens
 * of a queued transaction before any block.
 */
export async function holdRelayer(gw: Pick<ChainGateway, 'relayer'>): Promise<{ release(): Promise<void> }> {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let held!: () => void
  const holding = new Promise<void>((resolve) => (held = resolve))
  const hold = gw.relayer.hold(31337, async () => {
    held()
    await released
  })
  await holding
  return {
    async release() {
      release()
      await hold
    },
  }
}

/**
 * A user's own pull: a signature from GET /phygitals/transfer-signature (API key), submitted as
 * mintNFT/claimNFT from USER's wallet; resolves once it succeeded on chain.
 */
export async function pullWithSignature(
  gw: Pick<ChainGateway, 'app' | 'wallet' | 'publicClient'>,
  p: { apiKey: string; contract: Address; tokenId: string; recipient: Address; functionName?: 'mintNFT' | 'claimNFT' },
): Promise<void> {
  await (await signPull(gw, p))()
}

/**
 * The signature of a user's pull, fetched now; the returned function submits it (later, e.g. once
 * the gateway has queued a transfer of its own that the pull should overtake).
 */
export async function signPull(
  gw: Pick<ChainGateway, 'app' | 'wallet' | 'publicClient'>,
  p: { apiKey: string; contract: Address; tokenId: string; recipient: Address; functionName?: 'mintNFT' | 'claimNFT' },
): Promise<() => Promise<void>> {
  const query = new URLSearchParams({ contractAddress: p.contract, chainId: '31337', tokenId: p.tokenId, recipient: p.recipient })
  const res = await gw.app.inject({ method: 'GET', url: `/phygitals/transfer-signature?${query}`, headers: { 'x-service-api-key': p.apiKey } })
  if (res.statusCode !== 200) throw new Error(`transfer-signature: ${res.statusCode} ${res.body}`)
  const sig = JSON.parse(res.body) as { signature: Hex; blockExpiry: string }
  return async () => {
    const hash = await gw.wallet(USER_KEY).writeContract({
      address: p.contract,
      abi: phygitalTokenAbi,
      functionName: p.functionName ?? 'mintNFT',
      args: [sig.signature, BigInt(sig.blockExpiry), p.recipient, BigInt(p.tokenId)],
      account: privateKeyToAccount(USER_KEY),
      chain: foundry,
    })
    const receipt = await gw.publicClient.waitForTransactionReceipt({ hash })
    if (receipt.status !== 'success') throw new Error(`${p.functionName ?? 'mintNFT'} reverted`)
  }
}
