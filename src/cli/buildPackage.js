// `npm pack` (prepack): compiles the package a consumer installs into dist/: the CLI and the library
// entries as ESM JavaScript (esbuild, src/cli/bundle.js), their .d.ts (tsc), and the kiosk pages'
// browser code bundled (dist/kiosk-assets.json). Plain Node 20 then
// imports `tapgate`, `tapgate/testing` and `tapgate/client` with no loader, and the bin runs
// dist/cli/main.js. `--clean` (postpack) removes dist/ again: in a checkout the bin would run it
// instead of the sources.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { bundle } from './bundle.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const dist = path.join(root, 'dist')

/** dist/<name>.js ← source; the names package.json's `exports` point at. */
export const ENTRIES = {
  'cli/main': 'src/cli/main.ts',
  index: 'src/index.ts',
  testing: 'src/testing/index.ts',
  'testing-vitest': 'src/testing/vitest.ts',
  client: 'src/client/index.ts',
}

fs.rmSync(dist, { recursive: true, force: true })
if (process.argv.includes('--clean')) process.exit(0)

const started = performance.now()
await bundle({ root, entryPoints: ENTRIES, outdir: dist })
// The CLI lives under the library's entries in package.json's types; the CLI's own have no consumer.
await writeKioskAssets()
await emitDeclarations(Object.entries(ENTRIES).filter(([name]) => !name.startsWith('cli/')).map(([, file]) => path.join(root, file)))
console.log(`dist/ built in ${Math.round(performance.now() - started)} ms`)

/**
 * The kiosk pages' browser code, bundled now by the gateway's own function (through tsx, a
 * devDependency): the package ships the result and needs no esbuild at run time.
 */
async function writeKioskAssets() {
  const { register } = await import('tsx/esm/api')
  const unregister = register()
  const { buildKioskAssets, PREBUILT_KIOSK_ASSETS } = await import('../kiosk/web/bundle.ts')
  const assets = await buildKioskAssets()
  fs.writeFileSync(PREBUILT_KIOSK_ASSETS, JSON.stringify(Object.fromEntries(assets)))
  await unregister()
}

/** The .d.ts of `files` and of every module they reach, under dist/types/ mirroring the repo. */
async function emitDeclarations(files) {
  const ts = (await import('typescript')).default
  const { config, error } = ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile)
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'))
  const { options } = ts.convertCompilerOptionsFromJson(config.compilerOptions, root)
  const program = ts.createProgram(files, {
    ...options,
    noEmit: false,
    declaration: true,
    emitDeclarationOnly: true,
    rootDir: root,
    outDir: path.join(dist, 'types'),
  })
  const result = program.emit()
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics]
  if (diagnostics.length > 0) {
    const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => '\n' }
    throw new Error(`tsc: declarations not emitted:\n${ts.formatDiagnostics(diagnostics, host)}`)
  }
}
