import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { startReaper } from '../cli/reaper.js'

/** tapgate-testing-<pid of the process that made it>-<random>: the sweep reads the pid back. */
const PREFIX = 'tapgate-testing-'

/** This process's folder of test gateways' data dirs, and the one reaper that watches it. */
let processDir: string | undefined

/**
 * A data dir for one test gateway: a folder in this process's own temp folder. The gateway removes
 * it at stop. The process's folder is made at the first call, with one reaper for all its gateways:
 * when this process or the runner that started it dies, however it died, the reaper ends this
 * process, every anvil under the folder and the folder. (One watcher per process, not per gateway:
 * starting a node process for each gateway cost a start ~40 ms of CPU on a 2-core machine.) A normal
 * exit leaves the reaper only an empty folder to remove, or the chains of gateways never stopped.
 */
export function makeTempDataDir(): string {
  if (processDir === undefined || !fs.existsSync(processDir)) {
    sweepTempDirs()
    processDir = fs.mkdtempSync(path.join(os.tmpdir(), `${PREFIX}${process.pid}-`))
    // Not pid 1 as a runner: a process started by a container's init has no runner above it.
    const owners = process.ppid > 1 ? [process.pid, process.ppid] : [process.pid]
    startReaper({ owners, pids: [process.pid], dataDir: processDir, removeDir: true })
  }
  return fs.mkdtempSync(path.join(processDir, 'gateway-'))
}

/** Removes the folders of test gateways whose process is gone (the machine went down with it). @returns how many */
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
