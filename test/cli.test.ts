import { spawn, type ChildProcess } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, test } from 'vitest'
import { authenticateApiKey, createApiKey, createTeam } from '../src/auth/apiKeys.js'
import { bootstrapDemo } from '../src/bootstrapDemo.js'
import { ConfigSchema } from '../src/config.js'
import { openStore } from '../src/db/store.js'
import { importData, parseImportFile } from '../src/importer/importData.js'
import { loadGatewaySecret } from '../src/keys/gatewaySecret.js'
import { testDir, testStore } from './helpers/gateway.js'
import { collectOutput } from './helpers/processes.js'
import { rejected } from './helpers/thrown.js'

// The CLI as users run it: `node src/cli/tapgate.js …` in the repo root, against a temp data dir.
const repoRoot = fileURLToPath(new URL('..', import.meta.url))
const cliPath = path.join(repoRoot, 'src', 'cli', 'tapgate.js')
const demoFile = path.join(repoRoot, 'fixtures', 'demo.json')
const importFixture = (name: string) => path.join(repoRoot, 'test', 'fixtures', 'import', name)

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const REF_ID = /^[\w-]{21}$/
const API_KEY = /^tg_[\w-]{32}$/

// Settings from the real environment (PORT, HOST, TAPGATE_*) must not reach the children.
const baseEnv: NodeJS.ProcessEnv = {
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(PORT|HOST|TAPGATE_)/.test(name))),
  // No in-process station in `serve`: it would open every PC/SC reader, including the PC/SC tests' virtual ones.
  TAPGATE_STATION: 'false',
}

const children = new Set<ChildProcess>()

afterEach(() => {
  for (const child of children) {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(child.pid, 'SIGKILL')
      } catch {
        // already gone
      }
    }
  }
  children.clear()
})

const tempDir = () => testDir('tapgate-cli-')
const open = testStore

const config = ConfigSchema.parse({ logLevel: 'silent' })

/** A data dir holding fixtures/demo.json, imported in-process (no spawn). */
async function demoDataDir(extraTeams: Record<string, unknown>[] = []): Promise<string> {
  const dataDir = tempDir()
  const store = openStore({ dataDir })
  try {
    const demo = JSON.parse(fs.readFileSync(demoFile, 'utf8')) as { teams: Record<string, unknown>[] }
    await importData(store, parseImportFile({ teams: [...demo.teams, ...extraTeams] }), { config, now: Date.now(), secret: loadGatewaySecret({ dataDir }) })
  } finally {
    await store.close()
  }
  return dataDir
}

/** Row counts of every table, read with a plain connection. */
function countRows(dataDir: string): Record<string, number> {
  const db = new Database(path.join(dataDir, 'tapgate.sqlite'), { fileMustExist: true })
  try {
    const tables = db
      .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all()
      .map((t) => t.name)
    return Object.fromEntries(tables.map((t) => [t, db.prepare<[], { n: number }>(`SELECT COUNT(*) AS n FROM "${t}"`).get()!.n]))
  } finally {
    db.close()
  }
}

type CliResult = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

function spawnCli(args: string[], dataDir: string, env: Record<string, string> = {}): ChildProcess {
  const child = spawn(process.execPath, [cliPath, ...args], {
    cwd: repoRoot,
    env: { ...baseEnv, TAPGATE_DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.add(child)
  return child
}

/** Runs one CLI command to completion. */
function runCli(args: string[], dataDir: string, env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnCli(args, dataDir, env)
    let stdout = ''
    let stderr = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.once('error', reject)
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

type Served = {
  child: ChildProcess
  /** Everything printed on stdout so far. */
  stdout: () => string
  stderr: () => string
  /** Resolves with the first match of `pattern` in stdout; rejects if the process exits first. */
  waitFor: (pattern: RegExp) => Promise<RegExpMatchArray>
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** Starts `tapgate serve` (killed by PID in afterEach if still running). */
function startServe(dataDir: string, env: Record<string, string> = {}): Served {
  const child = spawnCli(['serve'], dataDir, { PORT: '0', ...env })
  const output = collectOutput(child)
  const { exited } = output
  const waitFor = (pattern: RegExp) =>
    withTimeout(
      new Promise<RegExpMatchArray>((resolve, reject) => {
        const check = () => {
          const match = output.stdout().match(pattern)
          if (match) {
            child.stdout!.off('data', check)
            resolve(match)
          }
        }
        child.stdout!.on('data', check)
        void exited.then(() => reject(new Error(`serve exited before printing ${pattern}:\n${output.stdout()}\n${output.stderr()}`)))
        check()
      }),
      10_000,
      `serve to print ${pattern}`,
    )
  return { child, stdout: output.stdout, stderr: output.stderr, waitFor, exited }
}

/** SIGINT by PID, then a bounded wait for the exit. */
async function interrupt(server: Served) {
  process.kill(server.child.pid!, 'SIGINT')
  return withTimeout(server.exited, 5_000, 'serve to exit after SIGINT')
}

async function getJson(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { headers })
  return { status: res.status, body: await res.json() }
}

describe('team and key commands', () => {
  test('team create prints { teamId, apiKey }; the same name again exits 1; team list shows the team', async () => {
    const dataDir = tempDir()
    const created = await runCli(['team', 'create', '--name', 'Acme', '--redirect-url', 'https://acme.example/tap'], dataDir)
    expect(created.code).toBe(0)
    const out = JSON.parse(created.stdout) as { teamId: number; apiKey: string }
    expect(out).toEqual({ teamId: 1, apiKey: expect.stringMatching(API_KEY) })

    const again = await runCli(['team', 'create', '--name', 'Acme'], dataDir)
    expect(again.code).toBe(1)
    expect(again.stdout).toBe('')
    expect(again.stderr.trim()).toBe('tapgate: A team named "Acme" already exists')

    // A name that looks like a number is kept as typed (the argument parser would make it 7).
    const numeric = await runCli(['team', 'create', '--name', '007'], dataDir)
    expect(numeric.code).toBe(0)
    expect(JSON.parse(numeric.stdout)).toEqual({ teamId: 2, apiKey: expect.stringMatching(API_KEY) })

    const list = await runCli(['team', 'list'], dataDir)
    expect(list.code).toBe(0)
    expect(JSON.parse(list.stdout)).toEqual([
      { id: 1, name: 'Acme', redirectUrl: 'https://acme.example/tap', createdAt: expect.stringMatching(ISO) },
      { id: 2, name: '007', redirectUrl: null, createdAt: expect.stringMatching(ISO) },
    ])
    // The printed key is the team's working key.
    expect((await authenticateApiKey(open(dataDir), out.apiKey)).id).toBe(1)
  })

  test('key create / revoke: the key works until revoked, and only its SHA-256 is stored', async () => {
    const dataDir = tempDir()
    const seed = open(dataDir)
    const team = await createTeam(seed, { name: 'Acme', now: Date.now() })
    await seed.close()

    const created = await runCli(['key', 'create', '--team', String(team.teamId), '--label', 'kiosk'], dataDir)
    expect(created.code).toBe(0)
    const key = JSON.parse(created.stdout) as { teamId: number; apiKey: string; prefix: string }
    expect(key).toEqual({ teamId: team.teamId, apiKey: expect.stringMatching(API_KEY), prefix: key.apiKey.slice(0, 10) })
    expect(key.apiKey).not.toBe(team.apiKey)

    const store = open(dataDir)
    expect((await authenticateApiKey(store, key.apiKey)).id).toBe(team.teamId)

    // No column of api_keys holds the key; key_hash is its SHA-256.
    const db = new Database(path.join(dataDir, 'tapgate.sqlite'), { fileMustExist: true })
    const rows = db.prepare<[], Record<string, unknown>>('SELECT * FROM api_keys ORDER BY id').all()
    db.close()
    expect(rows).toHaveLength(2)
    for (const row of rows)
      for (const value of Object.values(row)) {
        expect(String(value)).not.toContain(key.apiKey)
        expect(String(value)).not.toContain(team.apiKey)
      }
    expect(rows[1]).toMatchObject({
      team_id: team.teamId,
      prefix: key.prefix,
      label: 'kiosk',
      key_hash: crypto.createHash('sha256').update(key.apiKey).digest('hex'),
      revoked_at: null,
    })
    // Nor does any byte of the database files.
    for (const file of fs.readdirSync(dataDir).filter((f) => f.startsWith('tapgate.sqlite')))
      expect(fs.readFileSync(path.join(dataDir, file)).includes(key.apiKey)).toBe(false)

    const revoked = await runCli(['key', 'revoke', '--prefix', key.prefix], dataDir)
    expect(revoked.code).toBe(0)
    expect(JSON.parse(revoked.stdout)).toEqual({ revoked: 1 })
    expect(await rejected(authenticateApiKey(store, key.apiKey))).toMatchObject({ statusCode: 401, code: 'invalid_api_key' })
    // Only that key: the team's first key still works.
    expect((await authenticateApiKey(store, team.apiKey)).id).toBe(team.teamId)

    const again = await runCli(['key', 'revoke', '--prefix', key.prefix], dataDir)
    expect(again.code).toBe(1)
    expect(again.stdout).toBe('')
    expect(again.stderr).toContain(`No active key has the prefix ${key.prefix}`)
  })

  test('key revoke with a whole key: a wrong key sharing the real one\'s prefix revokes nothing (exit 1); the real key revokes it', async () => {
    const dataDir = tempDir()
    const seed = open(dataDir)
    const team = await createTeam(seed, { name: 'Acme', now: Date.now() })
    const key = await seed.tx((tx) => createApiKey(tx, { teamId: team.teamId, label: 'kiosk', now: Date.now() }))
    await seed.close()
    // Same 10-character prefix, different key: only the hash can tell them apart.
    const lastChar = key.apiKey.at(-1) === 'A' ? 'B' : 'A'
    const wrong = `${key.apiKey.slice(0, -1)}${lastChar}`
    expect(wrong.slice(0, 10)).toBe(key.prefix)

    const refused = await runCli(['key', 'revoke', '--prefix', wrong], dataDir)
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toContain(`No active key matches that key (prefix ${key.prefix})`)
    expect(refused.stderr).not.toContain(wrong)
    const store = open(dataDir)
    expect((await authenticateApiKey(store, key.apiKey)).id).toBe(team.teamId)
    expect((await store.apiKeys.listByPrefix(key.prefix)).map((k) => k.revokedAt)).toEqual([null])

    // Something longer than a prefix but shorter than a key is neither: refused, nothing revoked.
    const partial = await runCli(['key', 'revoke', '--prefix', key.apiKey.slice(0, 20)], dataDir)
    expect(partial.code).toBe(2)
    expect(partial.stderr).toContain('--prefix takes a key prefix (10 characters) or a whole key')
    expect((await authenticateApiKey(store, key.apiKey)).id).toBe(team.teamId)

    const revoked = await runCli(['key', 'revoke', '--prefix', key.apiKey], dataDir)
    expect(revoked.code).toBe(0)
    expect(JSON.parse(revoked.stdout)).toEqual({ revoked: 1 })
    expect(await rejected(authenticateApiKey(store, key.apiKey))).toMatchObject({ code: 'invalid_api_key' })
    expect((await authenticateApiKey(store, team.apiKey)).id).toBe(team.teamId)
  })

  test('team create --redirect-url takes only what import takes: a javascript: or ftp: URL is exit 2 and creates no team', async () => {
    const dataDir = tempDir()
    for (const url of ['javascript:alert(1)', 'JavaScript://%0Aalert(1)', 'ftp://files.example/x', 'data:text/html,<b>x</b>', 'https:/acme.example', 'not a url']) {
      const result = await runCli(['team', 'create', '--name', 'Acme', '--redirect-url', url], dataDir)
      expect(result.code, url).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr, url).toContain('--redirect-url: ')
      expect(() => parseImportFile({ teams: [{ name: 'Acme', redirectUrl: url }] }), url).toThrow()
    }
    expect(await open(dataDir).teams.list()).toEqual([])
    // The URL is stored as typed.
    const ok = await runCli(['team', 'create', '--name', 'Acme', '--redirect-url', 'HTTPS://Acme.example/a/../tap'], dataDir)
    expect(ok.code).toBe(0)
    expect((await open(dataDir).teams.list()).map((t) => t.redirectUrl)).toEqual(['HTTPS://Acme.example/a/../tap'])
  })

  test('key create without --team is a usage error (exit 2)', async () => {
    const result = await runCli(['key', 'create'], tempDir())
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain('--team is required')
  })
})

describe('import', () => {
  const demoSummary = (created: boolean) => ({
    teams: [{ id: 1, name: 'Demo team', created }],
    chipProfiles: 1,
    chips: 5,
    phygitalContracts: 1,
    // The demo's phygital contract and guestbook are deployed (queued for the relayer) on the first import only.
    deploys: created ? 2 : 0,
    tokens: 2,
    proofEvents: 2,
    guestbookContracts: 1,
    guestbookEvents: 1,
  })

  test('the demo file imports with a summary; importing it again gives the same counts and no duplicate rows', async () => {
    const dataDir = tempDir()
    const first = await runCli(['import', demoFile], dataDir)
    expect(first.code).toBe(0)
    expect(JSON.parse(first.stdout)).toEqual(demoSummary(true))
    const counts = countRows(dataDir)
    expect(counts).toMatchObject({
      teams: 1,
      api_keys: 0,
      chip_groups: 2,
      chips: 5,
      tokens: 2,
      token_chips: 2,
      proof_events: 2,
      proof_event_chips: 2,
      guestbook_contracts: 1,
      guestbook_events: 1,
      guestbook_event_chips: 2,
    })

    const second = await runCli(['import', demoFile], dataDir)
    expect(second.code).toBe(0)
    expect(JSON.parse(second.stdout)).toEqual(demoSummary(false))
    expect(countRows(dataDir)).toEqual(counts)
  })

  test('an invalid file exits 1 naming the bad path, and writes nothing', async () => {
    const dataDir = tempDir()
    const result = await runCli(['import', importFixture('bad-uid.json')], dataDir)
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain('The import file is not valid')
    expect(result.stderr).toMatch(/^ {2}- teams\.0\.chips\.1\.uid: A chip UID is 7 bytes/m)
    expect(await open(dataDir).teams.list()).toEqual([])
  })

  test('a chip of another team exits 1 naming the path; nothing of the file is written', async () => {
    const dataDir = await demoDataDir()
    const before = countRows(dataDir)
    const result = await runCli(['import', importFixture('foreign-chip.json')], dataDir)
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain('teams.1.chips.1.uid: Chip 04DE5F1EACC040 belongs to another team')
    // Not the first team's new group and chip, nor the second team or its first chip.
    expect(countRows(dataDir)).toEqual(before)
    const store = open(dataDir)
    expect(await store.teams.getByName('Intruder')).toBeUndefined()
    expect(await store.chips.get('04AABBCCDDEE02')).toBeUndefined()
    expect((await store.chips.get('04DE5F1EACC040'))?.teamId).toBe((await store.teams.getByName('Demo team'))!.id)
  })

  test('a missing file and a file that is not JSON exit 1', async () => {
    const dataDir = tempDir()
    const notJson = path.join(dataDir, 'not-json.json')
    fs.writeFileSync(notJson, 'teams: []\n')
    const missing = path.join(dataDir, 'missing.json')
    const [a, b] = await Promise.all([runCli(['import', missing], dataDir), runCli(['import', notJson], dataDir)])
    expect(a.code).toBe(1)
    expect(a.stderr).toContain(`tapgate: Cannot read ${missing}`)
    expect(a.stderr).toContain('ENOENT')
    expect(b.code).toBe(1)
    expect(b.stderr).toContain(`tapgate: Cannot read ${notJson}`)
    expect(b.stderr).toMatch(/not valid JSON/)
    expect(a.stdout + b.stdout).toBe('')
  })
})

describe('tap', () => {
  const HOODIE = '04DE5F1EACC040'

  test('tap --uid (lower case, ":" separators) prints a ref id and logs an unauthenticated operator tap', async () => {
    const dataDir = await demoDataDir()
    const result = await runCli(['tap', '--uid', '04:de:5f:1e:ac:c0:40'], dataDir)
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^[\w-]{21}\n$/)
    const refId = result.stdout.trim()

    const store = open(dataDir)
    const teamId = (await store.teams.getByName('Demo team'))!.id
    expect(await store.refs.get(refId)).toMatchObject({
      chipUid: HOODIE,
      teamId,
      source: 'operator',
      authenticated: 0,
      linksModule: 0,
      consumedAt: null,
    })
    expect(await store.tapLog.byChip(HOODIE)).toEqual([
      expect.objectContaining({ source: 'operator', teamId, authenticated: 0, accepted: 1, reason: 'accepted', refId }),
    ])
  })

  test('--json prints { refId, uid }', async () => {
    const dataDir = await demoDataDir()
    const result = await runCli(['tap', '--uid', '04958caa5c5e80', '--json'], dataDir)
    expect(result.code).toBe(0)
    const out = JSON.parse(result.stdout) as { refId: string; uid: string }
    expect(out).toEqual({ refId: expect.stringMatching(REF_ID), uid: '04958CAA5C5E80' })
    expect((await open(dataDir).refs.get(out.refId))?.chipUid).toBe('04958CAA5C5E80')
  })

  test('an unknown chip exits 1 and the rejected tap is in the tap log', async () => {
    const dataDir = await demoDataDir()
    const result = await runCli(['tap', '--uid', '04aaaaaaaaaaaa'], dataDir)
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr.trim()).toBe('tapgate: This chip is not registered here. (no chip with UID 04AAAAAAAAAAAA is registered)')
    expect(await open(dataDir).tapLog.byChip('04AAAAAAAAAAAA')).toEqual([
      expect.objectContaining({ source: 'operator', teamId: null, accepted: 0, authenticated: 0, reason: 'unknown_chip', refId: null }),
    ])
  })

  test('a malformed UID is a usage error (exit 2) and logs nothing', async () => {
    const dataDir = await demoDataDir()
    const result = await runCli(['tap', '--uid', 'XYZ'], dataDir)
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('--uid: A chip UID is 7 bytes')
    expect(await open(dataDir).tapLog.recent()).toEqual([])
  })

  test('issue 26: an import file and --uid take the decimal form too (stored and printed in hex); over 7 bytes is a usage error', async () => {
    const dataDir = await demoDataDir([{ name: 'Decimal', chips: [{ uid: '1355288752988161' }] }])
    const byHex = await runCli(['tap', '--uid', '04D0A0C0B0A001', '--json'], dataDir)
    expect(byHex.stderr).toBe('')
    expect(JSON.parse(byHex.stdout)).toEqual({ refId: expect.stringMatching(REF_ID), uid: '04D0A0C0B0A001' })
    const byDecimal = await runCli(['tap', '--uid', '1355288752988161', '--json'], dataDir)
    expect(byDecimal.code).toBe(0)
    expect(JSON.parse(byDecimal.stdout)).toEqual({ refId: expect.stringMatching(REF_ID), uid: '04D0A0C0B0A001' })
    const tooBig = await runCli(['tap', '--uid', '72057594037927936'], dataDir)
    expect(tooBig.code).toBe(2)
    expect(tooBig.stderr).toContain('--uid: A chip UID is 7 bytes: 14 hex digits (optionally separated by ":") or its decimal form')
  })

  test('a UID made only of decimal digits is read as text, not as a number', async () => {
    const dataDir = await demoDataDir([{ name: 'Digits', chips: [{ uid: '04123456789012' }] }])
    const result = await runCli(['tap', '--uid', '04123456789012', '--json'], dataDir)
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual({ refId: expect.stringMatching(REF_ID), uid: '04123456789012' })
  })
})

describe('serve', () => {
  test('on an empty data dir: prints the URL and the demo key once, serves, keeps the key out of logs, exits 0 on SIGINT', async () => {
    const dataDir = tempDir()
    const server = startServe(dataDir)
    const [, url] = await server.waitFor(/^tapgate listening on (http:\/\/127\.0\.0\.1:\d+) /m)
    await server.waitFor(/API docs: .*\n/)

    const keys = new Set(server.stdout().match(/tg_[\w-]+/g))
    expect(keys.size).toBe(1)
    const [apiKey] = [...keys] as [string]
    expect(apiKey).toMatch(API_KEY)
    expect(server.stdout().split('\n').filter((line) => line.trim() === apiKey)).toHaveLength(1)
    // Once in all: the suggested commands name it without repeating it.
    expect(server.stdout().split(apiKey).length - 1, server.stdout()).toBe(1)
    expect(server.stdout()).toContain(`-H "x-service-api-key: $API_KEY" ${url}/chip-groups`)
    for (const hint of [`curl ${url}/health`, `${url}/chip-groups`, `${url}/refs/`, `${url}/docs`, `${url}/openapi.json`, `${url}/tap?e=`])
      expect(server.stdout()).toContain(hint)

    const health = await getJson(`${url}/health`)
    expect(health.status).toBe(200)
    expect(health.body).toMatchObject({ status: 'ok' })
    const groups = await getJson(`${url}/chip-groups`, { 'x-service-api-key': apiKey })
    expect(groups.status).toBe(200)
    expect(groups.body.map((g: { name: string }) => g.name)).toEqual(['Merch drop', 'Event badges'])
    const anonymous = await getJson(`${url}/chip-groups`)
    expect(anonymous.status).toBe(401)
    expect(anonymous.body).toMatchObject({ success: false, error: 'api_key_missing' })

    expect(await interrupt(server)).toEqual({ code: 0, signal: null })

    // pino lines: JSON, and never the key, although requests carried it.
    const logLines = server.stdout().split('\n').filter((line) => line.startsWith('{'))
    expect(logLines.some((line) => line.includes('/chip-groups'))).toBe(true)
    expect(logLines.some((line) => line.includes('"signal":"SIGINT"'))).toBe(true)
    for (const line of logLines) {
      expect(() => JSON.parse(line)).not.toThrow()
      expect(line).not.toContain(apiKey)
    }
  })

  test('a data dir that has a team prints no key; tap and import work while the server runs', async () => {
    const dataDir = tempDir()
    const seed = openStore({ dataDir })
    const demo = await bootstrapDemo(seed, { config, now: Date.now(), secret: loadGatewaySecret({ dataDir }) })
    await seed.close()
    const apiKey = demo!.key.apiKey

    const server = startServe(dataDir)
    const [, url] = await server.waitFor(/^tapgate listening on (http:\/\/127\.0\.0\.1:\d+) /m)

    const tapped = await runCli(['tap', '--uid', '04DE5F1EACC040'], dataDir)
    expect(tapped.code).toBe(0)
    const refId = tapped.stdout.trim()
    const ref = await getJson(`${url}/refs/${refId}`)
    expect(ref.status).toBe(200)
    expect(ref.body).toMatchObject({
      uid: '04DE5F1EACC040',
      isValidRef: true,
      linkedToken: { chainId: 31337, tokenId: '1', otp: expect.stringMatching(REF_ID) },
    })

    const imported = await runCli(['import', importFixture('popup-group.json')], dataDir)
    expect(imported.code).toBe(0)
    expect(JSON.parse(imported.stdout)).toMatchObject({ teams: [{ name: 'Demo team', created: false }], chips: 1 })
    const groups = await getJson(`${url}/chip-groups`, { 'x-service-api-key': apiKey })
    expect(groups.body.map((g: { name: string }) => g.name)).toEqual(['Merch drop', 'Event badges', 'Pop-up store'])

    expect(await interrupt(server)).toEqual({ code: 0, signal: null })
    expect(server.stdout()).not.toMatch(/tg_/)
    expect(server.stdout()).not.toContain(refId)
  })

  test('PORT=abc exits 1 with a message naming PORT', async () => {
    const result = await runCli(['serve'], tempDir(), { PORT: 'abc' })
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain('tapgate: Invalid configuration')
    expect(result.stderr).toMatch(/PORT: .*\(got "abc"\)/)
  })
})

describe('command line', () => {
  test('an unknown command exits 2; --help exits 0 and lists the commands', async () => {
    const dataDir = tempDir()
    const [unknown, help] = await Promise.all([runCli(['frobnicate'], dataDir), runCli(['--help'], dataDir)])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('unknown command "frobnicate"')
    expect(help.code).toBe(0)
    for (const command of ['serve', 'team', 'key', 'import', 'tap']) expect(help.stdout).toMatch(new RegExp(`^ {2}${command} `, 'm'))
    // Every summary starts in one column, virtual-card's too (it was one column off: names padded to 8).
    const commandLines = help.stdout.slice(help.stdout.indexOf('Commands:\n') + 10, help.stdout.indexOf('\n\n', help.stdout.indexOf('Commands:'))).split('\n')
    expect(commandLines.some((line) => line.startsWith('  virtual-card '))).toBe(true)
    expect(new Set(commandLines.map((line) => /^ {2}\S+ +/.exec(line)![0].length)).size).toBe(1)
  })
})

describe('profile and chip commands', () => {
  const META = '0F1E2D3C4B5A69788796A5B4C3D2E1F0'
  const FILE = 'A0B1C2D3E4F5061728394A5B6C7D8E9F'
  const HOODIE = '04DE5F1EACC040'
  const SNEAKER = '04958CAA5C5E80'

  test('profile create prints the profile without keys; list shows it; chip set puts chips under it', async () => {
    const dataDir = await demoDataDir()
    const keyFile = path.join(dataDir, 'file.key')
    fs.writeFileSync(keyFile, `${FILE}\n`, { mode: 0o600 })
    const [created, perChip] = await Promise.all([
      runCli(
        ['profile', 'create', '--team', '1', '--name', 'sdm', '--scheme', 'static', '--mode', 'LRP', '--meta-key', META, '--file-key-file', keyFile,
          '--picc-param', 'picc_data', '--mac-param', 'cmac', '--enc-param', 'enc'],
        dataDir,
      ),
      runCli(['profile', 'create', '--team', '1', '--name', 'own', '--scheme', 'per_chip', '--meta-key', META, '--picc-offset', '0x1c', '--mac-input-offset', '65', '--mac-offset', '65'], dataDir),
    ])
    expect(created.stderr).toBe('')
    expect(created.code).toBe(0)
    const sdm = JSON.parse(created.stdout)
    expect(sdm).toEqual({
      profileId: expect.any(Number),
      teamId: 1,
      name: 'sdm',
      mode: 'lrp',
      keyScheme: 'static',
      layout: { piccParam: 'picc_data', macParam: 'cmac', encParam: 'enc' },
      urlTemplate: null,
    })
    expect(perChip.code).toBe(0)
    const own = JSON.parse(perChip.stdout)
    expect(own).toMatchObject({ keyScheme: 'per_chip', mode: 'aes', layout: { piccOffset: 28, macInputOffset: 65, macOffset: 65, mode: 'aes' } })

    const [setOwn, setSdm] = await Promise.all([
      runCli(['chip', 'set', '--uid', SNEAKER.toLowerCase(), '--team', '1', '--profile', 'own', '--file-key-file', keyFile, '--random-uid', '--key-version', '2'], dataDir),
      runCli(['chip', 'set', '--uid', HOODIE, '--team', '1', '--profile', 'sdm'], dataDir),
    ])
    expect(setOwn.code).toBe(0)
    expect(JSON.parse(setOwn.stdout)).toEqual({ uid: SNEAKER, teamId: 1, profile: 'own', randomUid: true, keyVersion: 2, hasFileKey: true, wallet: null })
    expect(setSdm.code).toBe(0)
    expect(JSON.parse(setSdm.stdout)).toEqual({ uid: HOODIE, teamId: 1, profile: 'sdm', randomUid: false, keyVersion: 1, hasFileKey: false, wallet: null })

    const list = await runCli(['profile', 'list', '--team', '1'], dataDir)
    expect(list.code).toBe(0)
    const profiles = JSON.parse(list.stdout) as Record<string, unknown>[]
    // The two creates ran side by side, so their order (and ids) may be either way.
    expect(profiles.map((p) => [p.name, p.chips, p.keysOpen]).sort()).toEqual([
      ['Factory keys (demo)', 0, true], // the hoodie moved to sdm
      ['own', 1, true],
      ['sdm', 1, true],
    ])
    expect(profiles.find((p) => p.name === 'sdm')).toEqual({ ...sdm, chips: 1, keysOpen: true, updatedAt: expect.stringMatching(ISO) })
    expect(`${created.stdout}${perChip.stdout}${setOwn.stdout}${list.stdout}`.toUpperCase()).not.toMatch(new RegExp(`${META}|${FILE}`))
    expect(await open(dataDir).chips.get(SNEAKER)).toMatchObject({ randomUid: 1, keyVersion: 2 })
  })

  test('exit 2 for a malformed command line, exit 1 for what the data refuses', async () => {
    const dataDir = await demoDataDir()
    const cases: [string[], number, string][] = [
      [['profile', 'create', '--team', '1', '--name', 'x'], 2, '--scheme is required'],
      [['profile', 'create', '--team', '1', '--name', 'x', '--scheme', 'aes'], 2, '--scheme is one of static, per_chip, an10922, sdm_backend, boltcard'],
      [['profile', 'create', '--team', '1', '--name', 'x', '--scheme', 'sdm_backend', '--master-key', META, '--picc-offset', '28'], 2, 'missing --mac-input-offset, --mac-offset'],
      [['profile', 'create', '--team', '1', '--name', 'x', '--scheme', 'sdm_backend', '--master-key', META, '--picc-param', 'p', '--mac-offset', '3'], 2, 'not both'],
      [['profile', 'create', '--team', '1', '--name', 'x', '--scheme', 'sdm_backend', '--master-key-file', path.join(dataDir, 'missing.key')], 2, 'cannot read'],
      [['profile', 'create', '--team', '1', '--name', 'x', '--scheme', 'static', '--meta-key', META], 1, '--file-key: Key scheme static needs a fileKey'],
      [['profile', 'create', '--team', '7', '--name', 'x', '--scheme', 'sdm_backend', '--master-key', META], 1, 'No team with id 7'],
      [['profile', 'frob', '--team', '1'], 2, 'unknown action "profile frob"'],
      [['chip', 'set', '--uid', HOODIE, '--team', '1'], 2, '--profile is required'],
      [['chip', 'set', '--uid', HOODIE, '--team', '1', '--profile', 'nope'], 1, 'No chip profile named "nope" in this team'],
      [['chip', 'set', '--uid', HOODIE, '--team', '1', '--profile', 'Factory keys (demo)', '--key-version', '-1'], 2, '--key-version'],
      [['chip', 'set', '--uid', '04144682BA7380', '--team', '1', '--profile', 'Factory keys (demo)'], 1, '--profile: Chip 04144682BA7380 is an NTAG 21x'],
      // A flag of another action is refused, not ignored; a --record path that cannot be written stops before any reader opens.
      [['chip', 'inspect', '--batch', '--record', 'x.jsonl'], 2, '--batch, --record do not apply to chip inspect (it takes --reader, --json)'],
      [['chip', 'set', '--uid', HOODIE, '--team', '1', '--profile', 'Factory keys (demo)', '--reader', 'ACR'], 2, '--reader does not apply to chip set'],
      [['chip', 'provision', '--team', '1', '--profile', 'Factory keys (demo)', '--url', 'https://tap.example/t?e={picc}&c={mac}', '--record', path.join(dataDir, 'no', 'such', 'dir.jsonl')], 2, `--record: cannot create ${path.join(dataDir, 'no', 'such', 'dir.jsonl')} (ENOENT)`],
    ]
    const results = await Promise.all(cases.map(([args]) => runCli(args, dataDir)))
    results.forEach((result, i) => {
      const [args, code, message] = cases[i]!
      expect(result.code, args.join(' ')).toBe(code)
      expect(result.stdout).toBe('')
      expect(result.stderr).toContain(message)
    })
    // Nothing was written by any of them.
    expect((await open(dataDir).chipProfiles.list()).map((p) => p.name)).toEqual(['Factory keys (demo)'])
  }, 90_000)

  test('profile create --url stores the template; chip provision --dry-run then needs no --url, and without either is exit 2', async () => {
    const dataDir = await demoDataDir()
    const template = 'https://tap.example/t?e={picc}&c={mac}'
    const [created, neither] = await Promise.all([
      runCli(['profile', 'create', '--team', '1', '--name', 'tags', '--scheme', 'per_chip', '--meta-key', META, '--url', template], dataDir),
      runCli(['chip', 'provision', '--team', '1', '--profile', 'Factory keys (demo)', '--dry-run'], dataDir),
    ])
    expect(created.code).toBe(0)
    expect(JSON.parse(created.stdout)).toMatchObject({ name: 'tags', urlTemplate: template })
    expect(neither.code).toBe(2)
    expect(neither.stderr).toContain('give --url TEMPLATE, or store one on the profile')
    const [dryRun, noProfile, badUrl] = await Promise.all([
      runCli(['chip', 'provision', '--team', '1', '--profile', 'tags', '--dry-run'], dataDir),
      runCli(['chip', 'provision', '--team', '1', '--profile', 'nope', '--dry-run'], dataDir),
      // The profile reads e/c; a URL that names them otherwise would never verify.
      runCli(['chip', 'provision', '--team', '1', '--profile', 'tags', '--url', 'https://tap.example/t?p={picc}&m={mac}', '--dry-run'], dataDir),
    ])
    expect(dryRun.stderr).toBe('')
    expect(dryRun.code).toBe(0)
    expect(JSON.parse(dryRun.stdout)).toMatchObject({ template, url: `https://tap.example/t?e=${'0'.repeat(32)}&c=${'0'.repeat(16)}` })
    // What the data refuses is exit 1 with the reason, not a stack trace.
    expect(noProfile).toMatchObject({ code: 1, stderr: 'tapgate: No chip profile named "nope" in team 1\n' })
    expect(badUrl.code).toBe(1)
    expect(badUrl.stderr).toMatch(/^tapgate: cannot provision with profile "tags": profile tags: .+\n$/)
  })

  test('run with another secret than the one the stored keys were sealed under, profile create refuses to seal', async () => {
    const dataDir = await demoDataDir()
    const result = await runCli(['profile', 'create', '--team', '1', '--name', 'x', '--scheme', 'sdm_backend', '--master-key', META], dataDir, {
      TAPGATE_SECRET: 'ab'.repeat(32),
    })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("do not open under this gateway secret, so keys sealed now would not open for the server either")
    expect(await open(dataDir).chipProfiles.list()).toHaveLength(1)
  })

  test('import prints the profile count; --help lists profile and chip', async () => {
    const dataDir = tempDir()
    const file = path.join(dataDir, 'keys.json')
    fs.writeFileSync(file, JSON.stringify({ teams: [{ name: 'K', chipProfiles: [{ name: 'p', keyScheme: 'sdm_backend', masterKey: META }], chips: [{ uid: HOODIE, profile: 'p' }] }] }))
    const [imported, help] = await Promise.all([runCli(['import', file], dataDir), runCli(['--help'], dataDir)])
    expect(imported.code).toBe(0)
    expect(JSON.parse(imported.stdout)).toMatchObject({ chipProfiles: 1, chips: 1 })
    expect(imported.stdout.toUpperCase()).not.toContain(META)
    for (const command of ['profile', 'chip']) expect(help.stdout).toMatch(new RegExp(`^ {2}${command} `, 'm'))
  })
})

describe('the demo chip at /tap', () => {
  test("serve on an empty data dir: NXP's published AN12196 URL verifies for the demo hoodie chip, once", async () => {
    const dataDir = tempDir()
    const server = startServe(dataDir)
    const [, url] = await server.waitFor(/^tapgate listening on (http:\/\/127\.0\.0\.1:\d+) /m)
    const tapUrl = `${url}/tap?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086`
    const first = await fetch(tapUrl, { redirect: 'manual' })
    const page = await first.text()
    expect(first.status).toBe(200)
    expect(page).toContain('04DE5F1EACC040')
    expect(page).toContain('Tapgate Hoodie #1')
    const again = await fetch(tapUrl, { redirect: 'manual' })
    // Refused as a replay: the public page says only that (the reason is in the tap log).
    expect(again.status).toBe(400)
    expect(await again.text()).toContain('This tap was not accepted')
    expect(await interrupt(server)).toEqual({ code: 0, signal: null })
  })
})
