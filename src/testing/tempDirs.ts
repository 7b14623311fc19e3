import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/** tapgate-testing-<pid of the process that made it>-<random>: the sweep reads the pid back. */
const PREFIX = 'tapgate-testing-'

/**
 * A data dir for one test gateway, in the system's temp folder, named for this process. Its
 * gateway removes it at stop, and its reaper when this process dies; sweepTempDirs removes what
 * both missed (the machine went down with the runner).
 */
export function makeTempDataDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `${PREFIX}${process.pid}-`))
}

/** Removes the data dirs of test gateways whose process is gone. @returns how many */
export function sweepTempDirs(tmp: string = os.tmpdir()): number {
  let removed = 0
  for (const name of fs.readdirSync(tmp)) {
    const match = new RegExp(`^${PREFIX}(\\d+)-`).exec(name)
    if (!match || alive(Number(match[1]))) continue
    fs.rmSync(path.join(tmp, name), { recursive: true, force: true })
    removed++
  }
  return removed
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
