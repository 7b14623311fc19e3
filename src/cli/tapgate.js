#!/usr/bin/env node
// The bin entry stays plain JavaScript so `npx tapgate` and `npm start` work
// without a build step. It bundles the TypeScript CLI with esbuild (~60 ms)
// into a content-addressed folder under node_modules/.cache/tapgate and runs
// that: loading ~150 TypeScript modules one by one through tsx's loader
// thread costs ~0.5 s of start-up, which the 1.5 s start-up target (gateway
// and embedded chain) cannot afford. Packages stay external, so they load
// from node_modules as usual. If the bundle cannot be built or written (a
// read-only install), it falls back to tsx.
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))

async function bundle() {
  const { build } = await import('esbuild')
  const outdir = path.join(root, 'node_modules/.cache/tapgate/out')
  const result = await build({
    absWorkingDir: root,
    entryPoints: [path.join(root, 'src/cli/main.ts')],
    bundle: true,
    splitting: true, // commands stay lazily imported chunks
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    outdir,
    write: false,
    sourcemap: 'inline',
    logLevel: 'silent',
  })
  const hash = createHash('sha256')
  for (const file of result.outputFiles) hash.update(path.relative(outdir, file.path)).update(file.contents)
  const dir = path.join(root, 'node_modules/.cache/tapgate', hash.digest('hex').slice(0, 16))
  if (!fs.existsSync(dir)) {
    // Written aside and renamed into place: a second process starting now sees all of it or none.
    const tmp = `${dir}.${process.pid}.tmp`
    for (const file of result.outputFiles) {
      const target = path.join(tmp, path.relative(outdir, file.path))
      fs.mkdirSync(path.dirname(target), { recursive: true })
      fs.writeFileSync(target, file.contents)
    }
    try {
      fs.renameSync(tmp, dir)
    } catch (error) {
      fs.rmSync(tmp, { recursive: true, force: true })
      if (!fs.existsSync(dir)) throw error
    }
    pruneOlderBundles(path.dirname(dir), dir)
  }
  return path.join(dir, 'main.js')
}

/** Bundles of earlier sources, unused for an hour: every edit of src/ makes a new one. */
function pruneOlderBundles(cache, keep) {
  const hourAgo = Date.now() - 3600_000
  for (const name of fs.readdirSync(cache)) {
    const dir = path.join(cache, name)
    if (dir !== keep && fs.statSync(dir).mtimeMs < hourAgo) fs.rmSync(dir, { recursive: true, force: true })
  }
}

const entry = await bundle().catch(() => null)
if (entry) {
  process.setSourceMapsEnabled(true)
  await import(pathToFileURL(entry).href)
} else {
  const { register } = await import('tsx/esm/api')
  register()
  await import('./main.ts')
}
