import fs from 'node:fs/promises'
import path from 'node:path'
import { mediaDir } from './mediaFiles.js'
import { isMediaKey } from './mediaUrl.js'

/** A use is written to the file's mtime at most this often (the order survives a restart; a busy card costs no write per view). */
const PERSIST_USE_MS = 60_000

export type MediaBudget = {
  /** A cached image was served or prefetched: it becomes the most recently used. */
  used(key: string, bytes: number): Promise<void>
  /** An image was written: the least recently used others are deleted until all fit `maxBytes`. */
  added(key: string, bytes: number): Promise<void>
  /** Resolves when no change is pending (close, tests). */
  idle(): Promise<void>
}

export type MediaBudgetOptions = { dataDir: string; maxBytes: number; now: () => number }

type Entry = { bytes: number; persistedAt: number }

/**
 * The cache's size cap (`media.cacheMaxBytes`): the files of <dataDir>/media in least-recently-used
 * order, read once from their mtimes, then kept in memory (a Map's insertion order is the LRU
 * order). An evicted image keeps its row, so it is fetched again the next time a card shows it.
 */
export function createMediaBudget({ dataDir, maxBytes, now }: MediaBudgetOptions): MediaBudget {
  const dir = mediaDir(dataDir)
  let index: Promise<Map<string, Entry>> | undefined
  let total = 0
  // One change at a time: an eviction must not race a use or another eviction.
  let queue: Promise<unknown> = Promise.resolve()
  const serially = (change: (files: Map<string, Entry>) => Promise<void>): Promise<void> => {
    index ??= load()
    const run = queue.then(async () => change(await index!))
    queue = run.catch(() => undefined)
    return run
  }

  async function load(): Promise<Map<string, Entry>> {
    const names = await fs.readdir(dir).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? [] : Promise.reject(error)))
    const stats = await Promise.all(
      names.filter(isMediaKey).map(async (key) => ({ key, stat: await fs.stat(path.join(dir, key)).catch(() => null) })),
    )
    const files = new Map<string, Entry>()
    for (const { key, stat } of stats.filter((s) => s.stat !== null).sort((a, b) => a.stat!.mtimeMs - b.stat!.mtimeMs)) {
      files.set(key, { bytes: stat!.size, persistedAt: stat!.mtimeMs })
      total += stat!.size
    }
    return files
  }

  // A file deleted meanwhile (by hand, or another process's cap) is fetched again when asked for.
  const touch = (key: string, at: number) => fs.utimes(path.join(dir, key), at / 1000, at / 1000).catch(() => undefined)

  function put(files: Map<string, Entry>, key: string, entry: Entry) {
    total += entry.bytes - (files.get(key)?.bytes ?? 0)
    files.delete(key)
    files.set(key, entry)
  }

  return {
    used: (key, bytes) =>
      serially(async (files) => {
        const at = now()
        const persistedAt = files.get(key)?.persistedAt ?? 0
        const persist = at - persistedAt >= PERSIST_USE_MS
        put(files, key, { bytes, persistedAt: persist ? at : persistedAt })
        if (persist) await touch(key, at)
      }),
    added: (key, bytes) =>
      serially(async (files) => {
        const at = now()
        put(files, key, { bytes, persistedAt: at })
        // The file's mtime is the order a restart reads: on the same clock as later uses.
        await touch(key, at)
        for (const [oldest, entry] of files) {
          if (total <= maxBytes) break
          if (oldest === key) continue
          await fs.rm(path.join(dir, oldest), { force: true })
          files.delete(oldest)
          total -= entry.bytes
        }
      }),
    idle: () => queue.then(() => undefined),
  }
}
