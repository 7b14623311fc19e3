/**
 * A `tapgate serve` that cannot start must end, and leave nothing running. A data dir whose schema
 * a statement does not fit (here: a column gone, as a data dir edited by hand or by another build
 * would have it) failed in createStore after the WAL checkpoint worker had started, and that worker
 * kept the process alive after it had printed its error. Run in a process group of its own, so
 * anything it started (anvil) is seen too.
 */
import Database from 'better-sqlite3'
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { expect, test } from 'vitest'
import { testDir } from '../helpers/gateway.js'
import { anvilStillRunning, cliPath, collectOutput, groupAlive, repoRoot, stopGroup } from '../helpers/processes.js'

test('serve on a data dir whose statements do not prepare exits 1 with the reason, and its process group is empty', async () => {
  const dataDir = testDir()
  const env = { ...process.env, TAPGATE_DATA_DIR: dataDir, TAPGATE_STATION: 'false', PORT: '0' }
  expect(spawnSync(process.execPath, [cliPath, 'team', 'list'], { env }).status).toBe(0)
  const db = new Database(path.join(dataDir, 'tapgate.sqlite'))
  db.exec('ALTER TABLE tokens DROP COLUMN moves')
  db.close()

  const child = spawn(process.execPath, [cliPath, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  const output = collectOutput(child)
  const ended = await Promise.race([output.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 15_000))])
  try {
    expect(ended, `still running after 15 s\n${output.stderr()}`).toEqual({ code: 1, signal: null })
    expect(output.stderr()).toContain('no such column')
    // Nothing of its group outlived it, nor the anvil it started before the store failed (detached).
    await expect.poll(() => groupAlive(child.pid!), { timeout: 5_000 }).toBe(false)
    expect(anvilStillRunning(dataDir)).toBeNull()
  } finally {
    await stopGroup(child)
    const orphan = anvilStillRunning(dataDir)
    if (orphan !== null) process.kill(orphan, 'SIGKILL')
  }
})

test('serve whose server modules do not load (a broken install) exits 1, and the anvil it started first is stopped', async () => {
  // A copy of the package with server.ts broken: the bin cannot bundle it, falls back to tsx, and
  // the import of the server fails after anvil was started (serve starts it before loading them).
  const root = testDir('tapgate-broken-')
  for (const part of ['src', 'station', 'contracts', 'fixtures', 'package.json', 'tsconfig.json']) fs.cpSync(path.join(repoRoot, part), path.join(root, part), { recursive: true })
  fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(root, 'node_modules'))
  fs.appendFileSync(path.join(root, 'src/server.ts'), '\nexport const broken = \n')
  const dataDir = path.join(root, 'data')
  const env = { ...process.env, TAPGATE_DATA_DIR: dataDir, TAPGATE_STATION: 'false', PORT: '0' }

  const child = spawn(process.execPath, [path.join(root, 'src/cli/tapgate.js'), 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  const output = collectOutput(child)
  const ended = await Promise.race([output.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 20_000))])
  try {
    expect(ended, `still running after 20 s\n${output.stderr()}`).toEqual({ code: 1, signal: null })
    expect(output.stderr()).toContain('server.ts')
    // anvil was spawned (its state dir exists) and is stopped; nothing of the group is left.
    expect(fs.existsSync(path.join(dataDir, 'chain/31337'))).toBe(true)
    await expect.poll(() => groupAlive(child.pid!), { timeout: 5_000 }).toBe(false)
    expect(anvilStillRunning(dataDir)).toBeNull()
  } finally {
    await stopGroup(child)
    const orphan = anvilStillRunning(dataDir)
    if (orphan !== null) process.kill(orphan, 'SIGKILL')
  }
})
