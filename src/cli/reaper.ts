import { spawn } from 'node:child_process'

/**
 * The watcher that `tapgate test` and tapgate/testing leave behind them: a small detached process
 * that, once any of `owners` is gone however it ended (SIGKILL included, when no cleanup of its own
 * can run), kills `pids`, then the embedded chain's anvil (found by its pid file in `dataDir`, in its
 * own process group), and removes `dataDir` when `removeDir`. The pattern of Testcontainers' reaper.
 * `stop()` ends the watcher after a normal cleanup.
 *
 * Why several owners: a test gateway lives in a runner's worker process (vitest's forks, node:test's
 * per-file children), and a worker outlives its runner's SIGKILL, reparented and still listening.
 * tapgate/testing watches the worker and its runner, and kills the orphaned worker first, before it
 * could restart the anvil it sees die.
 */
export function startReaper(p: { owners: number[]; pids: number[]; dataDir: string; removeDir: boolean }): { stop(): void } {
  const child = spawn(process.execPath, ['-e', REAPER, JSON.stringify(p)], { detached: true, stdio: 'ignore' })
  child.unref()
  return { stop: () => void child.kill('SIGTERM') }
}

// Plain JavaScript run by `node -e`: it must not load the gateway's modules to watch one pid.
const REAPER = `
const fs = require('node:fs'), path = require('node:path')
const { owners, pids, dataDir, removeDir } = JSON.parse(process.argv[1])
const alive = (pid) => { try { process.kill(pid, 0); return true } catch (error) { return error.code === 'EPERM' } }
const kill = (pid) => { try { process.kill(pid, 'SIGKILL') } catch {} }
const anvilPids = (dir) => {
  let entries = []
  try { entries = fs.readdirSync(dir, { withFileTypes: true }) } catch { return [] }
  return entries.flatMap((e) => {
    const file = path.join(dir, e.name)
    if (e.isDirectory()) return anvilPids(file)
    if (e.name !== 'anvil.pid') return []
    try { return [JSON.parse(fs.readFileSync(file, 'utf8')).pid] } catch { return [] }
  })
}
const timer = setInterval(() => {
  if (owners.every(alive)) return
  clearInterval(timer)
  for (const pid of pids) kill(pid)
  // anvil runs in a process group of its own (the gateway spawns it detached).
  for (const pid of anvilPids(dataDir)) { kill(-pid); kill(pid) }
  if (removeDir) fs.rmSync(dataDir, { recursive: true, force: true })
}, 200)
`
