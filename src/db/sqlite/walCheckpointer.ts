import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import type { Db } from './openDatabase.js'

export type WalCheckpointer = {
  /** Resolves once the worker has its connection open (or has failed, and commits checkpoint again). */
  ready(): Promise<void>
  /** What the worker has done so far: checkpoints that moved frames, and how many frames they moved. */
  stats(): { checkpoints: number; frames: number }
  /**
   * Ends the worker and waits (at most 2 s) until it has closed its connection,
   * so the data dir can be removed right after; the server's connection then
   * checkpoints on its own again.
   */
  stop(): void
}

export type StartWalCheckpointerParameters = {
  /** How often the worker runs a PASSIVE checkpoint (default 250 ms). */
  intervalMs?: number
  log?: { warn(obj: object, msg?: string): void }
}

/** SQLite's default: a commit that leaves the WAL over 1,000 pages checkpoints it. */
const DEFAULT_AUTOCHECKPOINT = 1000

// CommonJS, run with eval: the CLI is one esbuild bundle, so a worker file beside it would not exist.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
const db = new Database(workerData.file, { timeout: 1000 })
parentPort.postMessage({ ready: true })
// The pragma counts the frames of the current WAL checkpointed so far; a writer that rewinds the WAL starts it over.
let before = 0
const timer = setInterval(() => {
  try {
    const [row] = db.pragma('wal_checkpoint(PASSIVE)')
    const moved = row.checkpointed >= before ? row.checkpointed - before : row.checkpointed
    before = row.checkpointed
    if (moved > 0) parentPort.postMessage({ frames: moved })
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message) })
  }
}, workerData.intervalMs)
parentPort.on('message', () => {
  clearInterval(timer)
  db.close()
  Atomics.store(workerData.closed, 0, 1)
  Atomics.notify(workerData.closed, 0)
  parentPort.close()
})
`

/**
 * Moves WAL checkpoints off the request path. SQLite's auto-checkpoint runs
 * inside the commit that fills the WAL, so every ~222nd tap waited 5–12 ms for
 * one (bench/station.ts). This turns it off on `db` and checkpoints from a
 * worker thread with its own connection instead: a PASSIVE checkpoint copies
 * WAL frames into the database file while this thread goes on committing.
 * If the worker fails, `db` checkpoints on its own again.
 *
 * @example
 * const checkpointer = startWalCheckpointer(store.db)
 * // … on close:
 * checkpointer.stop()
 */
export function startWalCheckpointer(db: Db, { intervalMs = 250, log }: StartWalCheckpointerParameters = {}): WalCheckpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3')
  // Set by the worker once its connection is closed: stop() waits on it synchronously, as store.close() is synchronous.
  const closed = new Int32Array(new SharedArrayBuffer(4))
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file: db.name, intervalMs, closed } })
  worker.unref()
  db.pragma('wal_autocheckpoint = 0')
  let checkpoints = 0
  let frames = 0
  let stopped = false
  let lastError: string | null = null
  let markReady = () => {}
  const ready = new Promise<void>((resolve) => (markReady = resolve))
  const fallBack = (why: string) => {
    markReady()
    if (stopped) return
    stopped = true
    log?.warn({ err: why }, 'WAL checkpoint worker failed; commits checkpoint the WAL again')
    if (db.open) db.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT}`)
  }
  worker.on('message', (message: { ready?: true; frames?: number; error?: string }) => {
    if (message.ready) markReady()
    else if (message.frames !== undefined) {
      checkpoints++
      frames += message.frames
    } else if (message.error !== undefined && message.error !== lastError) {
      // A busy database is retried on the next tick; say each new error once.
      lastError = message.error
      log?.warn({ err: message.error }, 'WAL checkpoint failed; retrying')
    }
  })
  worker.on('error', (error) => fallBack(error.message))
  worker.on('exit', (code) => fallBack(`the worker exited (code ${code})`))
  return {
    ready: () => ready,
    stats: () => ({ checkpoints, frames }),
    stop() {
      if (stopped) return
      stopped = true
      worker.postMessage('stop')
      // A checkpoint in progress finishes first. A worker still starting (it has not read its messages yet) is
      // waited for as well; one that died has nothing open.
      if (worker.threadId !== -1) Atomics.wait(closed, 0, 0, 2_000)
      if (db.open) db.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT}`)
    },
  }
}
