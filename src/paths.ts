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

/**
 * Creates `dir` and any missing parents with mode 0700. The data dir holds live
 * OTPs, unspent refs and (by default) secret.key: nobody but the gateway's user
 * needs to list or read it. An existing directory keeps its mode (see dataDirExposure).
 */
export function ensurePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
}

/**
 * Creates `file` empty with mode 0600 unless it exists. Done before SQLite opens
 * the database: SQLite creates a new file 0644 (less the umask) and gives its
 * -wal and -shm the main file's mode, so a private main file keeps all three private.
 */
export function ensurePrivateFile(file: string): void {
  // Checked first so a read-only data dir with its database in place still opens.
  if (fs.existsSync(file)) return
  try {
    fs.closeSync(fs.openSync(file, 'wx', 0o600))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
}

/**
 * The start-up warning for a data dir that other users can enter or read
 * (group/other bits set), naming the fix; null when it is private. Only a
 * warning: the operator may have set the mode on purpose (a backup user's group).
 */
export function dataDirExposure(dataDir: string): string | null {
  if (process.platform === 'win32') return null
  const mode = fs.statSync(dataDir).mode & 0o777
  if ((mode & 0o077) === 0) return null
  const octal = mode.toString(8).padStart(4, '0')
  return (
    `data dir ${dataDir} is mode ${octal}: other users can read the database (live OTPs, unspent refs) ` +
    `and, without TAPGATE_SECRET, the gateway secret. Fix: chmod 700 ${shellQuote(dataDir)}`
  )
}

const shellQuote = (text: string): string => (/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`)
