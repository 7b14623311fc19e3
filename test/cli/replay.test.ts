import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeAll, describe, expect, test } from 'vitest'
import { testDir, testStore } from '../helpers/gateway.js'
import { cliPath, collectOutput, repoRoot, startServe, stopChild, type Server } from '../helpers/processes.js'

/*
 * The README's "Replaying taps in your CI", run as written: its shell blocks go through bash from
 * the checkout's root, with `npx tapgate` as the bin (`node src/cli/tapgate.js`) and the gateway's
 * URL (a real `tapgate serve` on a fresh data dir, port 0) in place of http://127.0.0.1:8787.
 */

const README_URL = 'http://127.0.0.1:8787'
const FIXTURE = 'fixtures/taps/valid-ntag424.jsonl'

/** The section's text, up to the next `## ` heading. */
function readmeSection(title: string): string {
  const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8')
  const start = readme.indexOf(`\n## ${title}\n`)
  if (start < 0) throw new Error(`README.md has no section "## ${title}"`)
  const end = readme.indexOf('\n## ', start + 1)
  return readme.slice(start, end < 0 ? undefined : end)
}

const section = readmeSection('Replaying taps in your CI')
const shellBlocks = [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!)
const [gatewayBlock, replayBlock] = shellBlocks as [string, string]
const loopLine = /`(for f in fixtures\/taps\/\*\.jsonl; [^`]+)`/.exec(section)?.[1]

/** A README line as the test runs it: the bin from this checkout, the test gateway's URL. */
const asRun = (text: string, url: string) => text.replaceAll('npx tapgate', `node ${path.relative(repoRoot, cliPath)}`).replaceAll(README_URL, url)

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** Everything but this machine's tapgate settings, so the README's exports decide. */
const baseEnv = () => Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(PORT|HOST|TAPGATE_)/.test(name)))

type Run = { code: number | null; stdout: string; stderr: string }

/** Runs shell text with bash -e from the checkout's root (as the README's reader does). */
async function bash(script: string, env: NodeJS.ProcessEnv): Promise<Run> {
  const child: ChildProcess = spawn('bash', ['-e', '-c', script], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] })
  cleanups.push(() => stopChild(child))
  const output = collectOutput(child)
  const { code } = await output.exited
  return { code, stdout: output.stdout(), stderr: output.stderr() }
}

/**
 * The gateway block, line by line: the fresh data dir is the test's; the import and the health
 * check run as written; the serve line starts a real `tapgate serve` with its environment on
 * port 0. Any other line fails the test, so the block cannot grow a step the test skips.
 */
async function startReadmeGateway(): Promise<{ env: NodeJS.ProcessEnv; server: Server; dataDir: string }> {
  const dataDir = testDir()
  const env: NodeJS.ProcessEnv = { ...baseEnv(), TAPGATE_DATA_DIR: dataDir }
  let server: Server | undefined
  for (const line of gatewayBlock.split('\n').map((l) => l.replace(/\s+#.*$/, '').trim())) {
    if (line === '') continue
    if (line === 'export TAPGATE_DATA_DIR="$(mktemp -d)"') continue
    const serve = /^((?:[A-Z_]+=\S+ )*)npx tapgate serve &$/.exec(line)
    if (serve) {
      const serveEnv = Object.fromEntries(serve[1]!.trim().split(/\s+/).filter(Boolean).map((pair) => pair.split('=') as [string, string]))
      server = await startServe({ cwd: repoRoot, env: { ...env, ...serveEnv, PORT: '0' }, track: (child) => cleanups.push(() => stopChild(child)) })
    } else if (/^npx tapgate import /.test(line) || /^curl /.test(line)) {
      if (line.startsWith('curl') && !server) throw new Error('the README checks the health before it starts the gateway')
      const run = await bash(asRun(line, server?.url ?? README_URL), env)
      expect(run, line).toMatchObject({ code: 0 })
    } else throw new Error(`the README's gateway block has a line this test does not run: ${line}`)
  }
  if (!server) throw new Error("the README's gateway block starts no gateway")
  return { env, server, dataDir }
}

beforeAll(() => {
  expect(shellBlocks).toHaveLength(2)
  expect(replayBlock).toContain(`--replay ${FIXTURE} --gateway ${README_URL}`)
  expect(loopLine).toBeDefined()
})

describe('README "Replaying taps in your CI", run as written through the bin', () => {
  test('the recipe exits 0; again against the same gateway, 0 again; without --rewind-counters a rerun is counter_replay throughout and exits 1 with a hint; a doctored fixture line exits 1 naming the line', async () => {
    const { env, server } = await startReadmeGateway()
    const replay = (script = replayBlock) => bash(asRun(script, server.url), env)

    const first = await replay()
    expect(first.stderr).toBe('')
    expect(first).toMatchObject({ code: 0 })
    expect(first.stdout).toContain(`replay ${FIXTURE}: 5 taps, 5 matched, 0 differed\n`)

    // The CI job reruns: the same commands, the same gateway.
    const again = await replay()
    expect(again).toMatchObject({ code: 0 })
    expect(again.stdout).toContain('rewind: 04A1B2C3D4E501 44 → 41, 04A1B2C3D4E502 1 → 0, 04A1B2C3D4E503 7 → 6')
    expect(again.stdout).toContain(`replay ${FIXTURE}: 5 taps, 5 matched, 0 differed\n`)

    // What a rerun was before: the gateway has seen every counter.
    const unrewound = await replay(replayBlock.replace(' --rewind-counters', ''))
    expect(unrewound).toMatchObject({ code: 1 })
    expect(unrewound.stdout).toContain(`replay ${FIXTURE}: 5 taps, 0 matched, 5 differed\n`)
    expect(unrewound.stdout).toContain(
      '  line 2: expected accepted 04A1B2C3D4E501 counter 42 (aes); got refused counter_replay: counter 42 is not above the last accepted counter 44\n',
    )
    expect(unrewound.stdout).toContain('hint: this gateway has seen these counters already')

    // One tap's recorded verdict doctored: that tap differs, the others match.
    const doctored = path.join(testDir(), 'doctored.jsonl')
    const lines = fs.readFileSync(path.join(repoRoot, FIXTURE), 'utf8').split('\n')
    expect(lines[2]).toContain('"counter":43,')
    lines[2] = lines[2]!.replace('"counter":43,', '"counter":45,')
    fs.writeFileSync(doctored, lines.join('\n'))
    const differs = await replay(replayBlock.replace(FIXTURE, doctored))
    expect(differs).toMatchObject({ code: 1 })
    expect(differs.stdout).toContain(`replay ${doctored}: 5 taps, 4 matched, 1 differed\n`)
    // The README shows this very line as its example.
    const shown = '  line 3: expected accepted 04A1B2C3D4E501 counter 45 (aes); got accepted 04A1B2C3D4E501 counter 43 (aes)\n'
    expect(differs.stdout).toContain(shown)
    expect(section).toContain(shown)
  }, 120_000)

  test("every committed fixture, in turn against one gateway (the README's loop): exit 0", async () => {
    const { env, server } = await startReadmeGateway()
    const tokenLine = replayBlock.split('\n')[0]!
    expect(tokenLine).toMatch(/^export TAPGATE_STATION_TOKEN=/)
    const run = await bash(asRun(`${tokenLine}\n${loopLine!}`, server.url), env)
    expect(run.stderr).toBe('')
    expect(run).toMatchObject({ code: 0 })
    const summaries = run.stdout.split('\n').filter((line) => line.startsWith('replay '))
    expect(summaries).toEqual([
      'replay fixtures/taps/card-pulled.jsonl: 2 taps, 2 matched, 0 differed',
      'replay fixtures/taps/copied-url.jsonl: 3 taps, 3 matched, 0 differed',
      'replay fixtures/taps/ntag21x.jsonl: 3 taps, 3 matched, 0 differed',
      'replay fixtures/taps/replayed-tap.jsonl: 3 taps, 3 matched, 0 differed',
      'replay fixtures/taps/unknown-chip.jsonl: 1 taps, 1 matched, 0 differed',
      'replay fixtures/taps/valid-ntag424.jsonl: 5 taps, 5 matched, 0 differed',
    ])
  }, 120_000)
})

describe('tapgate station --replay: output', () => {
  test('the console shows ref ids shortened; --json prints one line per tap with the whole verdict, expected and match, then a summary; --no-check exits 0 whatever the verdicts', async () => {
    const { env, server, dataDir } = await startReadmeGateway()
    const tokenLine = replayBlock.split('\n')[0]!
    const station = (flags: string) =>
      bash(asRun(`${tokenLine}\nnpx tapgate station --replay ${FIXTURE} --gateway ${README_URL} ${flags}`, server.url), env)

    const human = await station('--rewind-counters')
    expect(human).toMatchObject({ code: 0 })
    const store = testStore(dataDir)
    const refIds = (await store.tapLog
      .recent(5))
      .map((row) => row.refId)
      .filter((id): id is string => id !== null)
    expect(refIds).toHaveLength(5)
    for (const refId of refIds) {
      expect(human.stdout).not.toContain(refId)
      expect(human.stdout).toContain(` ref ${refId.slice(0, 4)}…\n`)
    }

    const json = await station('--rewind-counters --json')
    expect(json).toMatchObject({ code: 0 })
    // The log goes to stderr; stdout is JSON only.
    expect(json.stderr).toContain('Virtual NTAG 424 reader: accepted 04A1B2C3D4E501 counter 42 ref ')
    const lines = json.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(lines).toHaveLength(6)
    expect(lines[0]).toEqual({
      type: 'tap',
      line: 2,
      readerName: 'Virtual NTAG 424 reader',
      rfUid: '04A1B2C3D4E501',
      verdict: { accepted: true, refId: expect.stringMatching(/^[\w-]{21}$/), uid: '04A1B2C3D4E501', counter: 42, mode: 'aes' },
      expected: { verdict: { accepted: true, uid: '04A1B2C3D4E501', counter: 42, mode: 'aes' } },
      match: true,
    })
    expect(lines.slice(0, 5).map((l) => l.line)).toEqual([2, 3, 4, 5, 6])
    // The whole ref id is a real, unqueried ref on the gateway.
    const refId = (lines[0]!.verdict as { refId: string }).refId
    expect(await store.refs.get(refId)).toMatchObject({ chipUid: '04A1B2C3D4E501', source: 'station' })
    expect(lines[5]).toEqual({ type: 'summary', fixture: FIXTURE, checked: true, taps: 5, matched: 5, differed: 0, differences: [] })

    // Not rewound, not checked: every tap refused, exit 0; the JSON lines say so without an expectation.
    const unchecked = await station('--no-check --json')
    expect(unchecked).toMatchObject({ code: 0 })
    const fed = unchecked.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(fed[0]).toMatchObject({ type: 'tap', line: 2, verdict: { accepted: false, reason: 'counter_replay' } })
    expect(fed[0]).not.toHaveProperty('match')
    expect(fed[5]).toEqual({ type: 'summary', fixture: FIXTURE, checked: false, taps: 5, matched: 0, differed: 5, differences: expect.any(Array) })
  }, 120_000)

  test('--rewind-counters, --json and --no-check need a replay to a gateway (exit 2); --rewind-counters with a token of another data dir exits 1 before any tap', async () => {
    const dir = testDir()
    const env = { ...baseEnv(), TAPGATE_DATA_DIR: dir }
    for (const flag of ['--json', '--no-check', '--rewind-counters']) {
      const run = await bash(`node ${cliPath} station --replay ${FIXTURE} ${flag}`, env)
      expect(run, flag).toMatchObject({ code: 2 })
      expect(run.stderr).toContain(`${flag} is for a replay to a gateway (--replay FILE --gateway URL --token T)`)
    }
    const elsewhere = await bash(`node ${cliPath} station --replay ${FIXTURE} --gateway http://127.0.0.1:9 --token tgs_unknown --rewind-counters`, env)
    expect(elsewhere).toMatchObject({ code: 1 })
    expect(elsewhere.stderr).toContain('--rewind-counters: the station token is not an active station of this data dir')
    expect(elsewhere.stdout).not.toContain('ready')
  }, 60_000)
})
