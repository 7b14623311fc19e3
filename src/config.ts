import fs from 'node:fs'
import path from 'node:path'
import { z } from 'zod'

const port = z.coerce.number().int().min(0).max(65535)
const positiveInt = z.coerce.number().int().positive()
const nonNegativeInt = z.coerce.number().int().min(0)
const bool = z.union([z.boolean(), z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1')])

/** The whole configuration. Defaults here are the documented defaults. */
export const ConfigSchema = z
  .object({
    host: z.string().min(1).default('127.0.0.1'),
    port: port.default(8787),
    dataDir: z.string().min(1).default('./data'),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** Create and print a demo team on a data dir that has no team yet. */
    demo: bool.default(true),
    otpTtlSeconds: positiveInt.default(30 * 60),
    /** Seals chip keys at rest; default: <dataDir>/secret.key, created with mode 0600. */
    secret: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'Must be 64 hex characters (32 bytes)')
      .optional(),
    /** Path the chips' SDM URLs point at. */
    tapPath: z.string().regex(/^\/[\w\-./]*$/, 'Must be a URL path starting with /').default('/tap'),
    /** The gateway's public origin (e.g. https://tap.example.com), used to rebuild the URL a chip wrote; default: from the request. */
    publicBaseUrl: z.url({ protocol: /^https?$/ }).optional(),
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
  })
  .strict()

export type Config = z.infer<typeof ConfigSchema>
export type ConfigInput = z.input<typeof ConfigSchema>

/** Environment variable → config path. One row per setting that env can override. */
const envSettings: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['HOST', ['host']],
  ['PORT', ['port']],
  ['TAPGATE_DATA_DIR', ['dataDir']],
  ['TAPGATE_LOG_LEVEL', ['logLevel']],
  ['TAPGATE_DEMO', ['demo']],
  ['TAPGATE_OTP_TTL_SECONDS', ['otpTtlSeconds']],
  ['TAPGATE_SECRET', ['secret']],
  ['TAPGATE_TAP_PATH', ['tapPath']],
  ['TAPGATE_PUBLIC_BASE_URL', ['publicBaseUrl']],
  ['TAPGATE_RATE_LIMIT_MAX', ['rateLimit', 'max']],
  ['TAPGATE_RATE_LIMIT_WINDOW_MS', ['rateLimit', 'windowMs']],
  ['TAPGATE_CLAIM_DELAY_SECONDS', ['claim', 'delaySeconds']],
  ['TAPGATE_CLAIM_WINDOW_SECONDS', ['claim', 'windowSeconds']],
]

export class ConfigError extends Error {
  override name = 'ConfigError'
}

export type LoadConfigParameters = {
  env?: NodeJS.ProcessEnv
  /** A JSON file; defaults to $TAPGATE_CONFIG, else ./tapgate.config.json when it exists. */
  configFile?: string
  /** Highest precedence, e.g. CLI flags. */
  overrides?: Record<string, unknown>
}

/**
 * Builds the configuration from defaults < config file < environment < overrides
 * and validates it once. Errors name the setting as the user wrote it
 * (`PORT`, or `rateLimit.max in tapgate.config.json`).
 *
 * @example
 * const config = loadConfig({ env: process.env })
 */
export function loadConfig({ env = process.env, configFile, overrides = {} }: LoadConfigParameters = {}): Config {
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

  const result = ConfigSchema.safeParse(raw)
  if (!result.success) {
    const lines = result.error.issues.map((issue) => {
      if (issue.code === 'unrecognized_keys') {
        const keys = issue.keys.map((k) => [...issue.path, k].join('.'))
        return `  - unknown setting ${keys.map((k) => sources.get(k) ?? k).join(', ')}`
      }
      const key = issue.path.join('.')
      const where = sources.get(key) ?? (key === '' ? 'config' : key)
      const got = key === '' ? undefined : getPath(raw, issue.path.map(String))
      return `  - ${where}: ${issue.message}${got === undefined ? '' : ` (got ${JSON.stringify(got)})`}`
    })
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`)
  }
  return result.data
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
