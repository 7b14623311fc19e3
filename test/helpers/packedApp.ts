/*
 * The package as a user installs it: `npm pack` of this checkout, installed with vitest into an empty
 * app folder, once per test run for every file that asks (the install builds better-sqlite3 from
 * source here, ~70 s of CPU; two files doing it each cost a CI run 2 minutes). The first caller packs
 * and installs under a lock; the others wait for its result. The run's folder comes from
 * test/helpers/packedAppGlobalSetup.ts, which removes it at the end of the run.
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { inject } from 'vitest'
import { repoRoot } from './processes.js'

const run = promisify(execFile)

export type PackedApp = {
  /** The app folder: package.json (type module), node_modules/tapgate and vitest. */
  dir: string
  tarball: string
  /** Seconds the install of the tarball took (the bench measures it properly: npm run bench:testing). */
  installSeconds: number
}

declare module 'vitest' {
  export interface ProvidedContext {
    packedAppDir: string
  }
}

/**
 * The environment of a user's shell: tests run under `npm test`, whose npm_* variables
 * (npm_config_local_prefix above all) would point npm and npx at this repo instead of the user's folder.
 */
export const userEnv = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_|^INIT_CWD$/i.test(name))),
  ...extra,
})

/** The vitest the app installs beside tapgate: this repo's, so the install is served from npm's cache. */
const vitestVersion = (JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies.vitest!

export async function packedApp(): Promise<PackedApp> {
  const root = inject('packedAppDir')
  const ready = path.join(root, 'ready.json')
  const failed = path.join(root, 'failed.txt')
  try {
    fs.mkdirSync(path.join(root, 'lock'))
  } catch {
    // Another file packs: wait for it (an install here takes up to ~3 minutes on a busy 2-core machine).
    const deadline = Date.now() + 400_000
    while (Date.now() < deadline) {
      if (fs.existsSync(ready)) return JSON.parse(fs.readFileSync(ready, 'utf8')) as PackedApp
      if (fs.existsSync(failed)) throw new Error(`the packed install failed in another test file:\n${fs.readFileSync(failed, 'utf8')}`)
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
    throw new Error('the packed install did not finish within 400 s')
  }
  try {
    const { stdout } = await run('npm', ['pack', '--silent', '--pack-destination', root], { cwd: repoRoot, env: userEnv() })
    const tarball = path.join(root, stdout.trim().split('\n').at(-1)!)
    const dir = path.join(root, 'app')
    fs.mkdirSync(dir)
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'an-app', private: true, type: 'module' }))
    const started = performance.now()
    // The registry's packages as `npm ci` cached them; the native ones build here as on a user's machine.
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, `vitest@${vitestVersion}`], { cwd: dir, env: userEnv(), timeout: 360_000 })
    const result: PackedApp = { dir, tarball, installSeconds: Math.round((performance.now() - started) / 100) / 10 }
    fs.writeFileSync(ready, JSON.stringify(result))
    return result
  } catch (error) {
    fs.writeFileSync(failed, String((error as Error).stack ?? error))
    throw error
  }
}
