/**
 * Issue 27 (part): `tapgate test -- COMMAND` runs an app's tests against a gateway of their own, and
 * `serve --ready-file` tells a script that starts the gateway in the background where it is. Through the
 * bin, as a developer's CI runs them.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, expect, test } from 'vitest'
import { makeTempDir } from '../helpers/gateway.js'
import { cliPath, collectOutput, exited, processAlive, startServe, stopChild } from '../helpers/processes.js'
import { until } from '../helpers/until.js'

const children: ChildProcess[] = []
const dirs: string[] = []
afterAll(async () => {
  for (const child of children) await stopChild(child)
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

function tapgate(args: string[]) {
  // No in-process station in any gateway a test starts; `tapgate test` turns it off itself, which the
  // env here would hide: it is left out so the test sees tapgate test's own choice.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'TAPGATE_STATION'))
  const child = spawn(process.execPath, [cliPath, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  return { child, ...collectOutput(child) }
}

const alive = processAlive

/**
 * What the command run by `tapgate test` sees, written to argv[1]: the gateway's answers with the
 * variables it was given, and the PIDs behind it (its own, and the embedded chain's anvil from the
 * data dir's pid file). With argv[2] "wait" it then waits to be stopped; else it exits with code 7.
 */
const COMMAND = `
const fs = require('node:fs'), path = require('node:path')
const { TAPGATE_URL: url, TAPGATE_API_KEY: key, TAPGATE_DATA_DIR: dir } = process.env
const pidFile = (d) => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => e.isDirectory() ? pidFile(path.join(d, e.name)) : e.name === 'anvil.pid' ? [path.join(d, e.name)] : [])
;(async () => {
  const health = (await fetch(url + '/health')).status
  const groups = await (await fetch(url + '/chip-groups', { headers: { 'x-service-api-key': key } })).json()
  const anvilPid = JSON.parse(fs.readFileSync(pidFile(dir)[0], 'utf8')).pid
  fs.writeFileSync(process.argv[1], JSON.stringify({ url, health, groups: groups.length, dir, dirExists: fs.existsSync(dir), anvilPid, pid: process.pid }))
  if (process.argv[2] === 'wait') setInterval(() => {}, 1000)
  else process.exit(7)
})()
`

type Seen = { url: string; health: number; groups: number; dir: string; dirExists: boolean; anvilPid: number; pid: number }

/** `tapgate test` running COMMAND; with `wait`, once the command has seen the gateway (else at once, seen null). */
async function tapgateTest(mode: 'exit' | 'wait') {
  const out = path.join(makeTempDir(), 'seen.json')
  dirs.push(path.dirname(out))
  const run = tapgate(['test', '--', process.execPath, '-e', COMMAND, out, ...(mode === 'wait' ? ['wait'] : [])])
  const seen = () => JSON.parse(fs.readFileSync(out, 'utf8')) as Seen
  if (mode === 'exit') return { run, seen }
  await until('the command to have seen the gateway', () => (fs.existsSync(out) ? true : undefined))
  return { run, seen }
}

test("tapgate test -- COMMAND: the command gets the gateway's URL, the demo key and the data dir; tapgate exits with its code and leaves nothing", { timeout: 60_000 }, async () => {
  const { run, seen: read } = await tapgateTest('exit')
  expect((await run.exited).code, run.stderr()).toBe(7)
  const seen = read()
  expect(seen).toMatchObject({ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/), health: 200, groups: 2, dirExists: true })
  // The gateway's log and its one start line went to stderr: the command's output is its own.
  expect(run.stdout()).toBe('')
  expect(run.stderr()).toContain(`tapgate listening on ${seen.url}`)
  expect(run.stderr()).not.toContain('tg_')
  expect(fs.existsSync(seen.dir)).toBe(false)
  expect(alive(seen.anvilPid)).toBe(false)
  await expect(fetch(`${seen.url}/health`)).rejects.toThrow()
})

test('SIGTERM to tapgate test reaches the command; then the gateway, its chain and its data dir are gone', { timeout: 60_000 }, async () => {
  const { run, seen: read } = await tapgateTest('wait')
  const seen = read()
  run.child.kill('SIGTERM')
  // Ended by SIGTERM: 128 + 15, as a shell reports it.
  expect((await run.exited).code).toBe(143)
  expect(alive(seen.pid)).toBe(false)
  expect(alive(seen.anvilPid)).toBe(false)
  expect(fs.existsSync(seen.dir)).toBe(false)
})

test('SIGKILL of tapgate test itself: within 5 s its reaper has stopped the command and the chain and removed the data dir', { timeout: 60_000 }, async () => {
  const { run, seen: read } = await tapgateTest('wait')
  const seen = read()
  run.child.kill('SIGKILL')
  // 'exit', not 'close': the command, while it lives, holds the stdout that tapgate passed on to it.
  expect(await exited(run.child, 5_000)).toBe(true)
  // The bound; the reaper looks every 200 ms.
  await until('the command, anvil and the data dir gone', () => (!alive(seen.pid) && !alive(seen.anvilPid) && !fs.existsSync(seen.dir) ? true : undefined), 5_000)
})

test('no command is a usage error (2); a command that cannot start is 127, and the data dir is still removed', { timeout: 60_000 }, async () => {
  const none = tapgate(['test'])
  expect((await none.exited).code).toBe(2)
  expect(none.stderr()).toContain('tapgate test -- npm test')
  const missing = tapgate(['test', '--', 'no-such-command-for-tapgate'])
  expect((await missing.exited).code).toBe(127)
  expect(missing.stderr()).toContain('cannot run no-such-command-for-tapgate')
  const dir = /\(data: ([^)]+)\)/.exec(missing.stderr())![1]!
  expect(fs.existsSync(dir)).toBe(false)
})

test('serve --ready-file: one JSON line (the URL, the demo key) once the gateway answers, readable by its owner only', { timeout: 60_000 }, async () => {
  const dataDir = makeTempDir()
  dirs.push(dataDir)
  const readyFile = path.join(dataDir, 'ready.json')
  const server = await startServe({
    cwd: dataDir,
    env: { TAPGATE_DATA_DIR: path.join(dataDir, 'data'), PORT: '0', TAPGATE_LOG_LEVEL: 'warn' },
    command: [process.execPath, cliPath, 'serve', '--ready-file', readyFile],
    track: (child) => children.push(child),
  })
  const text = await until('the ready file', async () => (fs.existsSync(readyFile) ? fs.readFileSync(readyFile, 'utf8') : undefined))
  expect(text.endsWith('\n') && text.trim().split('\n')).toHaveLength(1)
  const ready = JSON.parse(text) as { url: string; apiKey: string }
  expect(ready).toEqual({ url: server.url, apiKey: expect.stringMatching(/^tg_/) })
  expect(fs.statSync(readyFile).mode & 0o777).toBe(0o600)
  expect((await fetch(`${ready.url}/chip-groups`, { headers: { 'x-service-api-key': ready.apiKey } })).status).toBe(200)
})
