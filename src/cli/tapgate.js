#!/usr/bin/env node
// The bin stays plain JavaScript so `npx tapgate` and `npm start` work without a build step.
// It runs the TypeScript CLI bundled by esbuild into node_modules/.cache/tapgate/<fingerprint>/.
// The fingerprint is a hash of the sources as they are on disk (about 10 ms to read), so an
// unchanged tree loads its bundle at once and esbuild is loaded only after the sources changed.
// (Hashing the bundle instead meant bundling all of src/ on every start: ~0.7 s.) Loading the ~300
// TypeScript modules one by one through tsx would cost ~0.5 s more at every start. Packages load from
// node_modules as usual, but for BUNDLED below. If the bundle cannot be built or written (a
// read-only install), it falls back to tsx.
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

/**
 * Packages load from node_modules as usual, except these: ESM spread over hundreds of files, of
 * which the CLI uses a few functions. Bundled, tree-shaken, viem costs ~15 ms at start instead of
 * ~130 ms. Only our own imports of them are bundled: a package loaded from node_modules that imports
 * one gets node_modules' copy, so no value crosses between two copies.
 */
const BUNDLED = ['viem']

/** @type {import('esbuild').Plugin} */
const externalPackages = {
  name: 'external-packages',
  setup(build) {
    // Ours: under the package root but not in its node_modules. (An installed tapgate is itself in a
    // node_modules, and its dependencies may sit beside it rather than inside it.)
    const ownModules = path.join(root, 'node_modules') + path.sep
    const ours = (file) => file.startsWith(root) && !file.startsWith(ownModules)
    build.onResolve({ filter: /^[^./]/ }, ({ path: specifier, importer }) => {
      if (!ours(importer)) return undefined
      const name = specifier.startsWith('@') ? specifier.split('/', 2).join('/') : specifier.split('/', 1)[0]
      return BUNDLED.includes(name) ? undefined : { path: specifier, external: true }
    })
  },
}

async function bundle(dir) {
  const esbuild = await import('esbuild')
  // Written aside and renamed into place: a second process starting now sees all of it or none.
  const tmp = `${dir}.${process.pid}.tmp`
  try {
    await esbuild.build({
      absWorkingDir: root,
      entryPoints: [path.join(root, 'src/cli/main.ts')],
      bundle: true,
      splitting: true, // commands stay lazily imported chunks
      format: 'esm',
      platform: 'node',
      target: 'node20',
      plugins: [externalPackages],
      outdir: tmp,
      // Linked, not inline: the maps stay out of the chunks Node parses at every start, and are
      // read only under --enable-source-maps.
      sourcemap: 'linked',
      logLevel: 'silent',
    })
  } finally {
    // esbuild's service process would otherwise live as long as this one (a whole `serve`).
    await esbuild.stop()
  }
  try {
    fs.renameSync(tmp, dir)
  } catch (error) {
    fs.rmSync(tmp, { recursive: true, force: true })
    if (!fs.existsSync(dir)) throw error
  }
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
  await bundle(dir)
  return entry
}

const entry = await bundledEntry().catch(() => null)
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
