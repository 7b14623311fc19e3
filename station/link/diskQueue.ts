import fs from 'node:fs'
import path from 'node:path'
import type { StationTap } from '../tap.js'

/** One queued tap: its file is `<seq>.json` in the queue dir, `seq` zero-padded so names sort in order. */
export type QueuedTap = { seq: number; id: string; tap: StationTap; file: string }

const NAME = /^(\d{16})\.json$/

/**
 * Taps waiting for the gateway, one file per tap, written durably (temp file,
 * fsync, rename, fsync of the directory) before the station tries to send it,
 * and deleted once the gateway answered. What is left in the directory after
 * a crash or a stop is sent, in order, at the next start.
 */
export class DiskQueue {
  private next = 1

  constructor(readonly dir: string) {
    // Queued taps carry the chip's URL (a valid, unspent SUN message until the gateway sees it): private to this user.
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  }

  /**
   * The taps on disk, oldest first. Leftover temp files (a write cut short) are
   * removed; a file that does not parse is renamed `*.bad` and skipped.
   */
  load(onBad: (file: string, why: string) => void = () => {}): QueuedTap[] {
    const taps: QueuedTap[] = []
    for (const name of fs.readdirSync(this.dir).sort()) {
      const file = path.join(this.dir, name)
      if (name.endsWith('.tmp')) {
        fs.rmSync(file, { force: true })
        continue
      }
      const match = NAME.exec(name)
      if (!match) continue
      try {
        const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as { id?: unknown; tap?: Partial<StationTap> }
        if (typeof parsed.id !== 'string' || typeof parsed.tap?.rfUid !== 'string' || typeof parsed.tap.url !== 'string') throw new Error('not a queued tap')
        taps.push({ seq: Number(match[1]), id: parsed.id, tap: parsed.tap as StationTap, file })
      } catch (error) {
        fs.renameSync(file, `${file}.bad`)
        onBad(file, (error as Error).message)
      }
    }
    for (const entry of taps) this.next = Math.max(this.next, entry.seq + 1)
    return taps
  }

  /** Writes a tap durably and returns its entry (call `load` first: numbering continues after what is on disk). */
  add(tap: StationTap): QueuedTap {
    const seq = this.next++
    const name = `${String(seq).padStart(16, '0')}.json`
    const file = path.join(this.dir, name)
    const tmp = path.join(this.dir, `.${name}.tmp`)
    const id = `${seq}`
    const fd = fs.openSync(tmp, 'w', 0o600)
    try {
      fs.writeSync(fd, JSON.stringify({ id, tap }))
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
    fs.renameSync(tmp, file)
    this.syncDir()
    return { seq, id, tap, file }
  }

  /** The gateway answered: the tap leaves the queue. */
  remove(entry: QueuedTap): void {
    fs.rmSync(entry.file, { force: true })
  }

  private syncDir() {
    // A rename is durable once its directory is: without this, a power cut can lose the file.
    let fd: number | undefined
    try {
      fd = fs.openSync(this.dir, 'r')
      fs.fsyncSync(fd)
    } catch {
      // Some filesystems refuse to fsync a directory; the file itself is synced.
    } finally {
      if (fd !== undefined) fs.closeSync(fd)
    }
  }
}
