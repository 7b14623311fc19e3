// esbuild, as the bin and the package build both use it: the bin bundles the CLI from the sources into
// node_modules/.cache at the first start after an edit (src/cli/tapgate.js); `npm pack` bundles the CLI
// and the library entries into dist/ once (src/cli/buildPackage.js). Plain JavaScript: the bin must run
// before anything is compiled.
import fs from 'node:fs'
import path from 'node:path'

/**
 * Packages load from node_modules as usual, except these: ESM spread over hundreds of files, of
 * which tapgate uses a few functions. Bundled, tree-shaken, viem costs ~15 ms at start instead of
 * ~130 ms. Only our own imports of them are bundled: a package loaded from node_modules that imports
 * one gets node_modules' copy, so no value crosses between two copies.
 */
export const BUNDLED = ['viem']

/** @returns {import('esbuild').Plugin} every package but BUNDLED left to node_modules, for imports from `root`'s own files */
function externalPackages(root) {
  return {
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
}

/**
 * Bundles `entryPoints` (name → source file under `root`) into `outdir`, split into shared chunks so
 * each entry's lazily imported modules stay lazy. Written aside and renamed into place: a second
 * process starting now sees all of it or none.
 * @param {{ root: string, entryPoints: Record<string, string>, outdir: string }} p
 */
export async function bundle({ root, entryPoints, outdir }) {
  const esbuild = await import('esbuild')
  const tmp = `${outdir}.${process.pid}.tmp`
  try {
    await esbuild.build({
      absWorkingDir: root,
      entryPoints: Object.fromEntries(Object.entries(entryPoints).map(([name, file]) => [name, path.join(root, file)])),
      bundle: true,
      splitting: true,
      chunkNames: 'chunks/[name]-[hash]',
      format: 'esm',
      platform: 'node',
      target: 'node20',
      plugins: [externalPackages(root)],
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
    fs.renameSync(tmp, outdir)
  } catch (error) {
    fs.rmSync(tmp, { recursive: true, force: true })
    if (!fs.existsSync(outdir)) throw error
  }
}
