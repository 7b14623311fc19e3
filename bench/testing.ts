/**
 * tapgate as an app's test dependency, measured as a user gets it (issue 27):
 *
 *   npm run bench:testing            BENCH_ROUNDS=15 npm run bench:testing
 *
 * 1. `npm pack` of this checkout installed into an empty app (--prefer-offline: npm's cache, as after
 *    a first install; the native builds run as on a user's machine).
 * 2. In that app, plain Node importing the installed `tapgate/testing`: startGateway() medians with
 *    the embedded chain and without a chain; reset() median after a tap; 100 tap → ref round trips
 *    (chip.tap(), then the ref's first query over HTTP).
 * 3. The installed bin against `node -e 0`, alternating within each round: `tapgate --help` and
 *    `tapgate team list` (opens the database).
 * Targets (../shared/notes/targets.md): startGateway ≤ 0.5 s / ≤ 0.15 s, reset ≤ 50 ms, bin ≤ 3×.
 */
import { execFile, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createCleanups } from './cleanups.js'
import { positiveEnv } from './env.js'

const run = promisify(execFile)
const ROUNDS = positiveEnv('BENCH_ROUNDS', 9)
const root = fileURLToPath(new URL('..', import.meta.url))
const { onCleanup, cleanup, abort } = createCleanups('bench/testing.ts')
process.once('SIGINT', () => void abort('interrupted', 130))

const userEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_|^INIT_CWD$/i.test(name)))
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const ms = (x: number) => `${x.toFixed(1)} ms`

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tapgate-bench-testing-'))
onCleanup('remove the bench dir', () => fs.rmSync(work, { recursive: true, force: true }))

try {
  const { stdout } = await run('npm', ['pack', '--silent', '--pack-destination', work], { cwd: root, env: userEnv })
  const tarball = path.join(work, stdout.trim().split('\n').at(-1)!)
  const app = path.join(work, 'app')
  fs.mkdirSync(app)
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'bench-app', private: true, type: 'module' }))
  const started = performance.now()
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], { cwd: app, env: userEnv, timeout: 600_000 })
  const installS = (performance.now() - started) / 1000
  const tarballMb = fs.statSync(tarball).size / 1e6
  const packages = fs.readdirSync(path.join(app, 'node_modules')).filter((n) => !n.startsWith('.')).length
  console.log(`packed install into an empty app: ${installS.toFixed(1)} s (${tarballMb.toFixed(1)} MB tarball, ${packages} top-level packages)`)

  // What a test does, in the installed app, with no loader.
  fs.writeFileSync(
    path.join(app, 'measure.mjs'),
    `import { startGateway } from 'tapgate/testing'
const rounds = ${ROUNDS}
const out = { embedded: [], noChain: [], reset: [], trips: [] }
for (let i = 0; i < rounds; i++) {
  for (const [key, options] of [['embedded', {}], ['noChain', { chain: false }]]) {
    const t = performance.now()
    const gw = await startGateway(options)
    out[key].push(performance.now() - t)
    await gw.stop()
  }
}
const gw = await startGateway()
for (let i = 0; i < rounds * 3; i++) {
  const chip = await gw.chip({ token: true })
  await chip.tap()
  const t = performance.now()
  await gw.reset()
  out.reset.push(performance.now() - t)
}
const chip = await gw.chip({ token: true })
const all = performance.now()
for (let i = 0; i < 100; i++) {
  const t = performance.now()
  const { refId } = await chip.tap()
  const ref = await (await fetch(gw.url + '/refs/' + refId)).json()
  if (!ref.isValidRef) throw new Error('tap ' + i + ': the ref is not valid')
  out.trips.push(performance.now() - t)
}
out.tripsTotal = performance.now() - all
await gw.stop()
console.log(JSON.stringify(out))
`,
  )
  const measured = JSON.parse(execFileSync(process.execPath, ['measure.mjs'], { cwd: app, env: userEnv, encoding: 'utf8' }).trim().split('\n').at(-1)!) as Record<'embedded' | 'noChain' | 'reset' | 'trips', number[]> & { tripsTotal: number }
  console.log(`startGateway() median, embedded chain: ${ms(median(measured.embedded))} (target ≤ 500 ms)`)
  console.log(`startGateway({ chain: false }) median: ${ms(median(measured.noChain))} (target ≤ 150 ms)`)
  console.log(`reset() median after a chip and a tap: ${ms(median(measured.reset))} (target ≤ 50 ms; ${measured.reset.length} resets)`)
  console.log(`100 tap → ref round trips: ${ms(measured.tripsTotal)} in all, median ${ms(median(measured.trips))}`)

  const bin = path.join(app, 'node_modules/.bin/tapgate')
  const dataDir = path.join(work, 'data')
  execFileSync(bin, ['team', 'list'], { cwd: app, env: { ...userEnv, TAPGATE_DATA_DIR: dataDir } })
  const time = (file: string, args: string[]) => {
    const t = performance.now()
    execFileSync(file, args, { cwd: app, env: { ...userEnv, TAPGATE_DATA_DIR: dataDir }, stdio: 'ignore' })
    return performance.now() - t
  }
  const base: number[] = []
  const help: number[] = []
  const teams: number[] = []
  for (let i = 0; i < ROUNDS; i++) {
    base.push(time(process.execPath, ['-e', '0']))
    help.push(time(process.execPath, [bin, '--help']))
    teams.push(time(process.execPath, [bin, 'team', 'list']))
  }
  const b = median(base)
  console.log(`node -e 0: ${ms(b)}; installed tapgate --help: ${ms(median(help))} (${(median(help) / b).toFixed(2)}×); tapgate team list: ${ms(median(teams))} (${(median(teams) / b).toFixed(2)}×) (target ≤ 3×)`)
} finally {
  await cleanup()
}
