/*
 * npm 11.16+ prints a warning for every dependency whose install script `allowScripts` does not
 * cover, and npm 12 skips those scripts: better-sqlite3 would not build and tapgate would not
 * start. Every package in the lockfile with an install script must be allowed or denied there, by
 * name or by the exact locked version; an entry that matches nothing in the lockfile is stale.
 */
import fs from 'node:fs'
import path from 'node:path'
import { expect, test } from 'vitest'
import { repoRoot } from '../helpers/processes.js'

type Lockfile = { packages: Record<string, { version?: string; hasInstallScript?: boolean }> }
const read = (file: string) => JSON.parse(fs.readFileSync(path.join(repoRoot, file), 'utf8')) as unknown
const pkg = read('package.json') as { allowScripts?: Record<string, boolean> }
const lock = read('package-lock.json') as Lockfile

const withScripts = Object.entries(lock.packages)
  .filter(([where, entry]) => where !== '' && entry.hasInstallScript)
  .map(([where, entry]) => ({ name: where.replace(/^.*node_modules\//, ''), version: entry.version! }))
const entries = Object.keys(pkg.allowScripts ?? {})
const covers = (entry: string, p: { name: string; version: string }) => entry === p.name || entry === `${p.name}@${p.version}`

test('every locked package with an install script is named in allowScripts', () => {
  expect(withScripts.length).toBeGreaterThan(0)
  const uncovered = withScripts.filter((p) => !entries.some((entry) => covers(entry, p))).map((p) => `${p.name}@${p.version}`)
  expect(uncovered).toEqual([])
})

test('the native builds tapgate needs are allowed: better-sqlite3, esbuild and nfc-pcsc\'s @pokusew/pcsclite', () => {
  for (const name of ['better-sqlite3', 'esbuild', '@pokusew/pcsclite']) {
    const locked = withScripts.find((p) => p.name === name)
    expect(locked, name).toBeDefined()
    const entry = entries.find((e) => covers(e, locked!))
    expect(pkg.allowScripts![entry!], name).toBe(true)
  }
})

test('no allowScripts entry is stale (it names a version, or a package, the lockfile does not install with a script)', () => {
  const stale = entries.filter((entry) => !withScripts.some((p) => covers(entry, p)))
  expect(stale).toEqual([])
})
