import fs from 'node:fs'
import path from 'node:path'
import { packageRoot } from '../../paths.js'

/** The kiosk pages' assets, built in memory. */
export type KioskAssets = Map<string, { body: string; type: string; etag: string }>

/**
 * The browser code's folder. Found from the package root, not from this module: the `tapgate` bin
 * runs a bundle of the CLI from node_modules/.cache, where `./client/` next to the module does not exist.
 */
export const KIOSK_CLIENT_DIR = path.join(packageRoot, 'src/kiosk/web/client')
const ENTRIES = ['kiosk.ts', 'staff.ts', 'claim.ts', 'kiosk.css', 'claim.css', 'console.ts', 'signin.ts', 'console.css']

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' }

/**
 * The assets as `npm pack` built them (src/cli/buildPackage.js): an installed package ships them
 * instead of the browser sources, so it needs no esbuild. A checkout has none and builds its own.
 */
export const PREBUILT_KIOSK_ASSETS = path.join(packageRoot, 'dist/kiosk-assets.json')

/**
 * Bundles the browser code with esbuild (one file per page, plus the style sheet). esbuild is
 * loaded here, at the first request for an asset, so `tapgate serve` does not pay for it at start-up.
 * The package's own client dir is read from PREBUILT_KIOSK_ASSETS when that exists.
 */
export async function buildKioskAssets(clientDir: string = KIOSK_CLIENT_DIR): Promise<KioskAssets> {
  if (clientDir === KIOSK_CLIENT_DIR && fs.existsSync(PREBUILT_KIOSK_ASSETS)) {
    const prebuilt = JSON.parse(await fs.promises.readFile(PREBUILT_KIOSK_ASSETS, 'utf8')) as Record<string, { body: string; type: string; etag: string }>
    return new Map(Object.entries(prebuilt))
  }
  const esbuild = await import('esbuild')
  const result = await esbuild.build({
    entryPoints: ENTRIES.map((entry) => path.join(clientDir, entry)),
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

/**
 * The assets, built once per app at the first request. A build that fails stays failed until the
 * gateway restarts: the sources do not change under a running gateway, and building again at every
 * request (~40 ms of CPU each) would let any page left reloading keep the gateway busy.
 * `onFailure` is told once.
 */
export function kioskAssetsOnce({ clientDir, onFailure }: { clientDir?: string; onFailure: (error: unknown) => void }): () => Promise<KioskAssets> {
  let built: Promise<KioskAssets> | null = null
  return () => {
    built ??= buildKioskAssets(clientDir).catch((error: unknown) => {
      onFailure(error)
      throw error
    })
    return built
  }
}
