/*
 * `engines`, the lockfile and the README must agree: every package the lockfile installs runs on
 * the oldest Node that package.json's `engines` admits (npm only warns about a mismatch, and a
 * user on that Node would meet it at run time), and the README names the same floor.
 */
import fs from 'node:fs'
import path from 'node:path'
import semver from 'semver'
import { expect, test } from 'vitest'
import { repoRoot } from '../helpers/processes.js'

type Lockfile = { packages: Record<string, { version?: string; engines?: { node?: string } | string[]; optional?: boolean; dev?: boolean }> }
const read = (file: string) => fs.readFileSync(path.join(repoRoot, file), 'utf8')
const pkg = JSON.parse(read('package.json')) as { engines: { node: string } }
const lock = JSON.parse(read('package-lock.json')) as Lockfile
const floor = semver.minVersion(pkg.engines.node)

test('every locked package runs on the oldest Node that `engines` admits', () => {
  expect(floor).not.toBeNull()
  const refused = Object.entries(lock.packages)
    .filter(([name]) => name !== '')
    .flatMap(([name, entry]) => {
      const range = entry.engines && !Array.isArray(entry.engines) ? entry.engines.node : undefined
      return range && !semver.satisfies(floor!, range) ? [`${name.replace(/^.*node_modules\//, '')}@${entry.version} needs node ${range}`] : []
    })
  expect(refused).toEqual([])
})

test('the README states the same Node floor as `engines`, and the LTS to install', () => {
  const readme = read('README.md')
  const [major, minor] = [floor!.major, floor!.minor]
  expect(readme).toContain(`Node ${major}.${minor}+`)
  expect(readme).toMatch(/install Node 24 LTS/i)
})
