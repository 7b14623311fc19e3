import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { z } from 'zod'
import { parseAllowEntry } from './media/allowHosts.js'
import { ConfigError } from './configError.js'
import { describeHexSecret, redactDatabaseUrl } from './redact.js'

const port = z.coerce.number().int().min(0).max(65535)
const positiveInt = z.coerce.number().int().positive()
const nonNegativeInt = z.coerce.number().int().min(0)
const bool = z.union([z.boolean(), z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1')])

const rpcUrl = z.url({ protocol: /^https?$/ })

const proxyNames = new Set(['loopback', 'linklocal', 'uniquelocal'])
/** An address or CIDR range as proxy-addr (Fastify's trustProxy) takes it, or one of its names. */
const isProxyAddress = (text: string): boolean => {
  if (proxyNames.has(text)) return true
  const [address = '', prefix, extra] = text.split('/')
  const family = net.isIP(address)
  if (family === 0 || extra !== undefined) return false
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128))
}
const trustProxyForms = 'Must be true, false, or a comma-separated list of IP addresses and CIDR ranges'
/**
 * Fastify's trustProxy: true (believe every hop) or the proxies' addresses. Env gives
 * text: "true"/"false" or a comma list. A hop count is refused rather than passed on:
 * Fastify 5 ignores it (it cannot check the peer is the proxy), so it would trust nobody, silently.
 */
const trustProxy = z.unknown().transform((value, ctx): boolean | string[] => {
  const text = typeof value === 'string' ? value.trim() : undefined
  const parsed = text === 'true' || text === 'false' ? text === 'true' : text !== undefined ? text.split(',').map((part) => part.trim()) : value
  if (typeof parsed === 'boolean') return parsed
  if (typeof parsed === 'number' || (text !== undefined && /^\d+$/.test(text))) {
    ctx.addIssue({ code: 'custom', message: "A hop count is not supported (Fastify cannot check it is the proxy talking): list the proxy's addresses, e.g. 127.0.0.1" })
    return z.NEVER
  }
  if (Array.isArray(parsed) && parsed.length > 0 && parsed.every((entry) => typeof entry === 'string' && isProxyAddress(entry.trim())))
    return parsed.map((entry: string) => entry.trim())
  ctx.addIssue({ code: 'custom', message: trustProxyForms })
  return z.NEVER
})

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'Must be an environment variable name')
// A private key in the config file would end up in backups, tickets and screenshots.
const noKeyHere = z
  .never({ error: 'Keys never go in the config file: name an environment variable (…KeyEnv) or a key file (…KeyFile)' })
  .optional()

/** An EVM chain reached over an RPC. The relayer key signs transactions; the signer key signs transfer signatures (default: the relayer key). */
const ChainSettings = z
  .object({
    rpcUrl,
    relayerKeyEnv: envName.optional(),
    relayerKeyFile: z.string().min(1).optional(),
    signerKeyEnv: envName.optional(),
    signerKeyFile: z.string().min(1).optional(),
    relayerKey: noKeyHere,
    signerKey: noKeyHere,
    /** Blocks on top of a transaction's block before it counts as mined. */
    confirmations: z.coerce.number().int().min(1).max(1000).default(1),
  })
  .strict()
  .refine((c) => (c.relayerKeyEnv === undefined) !== (c.relayerKeyFile === undefined), {
    message: 'Set exactly one of relayerKeyEnv and relayerKeyFile',
  })
  .refine((c) => c.signerKeyEnv === undefined || c.signerKeyFile === undefined, {
    message: 'Set at most one of signerKeyEnv and signerKeyFile',
  })

export type ChainSettings = z.infer<typeof ChainSettings>

const chainDefaults = {
  embedded: true,
  saveEveryBlocks: 100,
  idleBlockSeconds: 12,
  signatureBlocks: 100,
  relayedSignatureBlocks: 1_000_000,
  replaceAfterSeconds: 60,
  feeBumpPercent: 25,
  pollIntervalMs: 1000,
  leaseSeconds: 10,
  fallbackMaxFeeGwei: 50,
  selfServiceMaxSeconds: 3600,
  tokenNonceReadTimeoutMs: 1500,
}

const mediaDefaults = { ipfsGateway: 'https://ipfs.io/ipfs/', maxBytes: 5 * 1024 * 1024, fetchTimeoutMs: 5000, cacheMaxBytes: 256 * 1024 * 1024, allowHosts: [] }
/** media.allowHosts: a JSON array, or a comma list from env; each entry as parseAllowEntry reads it. */
const allowHosts = z.unknown().transform((value, ctx): string[] => {
  const list = typeof value === 'string' ? value.split(',').map((part) => part.trim()).filter((part) => part !== '') : value
  if (!Array.isArray(list) || !list.every((entry) => typeof entry === 'string')) {
    ctx.addIssue({ code: 'custom', message: 'Must be a list of host names, IP addresses or CIDR ranges (a comma list in env)' })
    return z.NEVER
  }
  for (const entry of list) {
    const parsed = parseAllowEntry(entry)
    if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: `Each entry is a host[:port], an IP address[:port] or a CIDR range: ${parsed}` })
  }
  return list.map((entry) => entry.trim())
})

/**
 * kiosk.origins: a JSON array, or a comma list from env, of http(s) origins (`https://door.example.org`,
 * `http://192.168.1.10:8787`), kept in URL's normal form. A path, query or credentials are refused:
 * an origin is scheme, host and port only, and a typo there would silently match nothing.
 */
const kioskOrigins = z.unknown().transform((value, ctx): string[] => {
  const list = typeof value === 'string' ? value.split(',').map((part) => part.trim()).filter((part) => part !== '') : value
  if (!Array.isArray(list) || !list.every((entry) => typeof entry === 'string')) {
    ctx.addIssue({ code: 'custom', message: 'Must be a list of origins such as https://door.example.org (a comma list in env)' })
    return z.NEVER
  }
  return list.flatMap((entry) => {
    let url: URL
    try {
      url = new URL(entry.trim())
    } catch {
      ctx.addIssue({ code: 'custom', message: `Not an origin (scheme://host[:port]): ${entry}` })
      return []
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || url.pathname !== '/') {
      ctx.addIssue({ code: 'custom', message: `An origin is http(s)://host[:port] and nothing more: ${entry}` })
      return []
    }
    return [url.origin]
  })
})

/** The whole configuration. Defaults here are the documented defaults. */
export const ConfigSchema = z
  .object({
    host: z.string().min(1).default('127.0.0.1'),
    port: port.default(8787),
    dataDir: z.string().min(1).default('./data'),
    /** Several gateways on one PostgreSQL: its URL selects it; without one, SQLite in the data dir (the default). */
    database: z
      .object({
        url: z
          .string()
          .regex(/^postgres(ql)?:\/\//, 'Must be a postgres:// URL (a Unix socket directory goes in ?host=/path)')
          .optional(),
      })
      .strict()
      .default({}),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** Create and print a demo team on a data dir that has no team yet. */
    demo: bool.default(true),
    otpTtlSeconds: positiveInt.default(30 * 60),
    /** Seals chip keys at rest; default: <dataDir>/secret.key, created with mode 0600. */
    secret: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'Must be 64 hex characters (32 bytes)')
      .optional(),
    /**
     * `iyk`: answer as the hosted API (api.iyk.app) does, for apps written against it: decimal `uid`,
     * `poapEvents`/`poapEvent` beside the proof events, `iykRef` on chip redirects, hosted error bodies.
     * Unset: the spec's shapes only (docs/decisions.md, "Issue 26").
     */
    compat: z.enum(['iyk'], { error: 'Must be iyk, or unset for the spec\'s own shapes' }).optional(),
    /** Path the chips' SDM URLs point at. */
    tapPath: z.string().regex(/^\/[\w\-./]*$/, 'Must be a URL path starting with /').default('/tap'),
    /** The gateway's public origin (e.g. https://tap.example.com), used to rebuild the URL a chip wrote; default: from the request. */
    publicBaseUrl: z.url({ protocol: /^https?$/ }).optional(),
    /** Behind a reverse proxy: whose X-Forwarded-For/-Proto/-Host to believe (client IP for rate limits). */
    trustProxy: trustProxy.default(false),
    /** A request's headers and body must arrive within this; a client trickling bytes is answered 408 and cut off. */
    requestTimeoutMs: positiveInt.default(30_000),
    rateLimit: z
      .object({
        max: positiveInt.default(120),
        windowMs: positiveInt.default(60_000),
      })
      .strict()
      .default({ max: 120, windowMs: 60_000 }),
    claim: z
      .object({
        delaySeconds: nonNegativeInt.default(0),
        windowSeconds: positiveInt.default(24 * 60 * 60),
      })
      .strict()
      .default({ delaySeconds: 0, windowSeconds: 24 * 60 * 60 }),
    /** The kiosk pages (src/kiosk): how long a customer's flow waits, and what the phone QR says under it. */
    kiosk: z
      .object({
        /** A claim flow (product card, QR, address entry) untouched this long warns… */
        customerIdleSeconds: positiveInt.default(60),
        /** …and goes back to idle this long after the warning (≥20 s to extend it). */
        customerWarnSeconds: z.coerce.number().int().min(20).default(20),
        /** The venue's Wi-Fi, shown under the phone QR: the phone must reach the gateway. */
        wifiName: z.string().min(1).max(64).optional(),
        /**
         * The origins whose pages may open /kiosk/ws besides publicBaseUrl's. With either set, only
         * those: the Host header no longer says what the gateway's own origin is (kioskSocket's
         * socketOrigin.ts, issue 24 point 9).
         */
        origins: kioskOrigins.default([]),
      })
      .strict()
      .default({ customerIdleSeconds: 60, customerWarnSeconds: 20, origins: [] }),
    /** Tap counters: how far above the last accepted one a tap's counter may be (taps/counterRules.ts). */
    taps: z
      .object({
        /** NTAG 21x (no MAC on the counter): a larger jump is refused as counter_jump. */
        maxCounterJump: positiveInt.default(1000),
        /** NTAG 424 DNA: the same limit, off when unset (the MAC proves the chip wrote the counter). */
        ntag424MaxCounterJump: positiveInt.optional(),
      })
      .strict()
      .default({ maxCounterJump: 1000 }),
    chain: z
      .object({
        /** Run a local anvil as chain 31337 (state in <dataDir>/chain/31337). */
        embedded: bool.default(chainDefaults.embedded),
        /** Save the embedded chain's state after this many blocks (and on stop). */
        saveEveryBlocks: positiveInt.default(chainDefaults.saveEveryBlocks),
        /** The embedded chain mines an empty block after this many seconds without one (0: never), so blockExpiry is a bound in time. */
        idleBlockSeconds: nonNegativeInt.default(chainDefaults.idleBlockSeconds),
        /** GET /phygitals/transfer-signature: blockExpiry = current block + this. */
        signatureBlocks: positiveInt.default(chainDefaults.signatureBlocks),
        /** Signatures inside relayed transfers: valid this many blocks past the last head seen. */
        relayedSignatureBlocks: positiveInt.default(chainDefaults.relayedSignatureBlocks),
        /** A sent transaction with no receipt after this long is replaced with higher fees. */
        replaceAfterSeconds: positiveInt.default(chainDefaults.replaceAfterSeconds),
        /** Fee increase of a replacement (nodes require at least 10%). */
        feeBumpPercent: z.coerce.number().int().min(10).max(500).default(chainDefaults.feeBumpPercent),
        /** How often the relayer polls receipts, fees and an unreachable RPC. */
        pollIntervalMs: positiveInt.default(chainDefaults.pollIntervalMs),
        /** Several gateways on one store: one relayer sends per chain; another takes over this long after it stopped renewing (every poll). */
        leaseSeconds: positiveInt.default(chainDefaults.leaseSeconds),
        /** maxFeePerGas for requests signed before any fee data was ever seen from a chain. */
        fallbackMaxFeeGwei: z.coerce.number().positive().default(chainDefaults.fallbackMaxFeeGwei),
        /** PATCH /chips/self-service: how far ahead requestExpiryTime may be. */
        selfServiceMaxSeconds: positiveInt.default(chainDefaults.selfServiceMaxSeconds),
        /** An Ethereum mainnet RPC for ENS names (else a configured chain 1 is used). */
        ensRpcUrl: rpcUrl.optional(),
        /**
         * How long a request that moves a token waits for the token's nonce (src/tokens/tokenMoves.ts);
         * past it the request is refused with 503 chain_state_unknown, since a move the gateway did not make may hide behind it.
         */
        tokenNonceReadTimeoutMs: positiveInt.default(chainDefaults.tokenNonceReadTimeoutMs),
      })
      .strict()
      .default(chainDefaults),
    /** The in-process station of `tapgate serve` (station/inProcessStation.ts); absent: on when PC/SC is available. */
    station: z
      .object({
        /** false: off; unset or true: on when PC/SC (nfc-pcsc and pcscd) is available. */
        enabled: bool.optional(),
      })
      .strict()
      .optional(),
    /** Product images (media/mediaCache.ts): fetched once, kept in <dataDir>/media. */
    media: z
      .object({
        /** ipfs:// image URLs are fetched through this HTTP gateway (the path after ipfs:// is appended). */
        ipfsGateway: z.url({ protocol: /^https?$/ }).default(mediaDefaults.ipfsGateway),
        /** A larger image is cut off and not shown. */
        maxBytes: positiveInt.default(mediaDefaults.maxBytes),
        /** One image fetch, redirects and body included. */
        fetchTimeoutMs: positiveInt.default(mediaDefaults.fetchTimeoutMs),
        /** All cached images together: past it the least recently used are deleted (fetched again when shown). */
        cacheMaxBytes: positiveInt.default(mediaDefaults.cacheMaxBytes),
        /** Exceptions to "public addresses only" for image fetches (e.g. a LAN image server). */
        allowHosts: allowHosts.default(mediaDefaults.allowHosts),
      })
      .strict()
      .refine((m) => m.cacheMaxBytes >= m.maxBytes, { message: 'Must be at least media.maxBytes (one image must fit)', path: ['cacheMaxBytes'] })
      .default(mediaDefaults),
    /** Chains reached over an RPC, by chain ID. */
    chains: z.record(z.string().regex(/^[1-9]\d*$/, 'Chain IDs are positive integers'), ChainSettings).default({}),
  })
  .strict()
  .refine((c) => !(c.chain.embedded && c.chains['31337']), {
    message: 'Chain 31337 is the embedded chain: set chain.embedded to false to reach it over an RPC instead',
    path: ['chains', '31337'],
  })

/**
 * What `tapgate serve` runs on: the configuration, and what only a running gateway needs. Gateways
 * sharing a database must share its chains: each embedded anvil would be a chain of its own. The other
 * commands never start a chain, so they run on the shared database without chain settings (issue 24).
 */
const ServeConfigSchema = ConfigSchema.refine((c) => !(c.database.url && c.chain.embedded), {
  message:
    'With database.url every gateway must reach the same chain: set chain.embedded to false (TAPGATE_EMBEDDED_CHAIN=false) ' +
    'and give chains.<id>.rpcUrl (one anvil or a real RPC for all gateways)',
  path: ['chain', 'embedded'],
})

export type Config = z.infer<typeof ConfigSchema>
export type ConfigInput = z.input<typeof ConfigSchema>

/** Environment variable → config path. One row per setting that env can override. */
const envSettings: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['HOST', ['host']],
  ['PORT', ['port']],
  ['TAPGATE_DATA_DIR', ['dataDir']],
  ['TAPGATE_DATABASE_URL', ['database', 'url']],
  ['TAPGATE_LOG_LEVEL', ['logLevel']],
  ['TAPGATE_DEMO', ['demo']],
  ['TAPGATE_OTP_TTL_SECONDS', ['otpTtlSeconds']],
  ['TAPGATE_SECRET', ['secret']],
  ['TAPGATE_TAP_PATH', ['tapPath']],
  ['TAPGATE_COMPAT', ['compat']],
  ['TAPGATE_PUBLIC_BASE_URL', ['publicBaseUrl']],
  ['TAPGATE_TRUST_PROXY', ['trustProxy']],
  ['TAPGATE_REQUEST_TIMEOUT_MS', ['requestTimeoutMs']],
  ['TAPGATE_RATE_LIMIT_MAX', ['rateLimit', 'max']],
  ['TAPGATE_RATE_LIMIT_WINDOW_MS', ['rateLimit', 'windowMs']],
  ['TAPGATE_CLAIM_DELAY_SECONDS', ['claim', 'delaySeconds']],
  ['TAPGATE_CLAIM_WINDOW_SECONDS', ['claim', 'windowSeconds']],
  ['TAPGATE_KIOSK_IDLE_SECONDS', ['kiosk', 'customerIdleSeconds']],
  ['TAPGATE_KIOSK_WARN_SECONDS', ['kiosk', 'customerWarnSeconds']],
  ['TAPGATE_KIOSK_WIFI_NAME', ['kiosk', 'wifiName']],
  ['TAPGATE_KIOSK_ORIGINS', ['kiosk', 'origins']],
  ['TAPGATE_MAX_COUNTER_JUMP', ['taps', 'maxCounterJump']],
  ['TAPGATE_NTAG424_MAX_COUNTER_JUMP', ['taps', 'ntag424MaxCounterJump']],
  ['TAPGATE_EMBEDDED_CHAIN', ['chain', 'embedded']],
  ['TAPGATE_ENS_RPC_URL', ['chain', 'ensRpcUrl']],
  ['TAPGATE_SIGNATURE_BLOCKS', ['chain', 'signatureBlocks']],
  ['TAPGATE_IDLE_BLOCK_SECONDS', ['chain', 'idleBlockSeconds']],
  ['TAPGATE_STATION', ['station', 'enabled']],
  ['TAPGATE_IPFS_GATEWAY', ['media', 'ipfsGateway']],
  ['TAPGATE_MEDIA_MAX_BYTES', ['media', 'maxBytes']],
  ['TAPGATE_MEDIA_FETCH_TIMEOUT_MS', ['media', 'fetchTimeoutMs']],
  ['TAPGATE_MEDIA_CACHE_MAX_BYTES', ['media', 'cacheMaxBytes']],
  ['TAPGATE_MEDIA_ALLOW_HOSTS', ['media', 'allowHosts']],
]

export { ConfigError }

export type LoadConfigParameters = {
  env?: NodeJS.ProcessEnv
  /** A JSON file; defaults to $TAPGATE_CONFIG, else ./tapgate.config.json when it exists. */
  configFile?: string
  /** Highest precedence, e.g. CLI flags. */
  overrides?: Record<string, unknown>
  /** For `tapgate serve`: also require what a running gateway needs (database.url → no embedded chain). */
  serving?: boolean
}

/**
 * Builds the configuration from defaults < config file < environment < overrides
 * and validates it once. Errors name the setting as the user wrote it
 * (`PORT`, or `rateLimit.max in tapgate.config.json`).
 *
 * @example
 * const config = loadConfig({ env: process.env })
 */
export function loadConfig({ env = process.env, configFile, overrides = {}, serving = false }: LoadConfigParameters = {}): Config {
  const sources = new Map<string, string>()
  const raw: Record<string, unknown> = {}

  const file = configFile ?? env.TAPGATE_CONFIG ?? (fs.existsSync('tapgate.config.json') ? 'tapgate.config.json' : undefined)
  if (file !== undefined) {
    let text: string
    try {
      text = fs.readFileSync(file, 'utf8')
    } catch (error) {
      throw new ConfigError(`Cannot read config file ${file}: ${(error as Error).message}`)
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch (error) {
      throw new ConfigError(`Config file ${file} is not valid JSON: ${(error as Error).message}`)
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new ConfigError(`Config file ${file} must hold a JSON object`)
    Object.assign(raw, parsed)
    for (const key of flattenKeys(parsed as Record<string, unknown>)) sources.set(key, `${key} in ${path.basename(file)}`)
  }

  for (const [name, keyPath] of envSettings) {
    const value = env[name]?.trim()
    // An empty variable means "not set": PORT="" must not become port 0.
    if (value === undefined || value === '') continue
    setPath(raw, keyPath, value)
    sources.set(keyPath.join('.'), name)
  }
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) continue
    setPath(raw, key.split('.'), value)
    sources.set(key, `--${key}`)
  }

  const result = (serving ? ServeConfigSchema : ConfigSchema).safeParse(raw)
  if (!result.success) {
    const lines = result.error.issues.map((issue) => {
      if (issue.code === 'unrecognized_keys') {
        const keys = issue.keys.map((k) => [...issue.path, k].join('.'))
        return `  - unknown setting ${keys.map((k) => sources.get(k) ?? k).join(', ')}`
      }
      const key = issue.path.join('.')
      const where = sources.get(key) ?? (key === '' ? 'config' : key)
      const got = key === '' ? undefined : getPath(raw, issue.path.map(String))
      return `  - ${where}: ${issue.message}${got === undefined ? '' : ` (got ${shownValue(key, got)})`}`
    })
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`)
  }
  return result.data
}

/**
 * A bad value as an error shows it: the secret never (only what is wrong with it), and no password
 * of a URL (the database URL, or one in any other setting).
 */
function shownValue(key: string, value: unknown): string {
  if (key === 'secret' && typeof value === 'string') return describeHexSecret(value, 64)
  // Each string masked before quoting: JSON's quotes and escapes would hide where a password ends.
  return JSON.stringify(redactStrings(value))
}

function redactStrings(value: unknown): unknown {
  if (typeof value === 'string') return redactDatabaseUrl(value)
  if (Array.isArray(value)) return value.map(redactStrings)
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactStrings(v)]))
  return value
}

function flattenKeys(obj: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(obj).flatMap(([key, value]) =>
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? flattenKeys(value as Record<string, unknown>, `${prefix}${key}.`)
      : [`${prefix}${key}`],
  )
}

function setPath(target: Record<string, unknown>, keyPath: readonly string[], value: unknown) {
  let node = target
  for (const key of keyPath.slice(0, -1)) {
    const next = node[key]
    if (typeof next !== 'object' || next === null) node[key] = {}
    node = node[key] as Record<string, unknown>
  }
  node[keyPath[keyPath.length - 1]!] = value
}

function getPath(source: Record<string, unknown>, keyPath: readonly string[]): unknown {
  let node: unknown = source
  for (const key of keyPath) {
    if (typeof node !== 'object' || node === null) return undefined
    node = (node as Record<string, unknown>)[key]
  }
  return node
}
