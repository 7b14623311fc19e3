import fs from 'node:fs'
import path from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { openStore, type SqliteStore } from '../../src/db/store.js'
import { makeTempDir } from '../helpers/gateway.js'

// The server's store checkpoints its WAL from a worker thread (src/db/sqlite/walCheckpointer.ts), so no
// commit pays for a checkpoint. Real SQLite files in temp dirs, a real worker thread.

const dirs: string[] = []
const stores: SqliteStore[] = []
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close()
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

function open(backgroundCheckpoints: boolean): { store: SqliteStore; dir: string } {
  const dir = makeTempDir('tapgate-wal-')
  dirs.push(dir)
  const store = openStore({ dataDir: dir, backgroundCheckpoints })
  stores.push(store)
  return { store, dir }
}

/** 300 transactions of tap-log rows (each commit appends WAL frames). */
async function write(store: SqliteStore, from = 0): Promise<void> {
  for (let i = from; i < from + 300; i++)
    await store.tx((tx) =>
      tx.tapLog.insert({
        at: i,
        source: 'phone',
        chipUid: null,
        teamId: null,
        accepted: false,
        authenticated: false,
        reason: 'malformed',
        counter: null,
        refId: null,
        detail: 'x'.repeat(2_000),
      }),
    )
}

const walPages = (dir: string) => Math.max(0, (fs.statSync(path.join(dir, 'tapgate.sqlite-wal')).size - 32) / (4096 + 24))

test('commits never checkpoint: the worker copies the WAL into the database file while the server writes', async () => {
  const { store, dir } = open(true)
  await store.checkpointer!.ready()
  expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(0)
  const before = fs.statSync(path.join(dir, 'tapgate.sqlite')).size
  await write(store)
  await expect.poll(() => store.checkpointer!.stats().frames, { timeout: 5_000 }).toBeGreaterThan(0)
  // The frames reached the database file; the next commits rewind the WAL instead of growing it forever.
  expect(fs.statSync(path.join(dir, 'tapgate.sqlite')).size).toBeGreaterThan(before + 300 * 2_000)
  const pages = walPages(dir)
  await write(store, 300)
  await expect.poll(() => store.checkpointer!.stats().checkpoints, { timeout: 5_000 }).toBeGreaterThan(1)
  expect(walPages(dir)).toBeLessThan(pages * 2.5)
  expect((await store.tapLog.recent(1000)).length).toBe(600)
})

test('without the worker (the CLI), SQLite checkpoints in the commit as usual', () => {
  const { store } = open(false)
  expect(store.checkpointer).toBeNull()
  expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000)
})

test('close() waits for the worker to close its connection: the data dir can go at once, every time', async () => {
  for (let round = 0; round < 10; round++) {
    const dir = makeTempDir('tapgate-wal-close-')
    const store = openStore({ dataDir: dir, backgroundCheckpoints: true })
    if (round % 2 === 1) {
      // The worker has the database open and a checkpoint behind it; more frames for the next one.
      await write(store)
      await expect.poll(() => store.checkpointer!.stats().checkpoints, { timeout: 5_000, interval: 10 }).toBeGreaterThan(0)
      await write(store, 300)
    }
    // Even rounds: closed at once, while the worker is still starting (it would open the file after this).
    await store.close()
    // The worker's connection closed first, so the server's was the last and took the -wal and -shm files with it.
    expect(fs.readdirSync(dir)).toEqual(['tapgate.sqlite'])
    // A connection still open or opening would (re)create the -wal/-shm files under rmSync: ENOTEMPTY.
    fs.rmSync(dir, { recursive: true })
    expect(fs.existsSync(dir)).toBe(false)
  }
})
