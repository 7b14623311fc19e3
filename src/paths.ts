import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The package's root directory, found by walking up from this module to the
 * package.json named tapgate. The code runs from src/ (tsx, tests) or from the
 * start-up bundle under node_modules/.cache (src/cli/tapgate.js), so paths
 * must not be relative to the module's own location.
 */
export const packageRoot: string = findPackageRoot(path.dirname(fileURLToPath(import.meta.url)))

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json')
    if (fs.existsSync(manifest) && (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: string }).name === 'tapgate') return dir
    if (path.dirname(dir) === dir) throw new Error(`cannot find tapgate's package.json above ${from}`)
  }
}
