import { type ChildProcess, spawn } from 'node:child_process'
import type { BackendGateway } from './gateway.js'
import { cliPath, repoRoot } from './processes.js'

export type CliResult = { code: number | null; stdout: string; stderr: string }

// The environment of the test run less what would point the bin elsewhere (a port, another data dir or database).
const baseEnv: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(PORT|HOST|TAPGATE_)/.test(name)))

/**
 * The real `tapgate` bin on a test gateway's data: its data dir's SQLite file, or its PostgreSQL
 * database (TAPGATE_DATABASE_URL) on the postgres project. `run(...args)` resolves with the exit code
 * and both streams; `killAll()` (an afterEach) ends any still running.
 */
export function backendCli(gateway: () => BackendGateway) {
  const children = new Set<ChildProcess>()
  const run = (...args: string[]): Promise<CliResult> =>
    new Promise((resolve, reject) => {
      const gw = gateway()
      const env = { ...baseEnv, TAPGATE_DATA_DIR: gw.dataDir, ...(gw.databaseUrl ? { TAPGATE_DATABASE_URL: gw.databaseUrl, TAPGATE_EMBEDDED_CHAIN: 'false' } : {}) }
      const child = spawn(process.execPath, [cliPath, ...args], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] })
      children.add(child)
      let stdout = ''
      let stderr = ''
      child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c))
      child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c))
      child.once('error', reject)
      child.once('close', (code) => resolve({ code, stdout, stderr }))
    })
  const killAll = () => {
    for (const child of children) if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGKILL')
    children.clear()
  }
  return { run, killAll }
}
