/*
 * docs/architecture.md stays true where a test can tell (issue 24: it named a db/store.ts that had
 * become the engine picker, a groupCommit.ts that never existed, check-ins "in kiosk/", and "nothing
 * imports upwards" beside seven upward arrows). Each test reads the page as written, so a file moved
 * or a folder added without a line here fails until the page says so.
 */
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { expect, test } from 'vitest'
import { repoRoot } from '../helpers/processes.js'

const page = fs.readFileSync(path.join(repoRoot, 'docs/architecture.md'), 'utf8')
const codeBlocks = [...page.matchAll(/```\n([\s\S]*?)```/g)].map((m) => m[1]!)
const srcFolders = fs
  .readdirSync(path.join(repoRoot, 'src'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort()

test('every path of the repository the page names exists, and every file it names by its folder in src/', () => {
  const named = new Set<string>()
  for (const m of page.matchAll(/(?<![\w/.-])((?:src|station|test|bench|contracts|fixtures|docs)\/[\w./-]*)/g)) named.add(m[1]!.replace(/\.+$/, ''))
  // `feed/txProgress.ts`, `taps/counterRules.ts`: a file named from its folder of src/.
  for (const m of page.matchAll(/(?<![\w/.-])([a-z]+\/[\w./-]*\.ts)\b/g)) if (srcFolders.includes(m[1]!.split('/')[0]!)) named.add(`src/${m[1]}`)
  expect(named.size).toBeGreaterThan(40)
  expect([...named].filter((p) => !fs.existsSync(path.join(repoRoot, p)))).toEqual([])
})

test("the tree's folders of src/ are src/'s folders", () => {
  const tree = codeBlocks[0]!
  const lines = tree.split('\n')
  const from = lines.indexOf('src/')
  const to = lines.findIndex((line, i) => i > from && /^\S/.test(line))
  const listed: string[] = []
  for (const line of lines.slice(from + 1, to)) {
    // A folder line: two spaces, then one or more `name/` before the description's wide gap.
    const lead = /^ {2}(\S.*?)(?: {2,}|$)/.exec(line)?.[1]
    if (lead) listed.push(...lead.split(' ').filter((token) => /^[a-z]+\/$/.test(token)).map((token) => token.slice(0, -1)))
  }
  expect(listed.sort()).toEqual(srcFolders)
})

test('the layer picture places every folder of src/', () => {
  const layers = codeBlocks.find((block) => block.includes(' domain '))!
  expect(srcFolders.filter((folder) => !new RegExp(`(?<![\\w])${folder}/`).test(layers))).toEqual([])
})

test('the page names every rule of .dependency-cruiser.cjs', () => {
  const config = createRequire(import.meta.url)(path.join(repoRoot, '.dependency-cruiser.cjs')) as { forbidden: Array<{ name: string }> }
  const names = config.forbidden.map((rule) => rule.name)
  expect(names.length).toBeGreaterThan(10)
  expect(names.filter((name) => !page.includes(`\`${name}\``))).toEqual([])
})
