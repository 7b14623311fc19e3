import { spawn } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { ConfigSchema, type ConfigInput } from '../../src/config.js'
import { openStore } from '../../src/db/store.js'
import { importData, parseImportFile } from '../../src/importer/importData.js'
import { loadGatewaySecret, SECRET_FILE } from '../../src/keys/gatewaySecret.js'
import { startServer, type StartServerReturnType } from '../../src/server.js'
import { testDir } from '../helpers/gateway.js'
import { cliPath, collectOutput, repoRoot, stopChild } from '../helpers/processes.js'

const META = '7B1E9C04D2A65F38E0B4C7192D6A8F3E'
const FILE = 'C15A0E7F3B9D2846A1E5C0F7D3B92E64'
const keysFile = { teams: [{ name: 'Keys', chipProfiles: [{ name: 'static', keyScheme: 'static', metaKey: META, fileKey: FILE }] }] }

const servers: StartServerReturnType[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

const configFor = (dataDir: string, extra: ConfigInput = {}) =>
  ConfigSchema.parse({ dataDir, port: 0, logLevel: 'silent', demo: false, chain: { embedded: false }, station: { enabled: false }, ...extra })

async function start(dataDir: string, extra: ConfigInput = {}): Promise<StartServerReturnType> {
  const server = await startServer(configFor(dataDir, extra), () => {})
  servers.push(server)
  return server
}

async function refusal(dataDir: string, extra: ConfigInput = {}): Promise<Error & { code?: string }> {
  try {
    await start(dataDir, extra)
  } catch (error) {
    return error as Error & { code?: string }
  }
  throw new Error('expected the gateway to refuse to start')
}

/** A data dir whose chip keys were sealed under its secret.key, the way a CLI import seals them (no start yet). */
async function sealedDataDir(): Promise<{ dataDir: string; secretHex: string }> {
  const dataDir = testDir('tapgate-kcv-')
  const store = openStore({ dataDir })
  try {
    const config = configFor(dataDir)
    await importData(store, parseImportFile(keysFile), { config, now: Date.now(), secret: loadGatewaySecret({ dataDir }) })
  } finally {
    await store.close()
  }
  return { dataDir, secretHex: fs.readFileSync(path.join(dataDir, SECRET_FILE), 'utf8').trim() }
}

const rows = async (dataDir: string, sql: string) => {
  const store = openStore({ dataDir })
  try {
    return store.db.prepare(sql).all()
  } finally {
    await store.close()
  }
}

describe('the gateway secret check', () => {
  test('secret.key deleted while sealed keys exist: refuses to start, says how to fix, and makes no new secret', async () => {
    const { dataDir } = await sealedDataDir()
    fs.rmSync(path.join(dataDir, SECRET_FILE))
    const error = await refusal(dataDir)
    expect(error.code).toBe('gateway_secret_missing')
    expect(error.message).toContain(`${path.join(dataDir, SECRET_FILE)} is missing`)
    expect(error.message).toContain('restore secret.key')
    expect(error.message).toContain('TAPGATE_SECRET')
    expect(fs.existsSync(path.join(dataDir, SECRET_FILE))).toBe(false)
  }, 30_000)

  test('TAPGATE_SECRET other than the one that sealed the keys: refuses to start', async () => {
    const { dataDir } = await sealedDataDir()
    const error = await refusal(dataDir, { secret: crypto.randomBytes(32).toString('hex') })
    expect(error.code).toBe('gateway_secret_mismatch')
    expect(error.message).toMatch(/^The gateway secret \(TAPGATE_SECRET or the config secret\) is not the one the chip keys in the database were sealed under/)
    expect(error.message).toContain('docs/keys.md')
  }, 30_000)

  test('the right secret starts and records the check value; a secret.key replaced after that is refused', async () => {
    const { dataDir, secretHex } = await sealedDataDir()
    // An existing data dir (keys sealed before the check value existed): the first start records it.
    expect(await rows(dataDir, "SELECT name FROM gateway_meta WHERE name = 'secret_check'")).toEqual([])
    const server = await start(dataDir)
    await server.close()
    servers.splice(0)
    expect(await rows(dataDir, "SELECT name FROM gateway_meta WHERE name = 'secret_check'")).toEqual([{ name: 'secret_check' }])

    fs.writeFileSync(path.join(dataDir, SECRET_FILE), `${crypto.randomBytes(32).toString('hex')}\n`, { mode: 0o600 })
    const error = await refusal(dataDir)
    expect(error.code).toBe('gateway_secret_mismatch')
    expect(error.message).toContain(`The gateway secret (${path.join(dataDir, SECRET_FILE)}) is not the one`)
    // The same secret through the environment is the fix.
    await start(dataDir, { secret: secretHex })
  }, 60_000)

  test('with no sealed key, another secret is no loss: it starts, and the check follows the new secret', async () => {
    const dataDir = testDir('tapgate-kcv-')
    await (await start(dataDir)).close()
    servers.splice(0)
    fs.rmSync(path.join(dataDir, SECRET_FILE))
    await start(dataDir)
    expect(fs.existsSync(path.join(dataDir, SECRET_FILE))).toBe(true)
  }, 60_000)

  test('the CLI never makes a new secret.key over sealed keys either; a full re-import under a new secret recovers', async () => {
    const { dataDir } = await sealedDataDir()
    // Started once: the check value of the old secret is stored, and the re-import must replace it.
    await (await start(dataDir)).close()
    servers.splice(0)
    fs.rmSync(path.join(dataDir, SECRET_FILE))
    const file = path.join(dataDir, 'keys.json')
    fs.writeFileSync(file, JSON.stringify(keysFile))
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(PORT|HOST|TAPGATE_)/.test(name)))
    const run = async (extra: Record<string, string>) => {
      const child = spawn(process.execPath, [cliPath, 'import', file], { cwd: repoRoot, env: { ...env, TAPGATE_DATA_DIR: dataDir, ...extra } })
      try {
        const output = collectOutput(child)
        return { ...(await output.exited), stderr: output.stderr() }
      } finally {
        await stopChild(child)
      }
    }
    const refused = await run({})
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('gateway secret')
    expect(fs.existsSync(path.join(dataDir, SECRET_FILE))).toBe(false)

    // The secret is lost: the operator picks a new one and registers every key again under it.
    const fresh = crypto.randomBytes(32).toString('hex')
    const recovered = await run({ TAPGATE_SECRET: fresh })
    expect(recovered.code, recovered.stderr).toBe(0)
    await start(dataDir, { secret: fresh })
  }, 60_000)
})
