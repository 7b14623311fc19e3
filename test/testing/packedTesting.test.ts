/**
 * tapgate/testing as an app's developer uses it (issue 27): from the output of `npm pack` installed
 * into an empty folder, the README's two example suites (docs/examples/testing/) run under vitest and
 * plain `node --test`, whole, shuffled and one test at a time; a runner SIGKILLed mid-suite leaves
 * nothing behind; and `tapgate test -- COMMAND` of the installed bin.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { packedApp, userEnv } from '../helpers/packedApp.js'
import { collectOutput, processAlive, repoRoot, signal, stopChild } from '../helpers/processes.js'

const run = promisify(execFile)
const EXAMPLES = path.join(repoRoot, 'docs/examples/testing')
const VITEST_TESTS = [
  'a first tap is valid and its token can be claimed',
  'a replayed tap URL is refused, and the tap log says why',
  'a second chip taps on its own counter',
  'an OTP that expired is refused',
  'the reset left nothing of the other tests',
]

let app: string
/** The examples, copied into a folder of the app, as a user's test folder. */
let examples: string
const children: ChildProcess[] = []

beforeAll(async () => {
  app = (await packedApp()).dir
  examples = fs.mkdtempSync(path.join(app, 'examples-'))
  for (const name of fs.readdirSync(EXAMPLES)) fs.copyFileSync(path.join(EXAMPLES, name), path.join(examples, name))
}, 420_000)

afterAll(async () => {
  for (const child of children) await stopChild(child)
  if (examples) fs.rmSync(examples, { recursive: true, force: true })
})

/** Runs a command in the examples folder to its end; its exit code and output. */
async function inExamples(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; out: string }> {
  const child = spawn(command, args, { cwd: examples, env: userEnv({ NO_COLOR: '1', ...env }), stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  const output = collectOutput(child)
  const { code } = await output.exited
  // Colours stripped: vitest colours some words even without a TTY.
  return { code, out: `${output.stdout()}\n${output.stderr()}`.replace(/\x1b\[[0-9;]*m/g, '') }
}

const vitest = (args: string[]) => inExamples(process.execPath, [path.join(app, 'node_modules/vitest/vitest.mjs'), 'run', ...args])
const nodeTest = (args: string[]) => inExamples(process.execPath, ['--test', ...args])

describe('tapgate/testing from an npm pack install', () => {
  test('the package ships JavaScript and .d.ts; plain Node imports its entries; the bin runs the compiled CLI', { timeout: 120_000 }, async () => {
    const pkg = path.join(app, 'node_modules/tapgate')
    const files = fs.readdirSync(pkg, { recursive: true, encoding: 'utf8' })
    // TypeScript only as declarations (and the README's example suite, under docs/).
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.startsWith('docs/examples/'))).toEqual([])
    expect(files).toContain(path.join('dist', 'testing.js'))

    const { stdout } = await run(
      process.execPath,
      ['--input-type=module', '-e', "for (const m of ['tapgate', 'tapgate/testing', 'tapgate/client']) console.log(m, Object.keys(await import(m)).sort().join(','))"],
      { cwd: app, env: userEnv() },
    )
    expect(stdout).toMatch(/^tapgate .*startServer/m)
    expect(stdout).toMatch(/^tapgate\/testing .*startGateway/m)
    expect(stdout).toMatch(/^tapgate\/client .*createClient/m)

    // The types: the vitest example type-checks against the installed package (its .d.ts, no sources).
    fs.writeFileSync(
      path.join(examples, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2023', strict: true, noEmit: true, allowJs: true, skipLibCheck: true, types: [] }, files: ['claimToken.vitest.test.ts'] }),
    )
    const tsc = await inExamples(process.execPath, [path.join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', examples])
    expect(tsc.out.trim()).toBe('')
    expect(tsc.code).toBe(0)

    const version = (JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8')) as { version: string }).version
    expect((await run(path.join(app, 'node_modules/.bin/tapgate'), ['--version'], { cwd: app, env: userEnv() })).stdout.trim()).toBe(version)
    // The checkout's bin bundles the sources into node_modules/.cache; the installed one runs dist/.
    expect(fs.existsSync(path.join(pkg, 'node_modules/.cache/tapgate'))).toBe(false)
    expect(fs.existsSync(path.join(app, 'node_modules/.cache/tapgate'))).toBe(false)
  })

  test('the vitest example passes, in a shuffled order and each test alone', { timeout: 240_000 }, async () => {
    const whole = await vitest(['claimToken', '--sequence.shuffle'])
    expect(whole.out).toMatch(/Tests\s+5 passed/)
    expect(whole.code).toBe(0)
    for (const name of VITEST_TESTS) {
      const alone = await vitest(['claimToken', '-t', name])
      expect(alone.out, name).toMatch(/Tests\s+1 passed/)
      expect(alone.code, name).toBe(0)
    }
  })

  test('the node:test example passes under plain node --test, and each test alone', { timeout: 240_000 }, async () => {
    const whole = await nodeTest(['claimToken.node-test.mjs'])
    expect(whole.out).toMatch(/# pass 5\n# fail 0/)
    expect(whole.code).toBe(0)
    for (const name of VITEST_TESTS) {
      const alone = await nodeTest(['--test-name-pattern', `^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'claimToken.node-test.mjs'])
      expect(alone.out, name).toMatch(/# pass 1\n/)
      expect(alone.code, name).toBe(0)
    }
  })

  // The runner's own process is killed, not its group: its worker (vitest's fork, node:test's child
  // per file) outlives it, reparented, with the gateway listening, unless the reaper ends it.
  test.each([
    ['vitest', 'hang.vitest.test.ts', (file: string) => [path.join(app, 'node_modules/vitest/vitest.mjs'), 'run', file]],
    ['node --test', 'hang.node-test.mjs', (file: string) => ['--test', file]],
  ])('%s SIGKILLed mid-suite: within 5 s no gateway, anvil or temp dir of it is left', { timeout: 60_000 }, async (_runner, file, argv) => {
    fs.writeFileSync(
      path.join(examples, file),
      `import { startGateway } from 'tapgate/testing'
${file.includes('vitest') ? "import { test } from 'vitest'" : "import { test } from 'node:test'"}
test('hangs', async () => {
  const gw = await startGateway()
  console.log('READY ' + JSON.stringify({ pid: process.pid, dataDir: gw.dataDir, url: gw.url }))
  await new Promise((resolve) => setTimeout(resolve, 60_000))
}, 120_000)
`,
    )
    const runner = spawn(process.execPath, argv(file), { cwd: examples, env: userEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
    children.push(runner)
    const output = collectOutput(runner)
    await expect.poll(() => /READY (\{.*\})/.exec(output.stdout()), { timeout: 30_000 }).not.toBeNull()
    const ready = JSON.parse(/READY (\{.*\})/.exec(output.stdout())![1]!) as { pid: number; dataDir: string; url: string }
    const anvil = (JSON.parse(fs.readFileSync(path.join(ready.dataDir, 'chain/31337/anvil.pid'), 'utf8')) as { pid: number }).pid
    expect(ready.pid).not.toBe(runner.pid) // the gateway lives in the runner's worker
    expect((await fetch(`${ready.url}/health`)).status).toBe(200)

    signal(runner.pid!, 'SIGKILL')
    const killedAt = Date.now()
    const alive = processAlive
    // The data dir and the folder of this process's gateways it is in (tapgate-testing-<pid>-…).
    const processDir = path.dirname(ready.dataDir)
    expect(path.basename(processDir)).toMatch(new RegExp(`^tapgate-testing-${ready.pid}-`))
    await expect.poll(() => alive(ready.pid) || alive(anvil) || fs.existsSync(processDir), { timeout: 5_000, interval: 100 }).toBe(false)
    expect(Date.now() - killedAt).toBeLessThan(5_000)
    await expect(fetch(`${ready.url}/health`)).rejects.toThrow()
  })

  test('`tapgate test -- node -e …` of the installed bin: the command\'s exit code, and nothing left', { timeout: 60_000 }, async () => {
    const script = `const r = await fetch(process.env.TAPGATE_URL + '/health'); console.log(JSON.stringify({ status: r.status, dataDir: process.env.TAPGATE_DATA_DIR, key: process.env.TAPGATE_API_KEY.slice(0, 3) })); process.exit(3)`
    const result = await inExamples(path.join(app, 'node_modules/.bin/tapgate'), ['test', '--', process.execPath, '--input-type=module', '-e', script])
    expect(result.code).toBe(3)
    const seen = JSON.parse(/\{"status".*\}/.exec(result.out)![0]) as { status: number; dataDir: string; key: string }
    expect(seen).toMatchObject({ status: 200, key: 'tg_' })
    expect(fs.existsSync(seen.dataDir)).toBe(false)
  })
})
