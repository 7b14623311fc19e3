import { spawn } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, test } from 'vitest'
import { buildApp } from '../../src/app.js'
import { ConfigSchema, loadConfig, type ConfigInput } from '../../src/config.js'
import { openStore, type Store } from '../../src/db/store.js'
import { importData, parseImportFile } from '../../src/importer/importData.js'
import { SealedKeyError } from '../../src/keys/errors.js'
import { loadGatewaySecret, SECRET_FILE } from '../../src/keys/gatewaySecret.js'
import { openKey, sealKey } from '../../src/keys/sealKey.js'
import { deriveBoltCardKeys, deriveSdmBackendMetaKey, deriveSdmBackendTagKey, generateSunMessage } from '../../src/sun/index.js'
import { setChipVerification, upsertChipProfile } from '../../src/profiles/chipProfiles.js'
import { chipKeyContext, profileKeyContext } from '../../src/keys/keyContexts.js'
import { createKeyring } from '../../src/taps/createKeyring.js'
import { verifyTap } from '../../src/taps/verifyTap.js'
import { testDir, testStore } from '../helpers/gateway.js'
import { rejected } from '../helpers/thrown.js'

// Distinct, non-trivial keys: all-zero bytes would "appear" in any database file.
const KEYS = {
  meta: '7B1E9C04D2A65F38E0B4C7192D6A8F3E',
  file: 'C15A0E7F3B9D2846A1E5C0F7D3B92E64',
  master: '2E8C5A1F7D3B9E0462A8C4F1E7B3D590',
  chipA: '9A3F6C1E0B7D4258E6A1C3F5B7D90E24',
  chipB: '4D7B1E9A3C5F0826B4E2A6C8D0F13579',
  issuer: 'E6B2D8F4A0C61357B9E1D3F5A7C90B2D',
}
const ALL_KEYS = Object.values(KEYS)
const A = '04A1B2C3D4E5F6'
const B = '04B2C3D4E5F6A7'

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const cliPath = path.join(repoRoot, 'src', 'cli', 'tapgate.js')

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn()
})

const tempDir = () => testDir('tapgate-keys-')
const open = testStore

/** Every way a key could show up in text: upper- and lower-case hex. */
function expectNoKeyIn(text: string, keys: string[] = ALL_KEYS) {
  for (const key of keys) expect(text.toUpperCase()).not.toContain(key.toUpperCase())
}

/** The team, the chips and a profile per scheme, through the real import path (keys sealed under `secret`). */
function seedKeys(store: Store, secret: Buffer, dataDir: string) {
  const config = ConfigSchema.parse({ dataDir, logLevel: 'silent' })
  return importData(
    store,
    parseImportFile({
      teams: [
        {
          name: 'Keys',
          chipProfiles: [
            { name: 'static', keyScheme: 'static', metaKey: KEYS.meta, fileKey: KEYS.file },
            { name: 'own', keyScheme: 'per_chip', metaKey: KEYS.meta.toLowerCase() },
            { name: 'nxp', keyScheme: 'an10922', metaKey: KEYS.meta, masterKey: KEYS.master },
            { name: 'sdm', keyScheme: 'sdm_backend', masterKey: KEYS.master },
            { name: 'bolt', keyScheme: 'boltcard', masterKey: KEYS.issuer },
          ],
          chips: [
            { uid: A, profile: 'own', fileKey: KEYS.chipA },
            { uid: B, profile: 'own', fileKey: KEYS.chipB.toLowerCase() },
          ],
        },
      ],
    }),
    { config, now: Date.now(), secret },
  )
}

// Fixed PICCData padding: under a wrong meta key, about 1 message in 90 with random padding decrypts to a
// plausible (unknown) chip, and the wrong-key case would read as unknown_chip.
const urlFor = (uid: string, fileKey: string, counter: number, metaKey = KEYS.meta) => {
  const m = generateSunMessage({ metaKey, fileKey, uid, counter, random: Buffer.from('5A5A5A5A5A', 'hex') })
  return `https://tap.example.com/tap?e=${m.piccData}&c=${m.sdmmac}`
}

describe('the gateway secret', () => {
  test('secret.key is created with mode 0600 on first use and reused after', () => {
    const dataDir = tempDir()
    const first = loadGatewaySecret({ dataDir })
    const file = path.join(dataDir, SECRET_FILE)
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    expect(fs.readFileSync(file, 'utf8')).toMatch(/^[0-9a-f]{64}\n$/)
    expect(first).toHaveLength(32)
    const before = fs.readFileSync(file)
    const again = loadGatewaySecret({ dataDir })
    expect(again.equals(first)).toBe(true)
    expect(fs.readFileSync(file).equals(before)).toBe(true)
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
  })

  test('processes starting together on a new data dir all get the one secret', async () => {
    const dataDir = tempDir()
    const script = `import { loadGatewaySecret } from ${JSON.stringify(path.join(repoRoot, 'src', 'keys', 'gatewaySecret.ts'))}
      console.log(loadGatewaySecret({ dataDir: process.argv[1] }).toString('hex'))`
    const outputs = await Promise.all(
      Array.from(
        { length: 6 },
        () =>
          new Promise<string>((resolve, reject) => {
            const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, dataDir], { cwd: repoRoot })
            let out = ''
            child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c))
            child.once('error', reject)
            child.once('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`exit ${code}`))))
          }),
      ),
    )
    expect(new Set(outputs).size).toBe(1)
    expect(outputs[0]).toBe(fs.readFileSync(path.join(dataDir, SECRET_FILE), 'utf8').trim())
    // Only secret.key is left: the private files it was linked from are gone.
    expect(fs.readdirSync(dataDir)).toEqual([SECRET_FILE])
  })

  test('a restarted gateway opens the keys it sealed: same secret.key, taps verify', async () => {
    const dataDir = tempDir()
    const config = ConfigSchema.parse({ dataDir, logLevel: 'silent', demo: false })
    const start = async () => {
      const store = openStore({ dataDir })
      const app = await buildApp({ config, store })
      return { store, app, stop: async () => (await app.close(), await store.close()) }
    }
    const one = await start()
    expect(fs.statSync(path.join(dataDir, SECRET_FILE)).mode & 0o777).toBe(0o600)
    await seedKeys(one.store, one.app.services.secret, dataDir)
    const secret = Buffer.from(one.app.services.secret)
    await one.stop()

    const two = await start()
    cleanups.push(two.stop)
    expect(two.app.services.secret.equals(secret)).toBe(true)
    const res = await two.app.inject({ url: urlFor(A, KEYS.chipA, 1).replace('https://tap.example.com', '') })
    expect(res.statusCode).toBe(200)
    expect((await two.store.chips.get(A))!.lastCounter).toBe(1)
  })

  test('TAPGATE_SECRET (or the config secret) is used instead, and no secret.key is written', async () => {
    const dataDir = tempDir()
    const hex = crypto.randomBytes(32).toString('hex')
    const config = loadConfig({ env: { TAPGATE_SECRET: hex, TAPGATE_DATA_DIR: dataDir, TAPGATE_LOG_LEVEL: 'silent', TAPGATE_DEMO: 'false' } })
    expect(config.secret).toBe(hex)
    const store = open(dataDir)
    const app = await buildApp({ config, store })
    cleanups.push(() => app.close())
    expect(app.services.secret.equals(Buffer.from(hex, 'hex'))).toBe(true)
    expect(fs.existsSync(path.join(dataDir, SECRET_FILE))).toBe(false)

    // A secret.key left in the data dir does not override the configured secret.
    const fileSecret = loadGatewaySecret({ dataDir })
    expect(loadGatewaySecret({ dataDir, secretHex: hex }).equals(fileSecret)).toBe(false)
    expect(loadGatewaySecret({ dataDir, secretHex: hex }).toString('hex')).toBe(hex)
  })

  test('a malformed secret is refused with a message naming where it came from', () => {
    const dataDir = tempDir()
    fs.writeFileSync(path.join(dataDir, SECRET_FILE), 'not hex\n', { mode: 0o600 })
    expect(() => loadGatewaySecret({ dataDir })).toThrow(`${path.join(dataDir, SECRET_FILE)} must be 64 hex characters (32 bytes)`)
    expect(() => loadGatewaySecret({ dataDir, secretHex: 'abcd' })).toThrow('the configured secret must be 64 hex characters (32 bytes)')
    expect(() => loadConfig({ env: { TAPGATE_SECRET: 'abcd' } })).toThrow(/TAPGATE_SECRET: Must be 64 hex characters/)
  })
})

describe('a wrong secret', () => {
  test('profile keys fail to open with a clear error, and verifyTap refuses (503, logged) instead of crashing', async () => {
    const dataDir = tempDir()
    const store = open(dataDir)
    await seedKeys(store, loadGatewaySecret({ dataDir }), dataDir)
    const wrong = crypto.randomBytes(32)
    const keyring = createKeyring(store, wrong)

    expect(await keyring.profiles()).toEqual([])
    const [set] = await keyring.broken()
    const error = set!.error
    expect(error).toBeInstanceOf(SealedKeyError)
    expect(error).toMatchObject({ statusCode: 503, code: 'chip_keys_unavailable', context: 'profile:1:file', reason: 'does_not_open' })
    expect((error as Error).message).toMatchInlineSnapshot(
      `"A stored chip key (profile:1:file) does not open under this gateway secret: it was sealed under another one (secret.key replaced, or TAPGATE_SECRET / the config secret changed), or the database was altered. Restore that secret, or register the keys again (docs/keys.md)."`,
    )

    const tap = await rejected(verifyTap(store, keyring, { url: urlFor(A, KEYS.chipA, 1), source: 'phone', now: 1 }))
    expect(tap).toBeInstanceOf(SealedKeyError)
    expect(await store.tapLog.recent(1)).toEqual([
      expect.objectContaining({ accepted: 0, reason: 'keys_unavailable', chipUid: null, detail: (tap as Error).message }),
    ])
    expect((await store.chips.get(A))!.lastCounter).toBeNull()
  })

  test('GET /tap answers 503 chip_keys_unavailable, not a 500, and says nothing about the keys', async () => {
    const dataDir = tempDir()
    const seed = openStore({ dataDir })
    await seedKeys(seed, loadGatewaySecret({ dataDir }), dataDir)
    await seed.close()
    // The operator starts the gateway with another secret than the one the keys were sealed under.
    const config = ConfigSchema.parse({ dataDir, logLevel: 'silent', demo: false, secret: crypto.randomBytes(32).toString('hex') })
    const store = open(dataDir)
    const app = await buildApp({ config, store })
    cleanups.push(() => app.close())
    const res = await app.inject({ url: urlFor(A, KEYS.chipA, 1).replace('https://tap.example.com', '') })
    expect(res.statusCode).toBe(503)
    // A person is at the chip: a page that says to ask staff, with the code for staff.
    expect(res.headers['content-type']).toMatch(/^text\/html/)
    expect(res.body).toContain('ask staff')
    expect(res.body).toContain('chip_keys_unavailable')
    expectNoKeyIn(res.body)
    expect(res.body).not.toContain(config.secret!)
  })
})

describe('keys at rest', () => {
  test('no raw key, in bytes or as hex text, is anywhere in the SQLite files (main, WAL, SHM)', async () => {
    const dataDir = tempDir()
    const store = openStore({ dataDir })
    const secret = loadGatewaySecret({ dataDir })
    await seedKeys(store, secret, dataDir)
    // Re-key a chip and a profile through the domain functions too (the CLI's path).
    await setChipVerification(store, secret, { uid: A, teamId: 1, profileName: 'own', fileKey: KEYS.chipB })
    await upsertChipProfile(store, secret, { teamId: 1, name: 'static', keyScheme: 'static', metaKey: KEYS.file, fileKey: KEYS.meta, now: Date.now() })

    const derived = [
      deriveSdmBackendMetaKey({ masterKey: KEYS.master }),
      deriveSdmBackendTagKey({ masterKey: KEYS.master, uid: A, keyNo: 2 }),
      deriveBoltCardKeys({ issuerKey: KEYS.issuer, uid: A, version: 1 }).k1,
    ]
    const needles = [...ALL_KEYS.map((k) => Buffer.from(k, 'hex')), ...derived, ...ALL_KEYS.flatMap((k) => [Buffer.from(k), Buffer.from(k.toLowerCase())])]
    const check = () => {
      const files = fs.readdirSync(dataDir).filter((f) => f.startsWith('tapgate.sqlite'))
      expect(files).toContain('tapgate.sqlite')
      for (const file of files) {
        const bytes = fs.readFileSync(path.join(dataDir, file))
        for (const needle of needles) expect(bytes.includes(needle), `${file} holds a raw key`).toBe(false)
      }
    }
    expect(fs.existsSync(path.join(dataDir, 'tapgate.sqlite-wal'))).toBe(true)
    check() // with the WAL holding the latest pages
    await store.close()
    check() // after the close checkpointed them into the main file
  })

  test('a sealed key copied into another row or column does not open there', async () => {
    const dataDir = tempDir()
    const store = open(dataDir)
    const secret = loadGatewaySecret({ dataDir })
    await seedKeys(store, secret, dataDir)
    const stat = (await store.chipProfiles.getByName(1, 'static'))!
    const nxp = (await store.chipProfiles.getByName(1, 'nxp'))!
    const chipA = (await store.chips.get(A))!

    // The AAD binds each blob to its profile id and slot, or to its chip UID.
    expect(openKey(secret, stat.metaKey!, profileKeyContext(stat.id, 'meta')).toString('hex').toUpperCase()).toBe(KEYS.meta)
    for (const context of [profileKeyContext(nxp.id, 'meta'), profileKeyContext(stat.id, 'file'), chipKeyContext(A)])
      expect(() => openKey(secret, stat.metaKey!, context)).toThrow(SealedKeyError)
    expect(() => openKey(secret, chipA.fileKey!, chipKeyContext(B))).toThrow(SealedKeyError)
    // Flipping one bit of the ciphertext is caught too.
    const altered = Buffer.from(stat.metaKey!)
    altered[14] = altered[14]! ^ 1
    expect(() => openKey(secret, altered, profileKeyContext(stat.id, 'meta'))).toThrow(SealedKeyError)
    expect(() => openKey(secret, Buffer.from('short'), profileKeyContext(stat.id, 'meta'))).toThrow(/is malformed/)

    // At tap time: chip B given chip A's sealed key (a row copied with SQL) is refused with 503, not verified under A's key.
    store.db.prepare('UPDATE chips SET file_key = ? WHERE uid = ?').run(chipA.fileKey, B)
    const keyring = createKeyring(store, secret)
    const error = await rejected(verifyTap(store, keyring, { url: urlFor(B, KEYS.chipA, 1), source: 'phone', now: 1 }))
    expect(error).toMatchObject({ statusCode: 503, code: 'chip_keys_unavailable', context: chipKeyContext(B) })
    // A profile's meta blob copied into another profile breaks the keyring rather than verifying under the wrong key.
    store.db.prepare('UPDATE chip_profiles SET meta_key = ?, updated_at = updated_at + 1 WHERE id = ?').run(stat.metaKey, nxp.id)
    expect((await keyring.profiles()).map((e) => e.profile.id)).not.toContain(nxp.id)
    expect((await keyring.broken()).map((b) => b.error)).toEqual([
      expect.objectContaining({ code: 'chip_keys_unavailable', context: profileKeyContext(nxp.id, 'meta') }),
    ])
  })

  test("one profile whose keys do not open fails only taps it could own, not another profile's", async () => {
    const dataDir = tempDir()
    const store = open(dataDir)
    const secret = loadGatewaySecret({ dataDir })
    await seedKeys(store, secret, dataDir)
    const stat = (await store.chipProfiles.list())[0]!
    // Another team's profile, sealed under some other secret (re-keyed elsewhere, or altered).
    const other = crypto.randomBytes(32)
    const teamB = await store.teams.insert({ name: 'B', redirectUrl: null, now: 1 })
    await upsertChipProfile(store, other, { teamId: teamB, name: 'elsewhere', mode: 'aes', keyScheme: 'static', metaKey: KEYS.meta, fileKey: KEYS.file, now: 2 })
    const keyring = createKeyring(store, secret)
    expect((await keyring.broken()).map((b) => b.profile.name)).toEqual(['elsewhere'])
    expect((await keyring.profiles()).map((e) => e.profile.id)).toContain(stat.id)
    // The working profile's chip still taps.
    expect((await verifyTap(store, keyring, { url: urlFor(A, KEYS.chipA, 1), source: 'phone', now: 3 })).uid).toBe(A)
    // A message nothing could decrypt might be the broken profile's: 503, not "not a SUN message".
    const garbage = 'https://gw.example/tap?e=00112233445566778899AABBCCDDEEFF&c=0011223344556677'
    expect(await rejected(verifyTap(store, keyring, { url: garbage, source: 'phone', now: 4 }))).toBeInstanceOf(SealedKeyError)
  })

  test('sealing twice gives different blobs (fresh IV), both opening to the same key', () => {
    const secret = crypto.randomBytes(32)
    const key = Buffer.from(KEYS.meta, 'hex')
    const one = sealKey(secret, key, 'profile:1:meta')
    const two = sealKey(secret, key, 'profile:1:meta')
    expect(one.equals(two)).toBe(false)
    expect(one).toHaveLength(1 + 12 + 16 + 16)
    expect(openKey(secret, two, 'profile:1:meta').equals(key)).toBe(true)
  })
})

describe('keys never leave', () => {
  type CliResult = { code: number | null; stdout: string; stderr: string }
  const runCli = (args: string[], dataDir: string): Promise<CliResult> =>
    new Promise((resolve, reject) => {
      const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(PORT|HOST|TAPGATE_)/.test(name)))
      const child = spawn(process.execPath, [cliPath, ...args], { cwd: repoRoot, env: { ...env, TAPGATE_DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] })
      let stdout = ''
      let stderr = ''
      child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c))
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c))
      child.once('error', reject)
      child.once('close', (code) => resolve({ code, stdout, stderr }))
    })

  test('in CLI output: profile create, list, chip set and import, on success and on error', async () => {
    const dataDir = tempDir()
    const keyFile = path.join(dataDir, 'master.hex')
    fs.writeFileSync(keyFile, `${KEYS.master.toLowerCase()}\n`, { mode: 0o600 })
    const importFile = path.join(dataDir, 'import.json')
    fs.writeFileSync(
      importFile,
      JSON.stringify({
        teams: [
          {
            name: 'Keys',
            chipProfiles: [
              { name: 'own', keyScheme: 'per_chip', metaKey: KEYS.meta },
              // Errors: a key the scheme does not use, a key one character short.
              { name: 'bad', keyScheme: 'sdm_backend', masterKey: KEYS.issuer, fileKey: KEYS.file },
            ],
          },
        ],
      }),
    )
    const badChipKeyFile = path.join(dataDir, 'bad-chip-key.json')
    fs.writeFileSync(badChipKeyFile, JSON.stringify({ teams: [{ name: 'Keys', chips: [{ uid: A, profile: 'own', fileKey: KEYS.chipA.slice(1) }] }] }))
    const results: [string, CliResult][] = []
    const run = async (what: string, args: string[], code: number) => {
      const result = await runCli(args, dataDir)
      results.push([what, result])
      expect(result.code, `${what}: ${result.stderr}`).toBe(code)
      return result
    }
    await run('team', ['team', 'create', '--name', 'Keys'], 0)
    await run('static', ['profile', 'create', '--team', '1', '--name', 'static', '--scheme', 'static', '--meta-key', KEYS.meta, '--file-key', KEYS.file], 0)
    // Independent of each other from here on (the refusals write nothing), so they run side by side.
    await Promise.all([
      run('master from file', ['profile', 'create', '--team', '1', '--name', 'nxp', '--scheme', 'an10922', '--meta-key', KEYS.meta, '--master-key-file', keyFile], 0),
      run('per-chip profile', ['profile', 'create', '--team', '1', '--name', 'own', '--scheme', 'per_chip', '--meta-key', KEYS.meta], 0),
      run('unused key', ['profile', 'create', '--team', '1', '--name', 'x', '--scheme', 'boltcard', '--master-key', KEYS.issuer, '--meta-key', KEYS.meta], 1),
      run('short key', ['profile', 'create', '--team', '1', '--name', 'x', '--scheme', 'boltcard', '--master-key', KEYS.issuer.slice(0, 31)], 2),
      run('both forms', ['profile', 'create', '--team', '1', '--name', 'x', '--scheme', 'boltcard', '--master-key', KEYS.issuer, '--master-key-file', keyFile], 2),
      run('import with errors', ['import', importFile], 1),
      run('import with a short chip key', ['import', badChipKeyFile], 1),
      run('chip set unknown chip', ['chip', 'set', '--uid', A, '--team', '1', '--profile', 'static', '--file-key', KEYS.chipA], 1),
    ])
    fs.writeFileSync(importFile, JSON.stringify({ teams: [{ name: 'Keys', chips: [{ uid: A }] }] }))
    await run('import a chip', ['import', importFile], 0)
    await run('chip set', ['chip', 'set', '--uid', A, '--team', '1', '--profile', 'own', '--file-key', KEYS.chipA], 0)
    await Promise.all([
      run('list', ['profile', 'list', '--team', '1'], 0),
      run('chip set short key', ['chip', 'set', '--uid', A, '--team', '1', '--profile', 'own', '--file-key', KEYS.chipB.slice(2)], 2),
      run('chip set on a shared-key profile', ['chip', 'set', '--uid', A, '--team', '1', '--profile', 'static', '--file-key', KEYS.chipB], 1),
    ])

    const all = results.map(([what, r]) => `${what}\n${r.stdout}\n${r.stderr}`).join('\n')
    expectNoKeyIn(all)
    // The errors still say what is wrong.
    expect(all).toContain('Key scheme boltcard does not use a metaKey')
    expect(all).toContain('--master-key must hold 32 hex characters (an AES-128 key), got 31 characters')
    expect(all).toContain('teams.0.chipProfiles.1.fileKey: Key scheme sdm_backend does not use a fileKey')
    expect(all).toContain('teams.0.chips.0.fileKey: Must be 32 hex characters (an AES-128 key)')
    expect(all).toContain('--file-key: Profile static (key scheme static) does not keep keys per chip')
  }, 90_000)

  test('in API responses and logs, accepted and refused taps alike', async () => {
    const dataDir = tempDir()
    const chunks: string[] = []
    const logStream = new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        chunks.push(chunk.toString())
        callback()
      },
    })
    const config = ConfigSchema.parse({ dataDir, logLevel: 'trace', demo: false } satisfies ConfigInput)
    const store = open(dataDir)
    const app: FastifyInstance = await buildApp({ config, store, logStream })
    cleanups.push(() => app.close())
    await seedKeys(store, app.services.secret, dataDir)

    const bodies: string[] = []
    const get = async (url: string) => {
      const res = await app.inject({ url })
      bodies.push(`${res.statusCode} ${JSON.stringify(res.headers)} ${res.body}`)
      return res
    }
    const local = (url: string) => url.replace('https://tap.example.com', '')
    expect((await get(local(urlFor(A, KEYS.chipA, 5)))).statusCode).toBe(200)
    // Refusals (replay, MAC mismatch, wrong meta key): the public page's one status.
    expect((await get(local(urlFor(A, KEYS.chipA, 5)))).statusCode).toBe(400)
    expect((await get(local(urlFor(B, KEYS.chipA, 6)))).statusCode).toBe(400)
    expect((await get(local(urlFor(A, KEYS.chipA, 7, KEYS.file)))).statusCode).toBe(400)
    await get('/openapi.json')
    await get('/health')
    expectNoKeyIn(bodies.join('\n'))
    expectNoKeyIn(chunks.join(''))
    expect(chunks.join('')).toContain('/tap')
  })
})
