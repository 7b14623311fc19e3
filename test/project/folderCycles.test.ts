/*
 * Folders that import each other: dependency-cruiser (npm run lint:deps) forbids cycles between
 * modules, but its folder-scope cycle rule also counts src/'s root files (config.ts, errors.ts, app.ts)
 * as one folder, which closes a cycle through every folder. Here the folders of src/ and station/ are
 * the nodes and root files are left out, and there is no cycle among them (issue 24 paid off the last
 * four known ones: docs/architecture.md, "Layers"). A new one fails, naming its folders.
 */
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { expect, test } from 'vitest'
import { repoRoot } from '../helpers/processes.js'

type Cruise = { modules: Array<{ source: string; dependencies: Array<{ resolved: string }> }> }

const folderOf = (file: string) => /^((?:src|station)\/[^/]+)\//.exec(file)?.[1]

/** Strongly connected groups of two or more folders (Tarjan), each sorted, sorted by their first. */
function cycles(edges: Map<string, Set<string>>): string[][] {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const found: string[][] = []
  const visit = (v: string) => {
    index.set(v, next)
    low.set(v, next++)
    stack.push(v)
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = []
      let w: string
      do group.push((w = stack.pop()!))
      while (w !== v)
      if (group.length > 1) found.push(group.sort())
    }
  }
  for (const v of edges.keys()) if (!index.has(v)) visit(v)
  return found.sort((a, b) => a[0]!.localeCompare(b[0]!))
}

test('no two folders of src/ and station/ import each other, directly or around a cycle', () => {
  const out = execFileSync(path.join(repoRoot, 'node_modules/.bin/depcruise'), ['src', 'station', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'], {
    cwd: repoRoot,
    maxBuffer: 64 * 1024 * 1024,
  })
  const edges = new Map<string, Set<string>>()
  for (const m of (JSON.parse(out.toString()) as Cruise).modules) {
    const from = folderOf(m.source)
    if (!from) continue
    for (const d of m.dependencies) {
      const to = folderOf(d.resolved)
      if (to && to !== from) edges.set(from, (edges.get(from) ?? new Set()).add(to))
    }
  }
  expect(cycles(edges)).toEqual([])
})
