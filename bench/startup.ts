/**
 * Start-up of the `tapgate` bin, as a user runs it, against `node -e 0` in the same run.
 *
 *   npm run bench:startup            BENCH_ROUNDS=9 npm run bench:startup
 *
 * Figures (medians of BENCH_ROUNDS rounds, the commands alternating within each round so noise
 * hits them alike): `node -e 0`; `tapgate --help`; `tapgate team list` on an existing data dir
 * (a command that opens the database); `tapgate serve` until /health answers 200 with the
 * embedded chain reachable, then SIGTERM. Targets (../shared/notes/targets.md): ≤ 2×, ≤ 3×, ≤ 10×.
 * Every command runs in its own process group, and after it exits the group must be empty, and
 * serve's anvil (detached, in a group of its own) gone: no process may outlive the command that
 * started it.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { PID_FILE } from '../src/chain/embeddedChain.js'
import { createCleanups } from './cleanups.js'
import { positiveEnv } from './env.js'

const ROUNDS = positiveEnv('BENCH_ROUNDS', 5)
const root = fileURLToPath(new URL('..', import.meta.url))
const bin = path.join(root, 'src/cli/tapgate.js')
const { onCleanup, cleanup, abort } = createCleanups('bench/startup.ts')

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tapgate-startup-'))
onCleanup('remove the data dir', () => fs.rmSync(dataDir, { recursive: true, force: true }))
const env = { ...process.env, TAPGATE_DATA_DIR: dataDir, TAPGATE_STATION: 'false', TAPGATE_LOG_LEVEL: 'warn', PORT: '0' }
const running = new Set<ChildProcess>()
onCleanup('stop what is still running', () => {
  for (const child of running) if (child.pid) killGroup(child.pid, 'SIGKILL')
})
process.once('SIGINT', () => void abort('interrupted', 130))

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal)
  } catch {}
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

/** Spawns in a new process group, resolves with the ms to exit; fails if the group outlives it. */
function timeCommand(args: string[], what: string): Promise<number> {
  const start = performance.now()
  const child = spawn(process.execPath, args, { cwd: dataDir, env, stdio: ['ignore', 'ignore', 'pipe'], detached: true })
  running.add(child)
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  return new Promise((resolve, reject) => {
    child.once('exit', async (code) => {
      const ms = performance.now() - start
      running.delete(child)
      if (code !== 0) return reject(new Error(`${what} exited ${code}: ${stderr}`))
      await lingering(child.pid!, what).then(() => resolve(ms), reject)
    })
  })
}

async function lingering(pgid: number, what: string): Promise<void> {
  for (let i = 0; i < 50 && groupAlive(pgid); i++) await new Promise((r) => setTimeout(r, 20))
  if (groupAlive(pgid)) {
    killGroup(pgid, 'SIGKILL')
    throw new Error(`${what}: a process of its group outlived it by 1 s`)
  }
}

/** anvil runs detached (its own process group, so a SIGKILLed gateway's chain can be rescued): its pid file tells. */
async function anvilStopped(): Promise<void> {
  const file = path.join(dataDir, 'chain/31337', PID_FILE)
  for (let i = 0; i < 50 && fs.existsSync(file); i++) await new Promise((r) => setTimeout(r, 20))
  if (fs.existsSync(file)) throw new Error(`serve: its anvil outlived it (${fs.readFileSync(file, 'utf8').trim()})`)
}

/** `tapgate serve` until /health says 200 with the embedded chain reachable; then SIGTERM and wait for the group. */
function timeServe(): Promise<number> {
  const start = performance.now()
  const child = spawn(process.execPath, [bin, 'serve'], { cwd: dataDir, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  running.add(child)
  let out = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not answer within 30 s: ${out}`)), 30_000)
    child.once('exit', (code) => reject(new Error(`serve exited early (${code}): ${out}`)))
    const poll = async () => {
      const url = /tapgate listening on (http:\/\/\S+)/.exec(out)?.[1]
      if (url) {
        const health = await fetch(`${url}/health`).then((r) => (r.ok ? (r.json() as Promise<{ chains: { reachable: boolean }[] }>) : null), () => null)
        if (health?.chains.some((c) => c.reachable)) {
          const ms = performance.now() - start
          clearTimeout(timer)
          child.removeAllListeners('exit')
          child.once('exit', async () => {
            running.delete(child)
            await lingering(child.pid!, 'serve')
              .then(() => anvilStopped())
              .then(() => resolve(ms), reject)
          })
          child.kill('SIGTERM')
          return
        }
      }
      setTimeout(poll, 5)
    }
    void poll()
  })
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

async function main() {
  // The first serve seeds the demo (a deploy on the embedded chain) and may bundle the CLI: not timed.
  await timeServe()
  const figures = {
    node: [] as number[],
    help: [] as number[],
    teamList: [] as number[],
    serve: [] as number[],
  }
  for (let round = 0; round < ROUNDS; round++) {
    figures.node.push(await timeCommand(['-e', '0'], 'node -e 0'))
    figures.help.push(await timeCommand([bin, '--help'], 'tapgate --help'))
    figures.teamList.push(await timeCommand([bin, 'team', 'list'], 'tapgate team list'))
    figures.serve.push(await timeServe())
  }
  const base = median(figures.node)
  const rows: [string, number[], number | null][] = [
    ['node -e 0', figures.node, null],
    ['tapgate --help', figures.help, 2],
    ['tapgate team list (opens the database)', figures.teamList, 3],
    ['tapgate serve → /health 200, embedded chain', figures.serve, 10],
  ]
  console.log(`bench/startup.ts: medians of ${ROUNDS} rounds, node ${process.version}`)
  for (const [name, values, target] of rows) {
    const ms = median(values)
    const ratio = ms / base
    const verdict = target === null ? '' : ratio <= target ? `met (≤ ${target}×)` : `NOT met (target ≤ ${target}×)`
    console.log(`  ${name.padEnd(46)} ${ms.toFixed(0).padStart(6)} ms  ${ratio.toFixed(1).padStart(5)}×  ${verdict}`)
  }
  console.log('  no process outlived the command that started it')
}

try {
  await main()
} catch (error) {
  console.error(`bench/startup.ts: ${(error as Error).message}`)
  process.exitCode = 1
} finally {
  await cleanup()
}
