/**
 * A `tapgate serve` that cannot start must end, and leave nothing running. Each runs in a process
 * group of its own, and anvil (detached, in a group of its own) is checked through its pid file.
 */
import Database from 'better-sqlite3'
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { expect, test } from 'vitest'
import { testDir } from '../helpers/gateway.js'
import { anvilStillRunning, cliPath, collectOutput, groupAlive, repoRoot, stopGroup } from '../helpers/processes.js'

/** Runs `bin serve` on `dataDir`; it must exit 1 within `ms` saying `reason`, and leave nothing running. */
async function failedStartCleansUp(p: { bin: string; dataDir: string; reason: string; ms: number }): Promise<void> {
  const env = { ...process.env, TAPGATE_DATA_DIR: p.dataDir, TAPGATE_STATION: 'false', PORT: '0' }
  const child = spawn(process.execPath, [p.bin, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  const output = collectOutput(child)
  const ended = await Promise.race([output.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), p.ms))])
  try {
    expect(ended, `still running after ${p.ms} ms\n${output.stderr()}`).toEqual({ code: 1, signal: null })
    expect(output.stderr()).toContain(p.reason)
    // anvil was spawned before the failure (its state dir exists), and it is gone with the rest.
    expect(fs.existsSync(path.join(p.dataDir, 'chain/31337'))).toBe(true)
    await expect.poll(() => groupAlive(child.pid!), { timeout: 5_000 }).toBe(false)
    expect(anvilStillRunning(p.dataDir)).toBeNull()
  } finally {
    await stopGroup(child)
    const orphan = anvilStillRunning(p.dataDir)
    if (orphan !== null) process.kill(orphan, 'SIGKILL')
  }
}

test('serve on a data dir whose statements do not prepare exits 1 with the reason, and leaves nothing running', async () => {
  // A column gone, as a data dir edited by hand or by another build would have it: createStore
  // failed after the WAL checkpoint worker had started, and the worker kept the process alive.
  const dataDir = testDir()
  expect(spawnSync(process.execPath, [cliPath, 'team', 'list'], { env: { ...process.env, TAPGATE_DATA_DIR: dataDir } }).status).toBe(0)
  const db = new Database(path.join(dataDir, 'tapgate.sqlite'))
  db.exec('ALTER TABLE tokens DROP COLUMN moves')
  db.close()
  await failedStartCleansUp({ bin: cliPath, dataDir, reason: 'no such column', ms: 15_000 })
})

test('serve whose server modules do not load (a broken install) exits 1, and the anvil it started first is stopped', async () => {
  // A copy of the package with server.ts broken: the bin cannot bundle it, falls back to tsx, and
  // the import of the server fails after anvil was started (serve starts it before loading them).
  const root = testDir('tapgate-broken-')
  for (const part of ['src', 'station', 'contracts', 'fixtures', 'package.json', 'tsconfig.json']) fs.cpSync(path.join(repoRoot, part), path.join(root, part), { recursive: true })
  fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(root, 'node_modules'))
  fs.appendFileSync(path.join(root, 'src/server.ts'), '\nexport const broken = \n')
  await failedStartCleansUp({ bin: path.join(root, 'src/cli/tapgate.js'), dataDir: path.join(root, 'data'), reason: 'server.ts', ms: 20_000 })
})
