import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const LOCK_FILE = path.join(os.tmpdir(), 'tapgate-pcsc-tests.lock')

/**
 * The PC/SC test files share the machine's one pcscd and its two vpcd slots.
 * Each puts its cards in its own slot, but a station that opens every reader
 * also opens the other file's slot, and its PC/SC calls there can wait on the
 * other file's card session: a CI run once saw a station miss its exit bound so.
 * Files hold this lock while they use pcscd, so they take turns.
 *
 * @returns the release function (idempotent)
 * @throws Error when another live process holds the lock for `timeoutMs`
 */
export async function lockPcsc(timeoutMs = 25_000): Promise<() => void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      fs.writeFileSync(LOCK_FILE, `${process.pid}\n`, { flag: 'wx' })
      let released = false
      return () => {
        if (released) return
        released = true
        if (holderOf() === process.pid) fs.rmSync(LOCK_FILE, { force: true })
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const holder = holderOf()
    // A holder that died (a killed test run) leaves the file behind; an empty one is being written.
    if (holder !== null && !alive(holder)) fs.rmSync(LOCK_FILE, { force: true })
    else if (Date.now() > deadline) throw new Error(`another test process (pid ${holder}) has held ${LOCK_FILE} for ${timeoutMs / 1000} s`)
    else await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** The pid in the lock file; null while it is being written, or gone. */
function holderOf(): number | null {
  let text: string
  try {
    text = fs.readFileSync(LOCK_FILE, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
  const pid = Number.parseInt(text.trim(), 10)
  return Number.isSafeInteger(pid) && pid > 0 ? pid : null
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
