/*
 * npm 11.16+ warns about every dependency whose install script `allowScripts` does not cover, and
 * npm 12 skips those scripts: better-sqlite3 would not build and tapgate would not start. npm is
 * asked itself (`npm install-scripts ls` / `prune --dry-run`): a copy of its matching rule here once
 * passed while npm listed all three entries as not covered (issue 24: pinned `name@version` entries
 * match only when the lockfile records the registry URL, and ours does not).
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { expect, test } from 'vitest'
import { repoRoot } from '../helpers/processes.js'

type Pending = { allowScripts: { name: string; changes: { key: string; change: string }[] }[] }
type Pruned = { allowScripts: { removed: { key: string; reason: string }[]; dryRun: boolean } }

const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> }
// `npm test` exports its own settings as npm_config_*; the child npm reads the project's and the user's, as an install would.
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')))

/** `npm install-scripts <args> --json` in `cwd`, its JSON answer. */
async function npmJson<T>(cwd: string, ...args: string[]): Promise<T> {
  const { stdout } = await promisify(execFile)('npm', ['install-scripts', ...args, '--json'], { cwd, env, timeout: 60_000 })
  return JSON.parse(stdout) as T
}

test('npm install-scripts ls: nothing left to review in this project', async () => {
  expect((await npmJson<Pending>(repoRoot, 'ls')).allowScripts).toEqual([])
})

test("the entries are exactly better-sqlite3, esbuild and nfc-pcsc's @pokusew/pcsclite, each allowed (true), not denied", () => {
  expect(Object.entries(pkg.allowScripts ?? {}).sort()).toEqual([
    ['@pokusew/pcsclite', true],
    ['better-sqlite3', true],
    ['esbuild', true],
  ])
})

// prune drops an entry that matches no installed package ('not-installed') or only packages without an
// install script ('no-scripts'): none dropped, so each entry covers an installed package npm would run a script of.
test('npm install-scripts prune --dry-run: every entry matches an installed package with an install script', async () => {
  const pruned = await npmJson<Pruned>(repoRoot, 'prune', '--dry-run')
  expect(pruned.allowScripts.dryRun).toBe(true)
  expect(pruned.allowScripts.removed).toEqual([])
})
