import fs from 'node:fs'
import path from 'node:path'
import type { ChildProcess } from 'node:child_process'
import { afterEach, describe, expect, test } from 'vitest'
import { openStore } from '../../src/db/store.js'
import { dataDirExposure } from '../../src/paths.js'
import { DiskQueue } from '../../station/link/diskQueue.js'
import { startServe, stopChild } from '../helpers/processes.js'
import { testDir } from '../helpers/gateway.js'

const mode = (file: string) => fs.statSync(file).mode & 0o777
const children: ChildProcess[] = []
afterEach(async () => {
  for (const child of children.splice(0)) await stopChild(child)
})

describe('data at rest: file modes', () => {
  test('a data dir tapgate creates is 0700, and tapgate.sqlite, -wal and -shm are 0600', async () => {
    // Under the usual umask 022, fresh files would be 0644 and a fresh dir 0755.
    const dataDir = path.join(testDir('tapgate-modes-'), 'nested', 'data')
    const store = openStore({ dataDir })
    try {
      store.db.exec('CREATE TABLE IF NOT EXISTS mode_probe (x); INSERT INTO mode_probe VALUES (1)')
      const db = path.join(dataDir, 'tapgate.sqlite')
      expect(fs.existsSync(`${db}-wal`) && fs.existsSync(`${db}-shm`)).toBe(true)
      expect({ dir: mode(dataDir), db: mode(db), wal: mode(`${db}-wal`), shm: mode(`${db}-shm`) }).toEqual({
        dir: 0o700,
        db: 0o600,
        wal: 0o600,
        shm: 0o600,
      })
      // Parents made on the way are private too: nobody else needs to list them.
      expect(mode(path.dirname(dataDir))).toBe(0o700)
    } finally {
      await store.close()
    }
  })

  test('an existing data dir keeps its mode (the operator chose it); dataDirExposure names it and the fix', async () => {
    const dataDir = testDir('tapgate-modes-')
    fs.chmodSync(dataDir, 0o755)
    const store = openStore({ dataDir })
    await store.close()
    expect(mode(dataDir)).toBe(0o755)
    const warning = dataDirExposure(dataDir)
    expect(warning).toContain(`chmod 700 ${dataDir}`)
    expect(warning).toContain('0755')
    fs.chmodSync(dataDir, 0o700)
    expect(dataDirExposure(dataDir)).toBeNull()
  })

  test("the station's queue dir is 0700 and each queued tap 0600", () => {
    const dir = path.join(testDir('tapgate-queue-'), 'queue')
    const queue = new DiskQueue(dir)
    queue.load()
    const entry = queue.add({ rfUid: '04DE5F1EACC040', url: 'https://tap.example.com/tap?e=00&c=00', chip: 'ntag424', readerName: 'r', readAt: new Date().toISOString() })
    expect({ dir: mode(dir), file: mode(entry.file) }).toEqual({ dir: 0o700, file: 0o600 })
  })

  test('tapgate serve on a world-readable data dir logs one warning line naming the fix', async () => {
    const dataDir = testDir('tapgate-modes-')
    fs.chmodSync(dataDir, 0o755)
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(PORT|HOST|TAPGATE_)/.test(name)))
    const server = await startServe({
      cwd: dataDir,
      env: { ...env, TAPGATE_DATA_DIR: dataDir, PORT: '0', TAPGATE_EMBEDDED_CHAIN: 'false', TAPGATE_DEMO: 'false' },
      track: (child) => children.push(child),
    })
    // The warning is logged before the listen line is printed.
    const warnings = server
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string; dataDir?: string })
      .filter((line) => line.level === 40)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]!.msg).toContain(`chmod 700 ${dataDir}`)
  }, 30_000)
})
