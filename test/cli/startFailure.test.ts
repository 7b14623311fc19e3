/**
 * A `tapgate serve` that cannot start must end, and leave nothing running. A data dir whose schema
 * a statement does not fit (here: a column gone, as a data dir edited by hand or by another build
 * would have it) failed in createStore after the WAL checkpoint worker had started, and that worker
 * kept the process alive after it had printed its error. Run in a process group of its own, so
 * anything it started (anvil) is seen too.
 */
import Database from 'better-sqlite3'
import { spawn, spawnSync } from 'node:child_process'
import path from 'node:path'
import { expect, test } from 'vitest'
import { testDir } from '../helpers/gateway.js'
import { cliPath, collectOutput, groupAlive, stopGroup } from '../helpers/processes.js'

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
    // Nothing of its group outlived it (anvil was started before the store failed).
    await expect.poll(() => groupAlive(child.pid!), { timeout: 5_000 }).toBe(false)
  } finally {
    await stopGroup(child)
  }
})
