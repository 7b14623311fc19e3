import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
export const cliPath = path.join(repoRoot, 'src/cli/tapgate.js')
const startTimeoutMs = 15_000
const exitTimeoutMs = 5_000

export type Server = { child: ChildProcess; url: string; stdout: () => string; stderr: () => string }

/**
 * Spawns a real `tapgate serve` and resolves once it prints its URL (bounded
 * wait). `track` receives the child at once, so the caller can stop it by PID
 * even when start-up fails.
 */
export function startServe({
  cwd,
  env,
  track,
  command = [process.execPath, cliPath, 'serve'],
  detached = false,
}: {
  cwd: string
  env: NodeJS.ProcessEnv
  track: (child: ChildProcess) => void
  /** Default: this repo's bin through node; an installed package's test runs `npx tapgate serve`. */
  command?: string[]
  /** In a process group of its own, for a command (npx) whose child does the serving: stop it with stopGroup. */
  detached?: boolean
}): Promise<Server> {
  // No in-process station: it would open every PC/SC reader, including the PC/SC tests' virtual ones.
  const [file, ...args] = command
  const child = spawn(file!, args, { cwd, env: { TAPGATE_STATION: 'false', ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached })
  track(child)
  let stdout = ''
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer)
      reject(new Error(`tapgate serve ${why}\nstdout: ${stdout}\nstderr: ${stderr}`))
    }
    const timer = setTimeout(() => fail(`did not start within ${startTimeoutMs} ms`), startTimeoutMs)
    const early = (code: number | null, signal: NodeJS.Signals | null) => fail(`exited early (code ${code}, signal ${signal})`)
    child.once('exit', early)
    child.once('error', (error) => fail(`could not be spawned: ${error.message}`))
    let started = false
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
      const match = started ? null : /tapgate listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)
      if (match) {
        started = true
        clearTimeout(timer)
        // Only our own listener: removing every 'exit' listener at each later chunk took stopChild's
        // too, so each stop waited its whole 5 s and then sent SIGKILL to a gateway already gone.
        child.off('exit', early)
        resolve({ child, url: match[1]!, stdout: () => stdout, stderr: () => stderr })
      }
    })
  })
}

export type ChildOutput = {
  stdout: () => string
  stderr: () => string
  /** Resolves once the child has exited and its output is complete ('close': 'exit' can come before the last chunk). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** Collects a child's stdout and stderr as text. */
export function collectOutput(child: ChildProcess): ChildOutput {
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })))
  return { stdout: () => stdout, stderr: () => stderr, exited }
}

/** Resolves true when the child has exited, or false after `ms`. */
export function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true)
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms)
    child.once('exit', () => {
      clearTimeout(timer)
      resolve(true)
    })
  })
}

/** Stops a child by PID: SIGCONT (a failed burst may have left it paused), SIGTERM, then SIGKILL. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
    signal(child.pid, 'SIGCONT')
    signal(child.pid, 'SIGTERM')
    if (!(await exited(child, exitTimeoutMs))) {
      signal(child.pid, 'SIGKILL')
      await exited(child, exitTimeoutMs)
    }
  }
}

/**
 * Stops a process group started with `detached` (npx and the gateway it runs) by its leader's PID:
 * SIGTERM to the group, then SIGKILL to whatever of it is left after 5 s.
 */
export async function stopGroup(child: ChildProcess): Promise<void> {
  const pgid = child.pid
  if (pgid === undefined) return
  signal(-pgid, 'SIGTERM')
  const deadline = Date.now() + exitTimeoutMs
  while (groupAlive(pgid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  if (groupAlive(pgid)) signal(-pgid, 'SIGKILL')
  await exited(child, exitTimeoutMs)
}

/** Whether a process of this pid exists (a zombie counts until it is reaped). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

/** kill(2) that tolerates a process that exited meanwhile (the 'exit' event may not have arrived yet). */
export function signal(pid: number, name: NodeJS.Signals) {
  try {
    process.kill(pid, name)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error
  }
}

/**
 * The embedded chain's anvil of a data dir, if it is still running: anvil runs detached (in a
 * process group of its own, so a SIGKILLed gateway's chain survives for its state to be rescued),
 * so a group check does not see it; its pid file does.
 */
export function anvilStillRunning(dataDir: string, chainId = 31337): number | null {
  let pid: number
  try {
    pid = (JSON.parse(fs.readFileSync(path.join(dataDir, 'chain', String(chainId), 'anvil.pid'), 'utf8')) as { pid: number }).pid
  } catch {
    return null
  }
  try {
    process.kill(pid, 0)
    return pid
  } catch {
    return null
  }
}

