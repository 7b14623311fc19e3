import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { ConfigError, loadConfig, type Config } from '../src/config.js'
import { makeTempDir } from './helpers/gateway.js'

// Every call passes `env` explicitly so the real environment never leaks in.

const defaults: Config = {
  host: '127.0.0.1',
  port: 8787,
  dataDir: './data',
  database: {},
  logLevel: 'info',
  demo: true,
  otpTtlSeconds: 1800,
  tapPath: '/tap',
  trustProxy: false,
  requestTimeoutMs: 30_000,
  rateLimit: { max: 120, windowMs: 60_000 },
  claim: { delaySeconds: 0, windowSeconds: 86_400 },
  taps: { maxCounterJump: 1000 },
  kiosk: { customerIdleSeconds: 60, customerWarnSeconds: 20, origins: [] },
  media: { ipfsGateway: 'https://ipfs.io/ipfs/', maxBytes: 5_242_880, fetchTimeoutMs: 5000, cacheMaxBytes: 268_435_456, allowHosts: [] },
  chain: {
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
    tokenNonceReadTimeoutMs: 1500,
    selfServiceMaxSeconds: 3600,
  },
  chains: {},
}

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

/** Writes a config file (JSON unless `text` is a string) and returns its path. */
function configFile(content: unknown, name = 'tapgate.config.json'): string {
  const dir = makeTempDir('tapgate-config-')
  dirs.push(dir)
  const file = path.join(dir, name)
  fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content))
  return file
}

/** The ConfigError a call throws (fails the test when it does not throw one). */
function configError(fn: () => unknown): ConfigError {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return error as ConfigError
  }
  throw new Error('expected a ConfigError')
}

describe('loadConfig', () => {
  test('defaults', () => {
    expect(loadConfig({ env: {} })).toEqual(defaults)
  })

  test('environment variables override the defaults; empty ones are ignored', () => {
    const config = loadConfig({
      env: {
        PORT: '9000',
        HOST: '0.0.0.0',
        TAPGATE_DATA_DIR: '/var/lib/tapgate',
        TAPGATE_LOG_LEVEL: 'warn',
        TAPGATE_DEMO: 'false',
        TAPGATE_OTP_TTL_SECONDS: '60',
        TAPGATE_RATE_LIMIT_MAX: '5',
        TAPGATE_RATE_LIMIT_WINDOW_MS: '1000',
        TAPGATE_CLAIM_DELAY_SECONDS: '30',
        TAPGATE_CLAIM_WINDOW_SECONDS: '600',
        TAPGATE_MAX_COUNTER_JUMP: '200',
        TAPGATE_NTAG424_MAX_COUNTER_JUMP: '5000',
        TAPGATE_REQUEST_TIMEOUT_MS: '5000',
        UNRELATED: 'x',
      },
    })
    expect(config).toEqual({
      host: '0.0.0.0',
      port: 9000,
      dataDir: '/var/lib/tapgate',
      database: {},
      logLevel: 'warn',
      demo: false,
      otpTtlSeconds: 60,
      tapPath: '/tap',
      trustProxy: false,
      requestTimeoutMs: 5000,
      rateLimit: { max: 5, windowMs: 1000 },
      claim: { delaySeconds: 30, windowSeconds: 600 },
      taps: { maxCounterJump: 200, ntag424MaxCounterJump: 5000 },
      kiosk: defaults.kiosk,
      media: defaults.media,
      chain: defaults.chain,
      chains: {},
    })
    expect(loadConfig({ env: { PORT: '', TAPGATE_DATA_DIR: '' } })).toEqual(defaults)
    expect(loadConfig({ env: { TAPGATE_DEMO: '0' } }).demo).toBe(false)
    expect(loadConfig({ env: { PORT: '0' } }).port).toBe(0)
  })

  test('a config file with nested keys; a partial nested object keeps the other defaults', () => {
    const file = configFile({ port: 7000, otpTtlSeconds: 120, rateLimit: { max: 10 }, claim: { windowSeconds: 3600 } })
    expect(loadConfig({ env: {}, configFile: file })).toEqual({
      ...defaults,
      port: 7000,
      otpTtlSeconds: 120,
      rateLimit: { max: 10, windowMs: 60_000 },
      claim: { delaySeconds: 0, windowSeconds: 3600 },
    })
  })

  test('TAPGATE_CONFIG names the config file', () => {
    const file = configFile({ host: '10.0.0.1' })
    expect(loadConfig({ env: { TAPGATE_CONFIG: file } }).host).toBe('10.0.0.1')
  })

  test('precedence: defaults < file < env < overrides', () => {
    const file = configFile({ host: 'file-host', port: 1000, dataDir: 'file-dir', rateLimit: { max: 1, windowMs: 1000 } })
    const config = loadConfig({
      env: { PORT: '2000', TAPGATE_DATA_DIR: 'env-dir', TAPGATE_RATE_LIMIT_MAX: '2' },
      configFile: file,
      overrides: { dataDir: 'flag-dir', port: undefined, 'rateLimit.windowMs': 3000 },
    })
    expect(config).toEqual({
      ...defaults,
      host: 'file-host', // file only
      port: 2000, // env beats file; an undefined override is no override
      dataDir: 'flag-dir', // override beats env and file
      rateLimit: { max: 2, windowMs: 3000 }, // nested: env and override each replace one key
    })
  })

  test('a malformed secret is described (length, how many characters are not hex), never shown (issue 24)', () => {
    const secret = `${'c0ffee'.repeat(10)}zz!`
    const error = configError(() => loadConfig({ env: { TAPGATE_SECRET: secret } }))
    expect(error.message).toBe('Invalid configuration:\n  - TAPGATE_SECRET: Must be 64 hex characters (32 bytes) (got 63 characters (64 wanted), 3 of them not hex digits)')
    const file = configError(() => loadConfig({ env: {}, configFile: configFile({ secret: 'c0ffee'.repeat(11) }) }))
    expect(file.message).toContain('secret in tapgate.config.json: Must be 64 hex characters (32 bytes) (got 66 characters (64 wanted))')
    expect(file.message).not.toContain('c0ffee')
  })

  test('kiosk.origins: a comma list in env or a JSON array in the file, each kept as its origin; a path, a query or another scheme is refused', () => {
    expect(loadConfig({ env: { TAPGATE_KIOSK_ORIGINS: 'https://Door.Example.org:443, http://192.168.1.10:8787/' } }).kiosk.origins).toEqual([
      'https://door.example.org',
      'http://192.168.1.10:8787',
    ])
    expect(loadConfig({ env: {}, configFile: configFile({ kiosk: { origins: ['http://localhost:8787'] } }) }).kiosk).toEqual({ ...defaults.kiosk, origins: ['http://localhost:8787'] })
    for (const bad of ['door.example.org', 'https://door.example.org/kiosk', 'https://door.example.org?x=1', 'ftp://door.example.org', 'https://u:p@door.example.org'])
      expect(configError(() => loadConfig({ env: { TAPGATE_KIOSK_ORIGINS: bad } })).message, bad).toMatch(/- TAPGATE_KIOSK_ORIGINS: /)
  })

  test('compat (issue 26): unset by default; TAPGATE_COMPAT=iyk or compat: "iyk" in the file; anything else refused by name', () => {
    expect(loadConfig({ env: {} }).compat).toBeUndefined()
    expect(loadConfig({ env: { TAPGATE_COMPAT: '' } }).compat).toBeUndefined()
    expect(loadConfig({ env: { TAPGATE_COMPAT: 'iyk' } }).compat).toBe('iyk')
    expect(loadConfig({ env: {}, configFile: configFile({ compat: 'iyk' }) }).compat).toBe('iyk')
    expect(configError(() => loadConfig({ env: { TAPGATE_COMPAT: 'IYK-v2' } })).message).toMatch(/- TAPGATE_COMPAT: Must be iyk, or unset .*\(got "IYK-v2"\)/)
    expect(configError(() => loadConfig({ env: {}, configFile: configFile({ compat: true }) })).message).toMatch(/- compat in .*: Must be iyk/)
  })

  test('a bad environment value: the message names the variable and shows the value', () => {
    const error = configError(() => loadConfig({ env: { PORT: 'abc' } }))
    expect(error.message).toMatchInlineSnapshot(`
      "Invalid configuration:
        - PORT: Invalid input: expected number, received NaN (got "abc")"
    `)
    expect(configError(() => loadConfig({ env: { PORT: '70000' } })).message).toMatch(/- PORT: .*\(got "70000"\)/)
    expect(configError(() => loadConfig({ env: { TAPGATE_OTP_TTL_SECONDS: '0' } })).message).toMatch(
      /- TAPGATE_OTP_TTL_SECONDS: .*\(got "0"\)/,
    )
    expect(configError(() => loadConfig({ env: { TAPGATE_DEMO: 'yes' } })).message).toMatch(/- TAPGATE_DEMO: .*\(got "yes"\)/)
  })

  test('every bad setting is listed, each under the name the user wrote', () => {
    const file = configFile({ claim: { windowSeconds: 0 } })
    const error = configError(() =>
      loadConfig({ env: { TAPGATE_RATE_LIMIT_MAX: '-5' }, configFile: file, overrides: { host: '' } }),
    )
    expect(error.message).toContain('- TAPGATE_RATE_LIMIT_MAX: ')
    expect(error.message).toContain('- claim.windowSeconds in tapgate.config.json: ')
    expect(error.message).toContain('- --host: ')
  })

  test('a bad value in the file names the key and the file', () => {
    const file = configFile({ rateLimit: { max: -1 } }, 'site.json')
    const error = configError(() => loadConfig({ env: {}, configFile: file }))
    expect(error.message).toMatch(/- rateLimit\.max in site\.json: .*\(got -1\)/)
  })

  test('a bad file value overridden by the environment is no error', () => {
    const file = configFile({ port: 'nope' })
    expect(loadConfig({ env: { PORT: '1234' }, configFile: file }).port).toBe(1234)
  })

  test('an unknown key in the file is an error naming the key', () => {
    const top = configError(() => loadConfig({ env: {}, configFile: configFile({ prot: 8080 }) }))
    expect(top.message).toMatch(/unknown setting prot in [\w.-]+\.json/)
    const nested = configError(() => loadConfig({ env: {}, configFile: configFile({ rateLimit: { maximum: 5 } }) }))
    expect(nested.message).toMatch(/unknown setting rateLimit\.maximum in [\w.-]+\.json/)
  })

  test('a missing file, a file that is not JSON, and a file that is not an object', () => {
    const dir = makeTempDir('tapgate-config-')
    dirs.push(dir)
    const missing = path.join(dir, 'missing.json')
    expect(configError(() => loadConfig({ env: {}, configFile: missing })).message).toMatch(
      new RegExp(`^Cannot read config file ${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ENOENT`),
    )
    const notJson = configFile('port = 8080')
    expect(configError(() => loadConfig({ env: {}, configFile: notJson })).message).toContain(
      `Config file ${notJson} is not valid JSON`,
    )
    const array = configFile([{ port: 1 }])
    expect(configError(() => loadConfig({ env: {}, configFile: array })).message).toBe(`Config file ${array} must hold a JSON object`)
  })
})

describe('database.url', () => {
  const url = 'postgres://tapgate@/tapgate?host=/run/postgresql'

  test('TAPGATE_DATABASE_URL selects PostgreSQL; without it the store is SQLite in the data dir', () => {
    expect(loadConfig({ env: {} }).database).toEqual({})
    expect(loadConfig({ env: { TAPGATE_DATABASE_URL: url, TAPGATE_EMBEDDED_CHAIN: 'false' } }).database).toEqual({ url })
  })

  test('serving with a database URL: the embedded chain is refused, naming chains.<id>.rpcUrl', () => {
    const error = configError(() => loadConfig({ env: { TAPGATE_DATABASE_URL: url }, serving: true }))
    expect(error.message).toMatch(/chain\.embedded: With database\.url every gateway must reach the same chain: .*chains\.<id>\.rpcUrl/)
    expect(loadConfig({ env: { TAPGATE_DATABASE_URL: url, TAPGATE_EMBEDDED_CHAIN: 'false' }, serving: true }).database).toEqual({ url })
  })

  test('the other commands start no chain: a database URL without chain settings loads (issue 24)', () => {
    expect(loadConfig({ env: { TAPGATE_DATABASE_URL: url } })).toMatchObject({ database: { url }, chain: { embedded: true } })
  })

  test('a bad URL is shown without its password: user:****@, password=**** (issue 24)', () => {
    for (const [bad, shown] of [
      ['mysql://tapgate:hunter2pw@db.lan/tapgate', 'mysql://tapgate:****@db.lan/tapgate'],
      ['tapgate:hunter2pw@db.lan/tapgate', 'tapgate:****@db.lan/tapgate'],
      ['postgresql:/db.lan/tapgate?user=tapgate&password=hunter2pw', 'postgresql:/db.lan/tapgate?user=tapgate&password=****'],
      ['host=db.lan password=hunter2pw dbname=tapgate', 'host=db.lan password=**** dbname=tapgate'],
    ]) {
      const error = configError(() => loadConfig({ env: { TAPGATE_DATABASE_URL: bad } }))
      expect(error.message).toContain(`- TAPGATE_DATABASE_URL: Must be a postgres:// URL (a Unix socket directory goes in ?host=/path) (got "${shown}")`)
      expect(error.message).not.toContain('hunter2pw')
    }
    // In the config file, and in a URL of another setting (an RPC's basic auth).
    const file = configFile({ database: { url: 'postgress://tapgate:hunter2pw@db/x' }, chains: { 8453: { rpcUrl: 'ftp://rpc:hunter2pw@node.lan', relayerKeyEnv: 'K' } } })
    const error = configError(() => loadConfig({ env: {}, configFile: file }))
    expect(error.message).toContain('(got "postgress://tapgate:****@db/x")')
    expect(error.message).toContain('(got "ftp://rpc:****@node.lan")')
    expect(error.message).not.toContain('hunter2pw')
  })

  test('a URL that is not postgres:// is refused, naming the variable', () => {
    const error = configError(() => loadConfig({ env: { TAPGATE_DATABASE_URL: 'mysql://db/tapgate', TAPGATE_EMBEDDED_CHAIN: 'false' } }))
    expect(error.message).toMatch(/- TAPGATE_DATABASE_URL: Must be a postgres:\/\/ URL .*\(got "mysql:\/\/db\/tapgate"\)/)
  })
})
