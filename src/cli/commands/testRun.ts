import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { loadConfig } from '../../config.js'
import { startEarly } from '../../startEarly.js'
import { startReaper } from '../reaper.js'
import { UsageError, type Flags } from '../usage.js'
import { text } from './context.js'

/**
 * `tapgate test -- COMMAND`: a gateway for one run of an app's tests, as Firebase's `emulators:exec`
 * gives one. A fresh data dir (removed at the end) with the demo team, the embedded chain, a free port
 * on 127.0.0.1 and no rate limits (a suite taps far more than 120 times a minute; TAPGATE_RATE_LIMIT_MAX
 * still sets one). No in-process station: a test's gateway must not read the cards on the machine's
 * readers. The gateway's log goes to stderr at warn, so COMMAND's own output stays readable.
 * COMMAND runs with TAPGATE_URL, TAPGATE_API_KEY and TAPGATE_DATA_DIR; SIGINT and SIGTERM are passed
 * on to it. tapgate exits with its code (128 + the signal's number when a signal ended it, 127 when it
 * could not be started) once the gateway, its chain and the data dir are gone.
 */
export async function run(positionals: string[], flags: Flags) {
  const [command, ...args] = positionals
  if (command === undefined) throw new UsageError('give the command to run after --, e.g. tapgate test -- npm test')
  const ownDir = text(flags, 'data-dir') === undefined
  const dataDir = text(flags, 'data-dir') ?? fs.mkdtempSync(path.join(os.tmpdir(), 'tapgate-test-'))
  const env = { TAPGATE_RATE_LIMIT_MAX: '1000000000', TAPGATE_LOG_LEVEL: 'warn', ...process.env }
  let exitCode = 1
  let reaper: { stop(): void } | undefined
  try {
    const config = loadConfig({
      env,
      configFile: text(flags, 'config'),
      overrides: { dataDir, port: text(flags, 'port') ?? '0', host: '127.0.0.1', demo: true, station: { enabled: false } },
      serving: true,
    })
    const early = startEarly(config, process.stderr)
    const { startServer } = await import('../../server.js').catch(async (error: unknown) => {
      await early.abandon()
      throw error
    })
    const server = await startServer(config, (line) => console.error(line.split('\n')[0]), { early })
    try {
      // The demo key is made by this start on a fresh data dir; a --data-dir that has a team already has no key to give.
      exitCode = await runCommand(command, args, { TAPGATE_URL: server.url, TAPGATE_API_KEY: server.demoApiKey ?? '', TAPGATE_DATA_DIR: dataDir }, (pid) => {
        // Killed itself (SIGKILL), tapgate cleans up nothing: the reaper then stops COMMAND and the chain and removes the dir.
        reaper = startReaper({ owners: [process.pid], pids: pid === undefined ? [] : [pid], dataDir, removeDir: ownDir })
      })
    } finally {
      await server.close()
    }
  } finally {
    if (ownDir) fs.rmSync(dataDir, { recursive: true, force: true })
    reaper?.stop()
  }
  process.exitCode = exitCode
}

/** Runs COMMAND to its end, passing on SIGINT and SIGTERM; its exit code as a shell reports it. */
function runCommand(command: string, args: string[], extraEnv: Record<string, string>, onSpawn: (pid: number | undefined) => void): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit', env: { ...process.env, ...extraEnv } })
    onSpawn(child.pid)
    const forward = (signal: NodeJS.Signals) => child.kill(signal)
    process.on('SIGINT', forward)
    process.on('SIGTERM', forward)
    const done = (code: number) => {
      process.off('SIGINT', forward)
      process.off('SIGTERM', forward)
      resolve(code)
    }
    child.once('error', (error) => {
      console.error(`tapgate test: cannot run ${command}: ${error.message}`)
      done(127)
    })
    child.once('exit', (code, signal) => done(code ?? 128 + (signal ? os.constants.signals[signal] : 0)))
  })
}
