import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { onTestFinished } from 'vitest'
import { buildApp } from '../../src/app.js'
import { createApiKey } from '../../src/auth/apiKeys.js'
import { ConfigSchema, type Config, type ConfigInput } from '../../src/config.js'
import { connectPostgres } from '../../src/db/pg/connect.js'
import { createPostgresStore } from '../../src/db/pg/store.js'
import { openStore, type Backend, type PostgresStore, type SqliteStore, type Store } from '../../src/db/store.js'
import { importData, parseImportFile } from '../../src/importer/importData.js'
import { loadGatewaySecret } from '../../src/keys/gatewaySecret.js'
import { recordTap } from '../../src/taps/recordTap.js'
import { ChipUid } from '../../src/schemas/common.js'

export type TestGateway<S extends SqliteStore | PostgresStore = SqliteStore> = {
  app: FastifyInstance
  store: S
  config: Config
  dataDir: string
  /** The app's clock; move `clock.now` to test expiry. */
  clock: { now: number }
  close: () => Promise<void>
}

/** What a seeding helper takes of a gateway: its store may be any engine's, as only `.db` is SQLite's. */
export type GatewayParts<K extends keyof TestGateway> = Omit<Pick<TestGateway, K>, 'store'> & ('store' extends K ? { store: Store } : unknown)

/** A fresh temp data dir, e.g. for tests that spawn their own processes. */
export function makeTempDir(prefix = 'tapgate-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix))
}

/** A temp dir that is removed when the current test finishes (after its afterEach hooks). */
export function testDir(prefix = 'tapgate-test-'): string {
  const dir = makeTempDir(prefix)
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** The store of a data dir, opened in this process and closed when the current test finishes. */
export function testStore(dataDir: string): SqliteStore {
  const store = openStore({ dataDir })
  onTestFinished(() => store.close())
  return store
}

type TestGatewayOptions = { config?: ConfigInput; logStream?: NodeJS.WritableStream; kioskClientDir?: string }

/**
 * A real gateway on a real SQLite file in a temp dir, with a controllable
 * clock. Use `gw.app.inject` for requests; call `close()` (e.g. in afterEach).
 */
export function createTestGateway(opts: TestGatewayOptions = {}): Promise<TestGateway> {
  // Else a file listed to run on both engines would quietly run on SQLite twice.
  if (TEST_BACKEND === 'postgres') throw new Error('this run is PostgreSQL\'s (TAPGATE_TEST_BACKEND): use createBackendGateway()')
  return startGateway(opts, (dataDir) => openStore({ dataDir }))
}

/**
 * The engine of this run's backend gateways: test/vitest.config.ts runs the files in its
 * `bothEngines` list once per engine, the second time with TAPGATE_TEST_BACKEND=postgres.
 */
export const TEST_BACKEND: Backend = process.env.TAPGATE_TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite'

/** A gateway on this run's engine (TEST_BACKEND): `store.backend` says which. */
export type BackendGateway = TestGateway<SqliteStore | PostgresStore> & {
  /** PostgreSQL's URL, for a CLI run on the same store (TAPGATE_DATABASE_URL); null on SQLite (the data dir's). */
  databaseUrl: string | null
}

// On PostgreSQL the gateways of a test file share one database (testDatabase: copied from the migrated
// template before the file, dropped after it), emptied for each gateway: a copy each costs 0.3 s, this 20 ms.
// Imported only then: test/helpers/postgres.ts asks for the run's PostgreSQL harness as it loads.
const postgresHelpers = TEST_BACKEND === 'postgres' ? await import('./postgres.js') : undefined
const postgresDatabase = postgresHelpers?.testDatabase()

/**
 * createTestGateway on TEST_BACKEND, its store empty. For the test files that run on both engines
 * (test/vitest.config.ts); a test file's gateways must not overlap (one at a time, closed in afterEach).
 */
export async function createBackendGateway(opts: TestGatewayOptions = {}): Promise<BackendGateway> {
  if (!postgresHelpers || !postgresDatabase) return { ...(await createTestGateway(opts)), databaseUrl: null }
  const store = await openBackendStore('')
  return { ...(await startGateway(opts, () => store)), databaseUrl: backendDatabaseUrl() }
}

/** This file's PostgreSQL database (TAPGATE_DATABASE_URL, for a gateway process of its own); null on SQLite. */
export function backendDatabaseUrl(): string | null {
  return postgresDatabase?.url() ?? null
}

/**
 * A store on TEST_BACKEND, for a gateway built elsewhere (createBackendChainGateway): `dataDir`'s SQLite
 * file, or this file's PostgreSQL database emptied (so, as for createBackendGateway, one at a time).
 */
export async function openBackendStore(dataDir: string): Promise<SqliteStore | PostgresStore> {
  if (!postgresHelpers || !postgresDatabase) return openStore({ dataDir })
  const store = createPostgresStore(() => connectPostgres({ url: postgresDatabase!.url() }))
  await postgresHelpers.emptyTables(store.sql)
  return store
}

async function startGateway<S extends SqliteStore | PostgresStore>(opts: TestGatewayOptions, open: (dataDir: string) => S): Promise<TestGateway<S>> {
  const dataDir = makeTempDir()
  const config = ConfigSchema.parse({ logLevel: 'silent', demo: false, ...opts.config, dataDir })
  const store = open(dataDir)
  const clock = { now: Date.parse('2026-11-21T10:00:00.000Z') }
  const app = await buildApp({ config, store, now: () => clock.now, logStream: opts.logStream, kioskClientDir: opts.kioskClientDir })
  await app.ready()
  return {
    app,
    store,
    config,
    dataDir,
    clock,
    close: async () => {
      await app.close()
      await store.close()
      fs.rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * The rows of a constant SQL statement both engines accept (e.g. `SELECT COUNT(*) AS n FROM otps`),
 * to check what the API left stored. Column names as the engine's client gives them (camelCase on
 * PostgreSQL), so select single-word names or alias them.
 */
export async function queryRows<Row extends Record<string, unknown> = Record<string, unknown>>(
  store: SqliteStore | PostgresStore,
  statement: string,
): Promise<Row[]> {
  if (store.backend === 'sqlite') return store.db.prepare<[], Row>(statement).all()
  return [...(await store.sql.unsafe<Row[]>(statement))]
}

/** The names of the store's tables (SQLite's own sqlite_* left out), in name order. */
export async function tableNames(store: SqliteStore | PostgresStore): Promise<string[]> {
  const rows = await queryRows<{ name: string }>(
    store,
    store.backend === 'sqlite'
      ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
      : "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
  )
  return rows.map((row) => row.name)
}

/** One team of an import document (see README "Import file format"). */
export type TeamSeed = Record<string, unknown> & { name: string }

/**
 * Seeds a team through the real import path and gives it an API key.
 * @example
 * const a = seedTeam(gw, { name: 'A', chips: [{ uid: '04AABBCCDDEE01' }] })
 */
export async function seedTeam(gw: GatewayParts<'store' | 'config' | 'clock'>, team: TeamSeed): Promise<{ teamId: number; apiKey: string }> {
  // The app's own secret (same data dir, same config), so keys in the seed open for it.
  const secret = loadGatewaySecret({ dataDir: gw.config.dataDir, secretHex: gw.config.secret })
  const summary = await importData(gw.store, parseImportFile({ teams: [team] }), { config: gw.config, now: gw.clock.now, secret })
  const teamId = summary.teams[0]!.id
  const { apiKey } = await gw.store.tx((tx) => createApiKey(tx, { teamId, label: 'test', now: gw.clock.now }))
  return { teamId, apiKey }
}

/** Records an operator tap and returns the new ref id. */
export async function tapChip(gw: GatewayParts<'store' | 'clock'>, uid: string, opts: { linksModule?: boolean } = {}): Promise<string> {
  return (await recordTap(gw.store, {
    uid: ChipUid.parse(uid),
    source: opts.linksModule ? 'links' : 'operator',
    authenticated: false,
    linksModule: opts.linksModule ?? false,
    now: gw.clock.now,
  })).refId
}

/** Valid phygital metadata (spec §2); override fields as needed. */
export function metadata(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Test token',
    collection: 'Test collection',
    description: 'A token for tests',
    image: 'https://example.com/token.png',
    attributes: [{ trait_type: 'Size', value: 'M' }],
    media_gallery: [],
    ...overrides,
  }
}

export const CONTRACT = '0x5FbDB2315678afecb367f032d93F642f64180aa3'
export const GUESTBOOK = '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512'
export const ALICE = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
export const BOB = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC'

/** Shorthand for `app.inject` returning the parsed JSON body alongside the status. */
export async function call(gw: Pick<TestGateway, 'app'>, options: InjectOptions): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  const res = await gw.app.inject(options)
  return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined, headers: res.headers }
}

// ---- SUN chips (tap verification) ----
// Imports are hoisted; they sit here so this block stays an append to the file.
import { generateSunMessage, type GenerateSunMessageParameters } from '../../src/sun/index.js'
import {
  setChipVerification,
  upsertChipProfile,
  type SetChipVerificationParameters,
  type UpsertChipProfileParameters,
} from '../../src/profiles/chipProfiles.js'

/** A chip profile for SUN taps, set up through the real domain function (keys sealed under the app's secret). */
export function seedSunProfile(
  gw: GatewayParts<'app' | 'store' | 'clock'>,
  p: Omit<UpsertChipProfileParameters, 'now' | 'keyScheme'> & { keyScheme?: UpsertChipProfileParameters['keyScheme'] },
): Promise<number> {
  return upsertChipProfile(gw.store, gw.app.services.secret, { mode: 'aes', keyScheme: 'static', ...p, now: gw.clock.now })
}

/**
 * Puts an existing chip (e.g. from seedTeam) under a SUN profile.
 * @example
 * seedSunChip(gw, { teamId, uid: '04AABBCCDDEE01', profileName: 'tags' })
 */
export async function seedSunChip(gw: GatewayParts<'app' | 'store'>, p: SetChipVerificationParameters): Promise<void> {
  await setChipVerification(gw.store, gw.app.services.secret, p)
}

/**
 * The URL an NTAG 424 DNA writes: `<base>?e=PICCData&c=SDMMAC`, or with file data
 * `<base>?e=…&d=ENC&c=…` with the MAC input running from ENC through `&c=`
 * (the gateway's default layout). `params` renames e, c and d (e.g. a Bolt Card's p).
 */
export function sunTapUrl(
  p: Omit<GenerateSunMessageParameters, 'macInput'> & { base?: string; params?: { picc: string; mac: string; enc?: string } },
): string {
  const names = { picc: 'e', mac: 'c', enc: 'd', ...p.params }
  const msg = generateSunMessage({ ...p, macInput: ({ encFileData }) => (encFileData === null ? '' : `${encFileData}&${names.mac}=`) })
  const enc = msg.encFileData === null ? '' : `&${names.enc}=${msg.encFileData}`
  return `${p.base ?? '/tap'}?${names.picc}=${msg.piccData}${enc}&${names.mac}=${msg.sdmmac}`
}
