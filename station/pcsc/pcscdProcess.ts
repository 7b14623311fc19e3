import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import { pcscdReachable } from '../pcscdReachable.js'
import { pcscdClients } from './pcscdClients.js'

/** Debian's pcscd, or null when the package is not installed. */
export const PCSCD_BINARY = ['/usr/sbin/pcscd', '/usr/bin/pcscd'].find((p) => fs.existsSync(p)) ?? null
export const PCSCD_SOCKET = '/run/pcscd/pcscd.comm'

export type PcscdProcess = {
  /** Whether the pcscd that answers is ours (else one that ran already, or one started elsewhere that won the race). */
  started: boolean
  pid: number | null
  /** What our pcscd printed. */
  log: () => string
  /**
   * Stops our pcscd by its PID once no other process uses it, waiting at most
   * `shareWaitMs`; a no-op when it is not ours.
   *
   * @returns the processes still connected when it was stopped (the wait ran out)
   */
  stop: () => Promise<number[]>
}

export type UsePcscdParameters = {
  startTimeoutMs?: number
  /** How long stop() waits for other clients to leave before stopping our pcscd anyway. */
  shareWaitMs?: number
}

/**
 * A pcscd for the tests and the station bench. pcscd is one per machine (its
 * socket and pid file are fixed paths): the running one is used as it is;
 * otherwise this starts `pcscd --foreground` (needs root) and waits for its
 * socket. Another process's pcscd started at the same moment wins the pid
 * file; ours then exits and theirs serves.
 *
 * @throws Error when pcscd is not installed or its socket does not answer in time, with its log
 * @example
 * const pcscd = await usePcscd()
 * try { ... } finally { await pcscd.stop() }
 */
export async function usePcscd({ startTimeoutMs = 5_000, shareWaitMs = 15_000 }: UsePcscdParameters = {}): Promise<PcscdProcess> {
  if (await answers()) return { started: false, pid: null, log: () => '', stop: async () => [] }
  if (!PCSCD_BINARY) throw new Error('pcscd is not installed (apt-get install pcscd)')
  let log = ''
  const child = spawn(PCSCD_BINARY, ['--foreground'], { stdio: ['ignore', 'pipe', 'pipe'] })
  child.stdout!.on('data', (c: Buffer) => (log += c.toString()))
  child.stderr!.on('data', (c: Buffer) => (log += c.toString()))
  child.once('error', (error) => (log += `spawn error: ${error.message}\n`))
  const until = Date.now() + startTimeoutMs
  while (!(await answers())) {
    if (Date.now() > until) {
      await stopByPid(child)
      throw new Error(`pcscd (pid ${child.pid}) did not open ${PCSCD_SOCKET} within ${startTimeoutMs / 1000} s\n${log}`)
    }
    await sleep(20)
  }
  const ours = !exitedAlready(child)
  return {
    started: ours,
    pid: ours ? (child.pid ?? null) : null,
    log: () => log,
    stop: async () => {
      if (!ours) return []
      // A client that came meanwhile (another test file, a bench) would break if pcscd went now.
      const stopAt = Date.now() + shareWaitMs
      let others = pcscdClients([process.pid, child.pid!]) ?? []
      while (others.length > 0 && Date.now() < stopAt && !exitedAlready(child)) {
        await sleep(200)
        others = pcscdClients([process.pid, child.pid!]) ?? []
      }
      await stopByPid(child)
      return others
    },
  }
}

const answers = async () => (await pcscdReachable({ PCSCLITE_CSOCK_NAME: PCSCD_SOCKET }, 1000)).ok
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const exitedAlready = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null

/** SIGTERM, then SIGKILL after 5 s; resolves once the process has exited. */
async function stopByPid(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || exitedAlready(child)) return
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(child.pid!, name)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error
    }
  }
  signal('SIGTERM')
  const timer = setTimeout(() => signal('SIGKILL'), 5_000)
  await gone
  clearTimeout(timer)
}
