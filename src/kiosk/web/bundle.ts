import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The kiosk pages' assets, built in memory. */
export type KioskAssets = Map<string, { body: string; type: string; etag: string }>

const CLIENT = fileURLToPath(new URL('./client/', import.meta.url))
const ENTRIES = ['kiosk.ts', 'staff.ts', 'claim.ts', 'kiosk.css', 'claim.css']

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' }

/**
 * Bundles the browser code with esbuild (one file per page, plus the style sheet). esbuild is
 * loaded here, at the first request for an asset, so `tapgate serve` does not pay for it at start-up.
 */
export async function buildKioskAssets(): Promise<KioskAssets> {
  const esbuild = await import('esbuild')
  const result = await esbuild.build({
    entryPoints: ENTRIES.map((entry) => path.join(CLIENT, entry)),
    bundle: true,
    write: false,
    outdir: '/kiosk-assets',
    format: 'esm',
    target: ['chrome100', 'firefox100', 'safari15'],
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  })
  const assets: KioskAssets = new Map()
  for (const file of result.outputFiles) {
    const name = path.basename(file.path)
    assets.set(name, { body: file.text, type: TYPES[path.extname(name)] ?? 'application/octet-stream', etag: `"${file.hash}"` })
  }
  return assets
}

let cached: Promise<KioskAssets> | null = null

/** The assets, built once per process; a failed build is retried at the next request. */
export function kioskAssets(): Promise<KioskAssets> {
  cached ??= buildKioskAssets().catch((error: unknown) => {
    cached = null
    throw error
  })
  return cached
}
