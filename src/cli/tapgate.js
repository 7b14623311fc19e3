#!/usr/bin/env node
// The bin stays plain JavaScript so `npx tapgate` and `npm start` work without a build step.
// An installed package runs the CLI compiled at `npm pack` (dist/cli/main.js, src/cli/buildPackage.js).
// A checkout, which has no dist/, runs the TypeScript CLI bundled by esbuild (src/cli/bundle.js) into
// node_modules/.cache/tapgate/<fingerprint>/.
// The fingerprint is a hash of the sources as they are on disk (about 10 ms to read), so an
// unchanged tree loads its bundle at once and esbuild is loaded only after the sources changed.
// (Hashing the bundle instead meant bundling all of src/ on every start: ~0.7 s.) Loading the ~300
// TypeScript modules one by one through tsx would cost ~0.5 s more at every start. Packages load from
// node_modules as usual, but for bundle.js's BUNDLED. If the bundle cannot be built or written, a
// checkout falls back to tsx (a devDependency).
//
// Nothing in the bundle may find a file next to its own module: it runs from the cache folder.
// Such paths go through src/paths.ts (packageRoot).
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import module from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))
/** What the bundle is made of: every file here, and the two files that steer esbuild. */
const SOURCES = ['src', 'station', 'contracts/artifacts']
const STEERING = ['package.json', 'tsconfig.json']
const cacheRoot = path.join(root, 'node_modules/.cache/tapgate')

function fingerprint() {
  const hash = createHash('sha256')
  const add = (file) => hash.update(path.relative(root, file)).update('\0').update(fs.readFileSync(file)).update('\0')
  const walk = (dir) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const file = path.join(dir, name)
      if (fs.statSync(file).isDirectory()) walk(file)
      else add(file)
    }
  }
  for (const dir of SOURCES) walk(path.join(root, dir))
  for (const file of STEERING) add(path.join(root, file))
  return hash.digest('hex').slice(0, 16)
}

async function bundleCli(dir) {
  const { bundle } = await import('./bundle.js')
  await bundle({ root, entryPoints: { main: 'src/cli/main.ts' }, outdir: dir })
  pruneOlderBundles(dir)
}

/** Bundles of earlier sources, unused for an hour: every edit of src/ makes a new one. */
function pruneOlderBundles(keep) {
  const hourAgo = Date.now() - 3600_000
  for (const name of fs.readdirSync(cacheRoot)) {
    const dir = path.join(cacheRoot, name)
    if (dir !== keep && fs.statSync(dir).mtimeMs < hourAgo) fs.rmSync(dir, { recursive: true, force: true })
  }
}

async function bundledEntry() {
  const dir = path.join(cacheRoot, fingerprint())
  const entry = path.join(dir, 'main.js')
  if (fs.existsSync(entry)) {
    // Marks it used, so pruneOlderBundles keeps what a running gateway may still import from.
    try {
      const now = new Date()
      fs.utimesSync(dir, now, now)
    } catch {
      // A read-only install: its bundle is never pruned by this process either.
    }
    return entry
  }
  await bundleCli(dir)
  return entry
}

/** The CLI compiled into the package. Only a packed package has dist/: postpack removes it from the checkout, where it would go stale. */
const compiled = path.join(root, 'dist/cli/main.js')
const entry = fs.existsSync(compiled) ? compiled : await bundledEntry().catch(() => null)
if (entry) {
  // Stack traces name the bundle's lines (unminified, each module headed by its source path). Source maps
  // cost ~25 ms of every start; NODE_OPTIONS=--enable-source-maps reads the linked maps when wanted.
  // Node 22.1+ also keeps V8's compiled code between starts (absent on Node 20: a no-op there).
  module.enableCompileCache?.()
  await import(pathToFileURL(entry).href)
} else {
  const { register } = await import('tsx/esm/api')
  register()
  await import('./main.ts')
}
