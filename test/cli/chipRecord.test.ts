import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { ConfigSchema } from '../../src/config.js'
import { openStore } from '../../src/db/store.js'
import { importData, parseImportFile } from '../../src/importer/importData.js'
import { loadGatewaySecret } from '../../src/keys/gatewaySecret.js'
import { testDir } from '../helpers/gateway.js'
import { cliPath, collectOutput, repoRoot } from '../helpers/processes.js'

// Long enough for the CLI to start; a run that got past the --record check would wait for a card, so it is stopped.
const WAIT_MS = 20_000

/** A data dir holding fixtures/demo.json (its "Factory keys (demo)" profile). */
async function demoDataDir(): Promise<string> {
  const dataDir = testDir('tapgate-record-')
  const store = openStore({ dataDir })
  try {
    const demo = JSON.parse(fs.readFileSync(path.join(repoRoot, 'fixtures', 'demo.json'), 'utf8')) as unknown
    await importData(store, parseImportFile(demo), { config: ConfigSchema.parse({ logLevel: 'silent' }), now: Date.now(), secret: loadGatewaySecret({ dataDir }) })
  } finally {
    await store.close()
  }
  return dataDir
}

/** `tapgate chip provision --record FILE` as a user runs it; stopped by PID if it does not end by itself. */
async function provisionWithRecord(dataDir: string, file: string) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(PORT|HOST|TAPGATE_)/.test(name)))
  const args = ['chip', 'provision', '--team', '1', '--profile', 'Factory keys (demo)', '--url', 'https://tap.example/t?e={picc}&c={mac}', '--record', file, '--data-dir', dataDir]
  const child = spawn(process.execPath, [cliPath, ...args], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] })
  const output = collectOutput(child)
  const timer = setTimeout(() => child.kill('SIGKILL'), WAIT_MS)
  const { code } = await output.exited
  clearTimeout(timer)
  return { code, stdout: output.stdout(), stderr: output.stderr() }
}

describe('tapgate chip provision --record', () => {
  test('an existing file is refused (exit 2) before any reader opens, and keeps its content', async () => {
    const dataDir = await demoDataDir()
    const file = path.join(dataDir, 'earlier.jsonl')
    fs.writeFileSync(file, 'an earlier transcript\n', { mode: 0o644 })
    const run = await provisionWithRecord(dataDir, file)
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(`--record: ${file} already exists; give a new file name`)
    expect(run.stderr).not.toContain('Waiting for a card')
    expect(fs.readFileSync(file, 'utf8')).toBe('an earlier transcript\n')
    expect(fs.statSync(file).mode & 0o777).toBe(0o644)
  }, 30_000)

  test('a symlink to another file is refused (exit 2); the target keeps its content and mode', async () => {
    const dataDir = await demoDataDir()
    const target = path.join(dataDir, 'precious.txt')
    fs.writeFileSync(target, 'not a transcript\n', { mode: 0o644 })
    const link = path.join(dataDir, 'record.jsonl')
    fs.symlinkSync(target, link)
    // A dangling link too: O_EXCL refuses the link itself rather than creating its target.
    const dangling = path.join(dataDir, 'dangling.jsonl')
    const nowhere = path.join(dataDir, 'created-through-link.txt')
    fs.symlinkSync(nowhere, dangling)
    const [viaLink, viaDangling] = await Promise.all([provisionWithRecord(dataDir, link), provisionWithRecord(dataDir, dangling)])
    expect(viaLink.code).toBe(2)
    expect(viaLink.stderr).toContain(`--record: ${link} already exists`)
    expect(fs.readFileSync(target, 'utf8')).toBe('not a transcript\n')
    expect(fs.statSync(target).mode & 0o777).toBe(0o644)
    expect(viaDangling.code).toBe(2)
    expect(fs.existsSync(nowhere)).toBe(false)
  }, 30_000)
})
