import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { ensurePrivateDir } from '../paths.js'
import { isMediaKey } from './mediaUrl.js'

/** Where cached images live: <dataDir>/media, mode 0700 like the data dir. */
export const mediaDir = (dataDir: string): string => path.join(dataDir, 'media')

function fileOf(dataDir: string, key: string): string {
  // The one guard between a key and the file system: 64 hex digits, nothing else.
  if (!isMediaKey(key)) throw new Error(`not a media key: ${JSON.stringify(key)}`)
  return path.join(mediaDir(dataDir), key)
}

/**
 * Writes an image as <dataDir>/media/<key> (mode 0600): to a temp file first, synced, then renamed,
 * so a reader (or a crash) never sees half an image under the key.
 */
export async function writeMediaFile(dataDir: string, key: string, body: Uint8Array): Promise<void> {
  const target = fileOf(dataDir, key)
  ensurePrivateDir(mediaDir(dataDir))
  const temp = `${path.join(mediaDir(dataDir), `.${key}`)}.${randomBytes(6).toString('hex')}.tmp`
  try {
    const file = await fs.open(temp, 'wx', 0o600)
    try {
      await file.writeFile(body)
      await file.sync()
    } finally {
      await file.close()
    }
    await fs.rename(temp, target)
  } catch (error) {
    await fs.rm(temp, { force: true })
    throw error
  }
}

/** The cached bytes of a key, or null when there is no file. */
export async function readMediaFile(dataDir: string, key: string): Promise<Buffer | null> {
  try {
    return await fs.readFile(fileOf(dataDir, key))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
}

/** The cached file's size, or null when there is none (a cheap "is it cached?" without reading it). */
export async function mediaFileSize(dataDir: string, key: string): Promise<number | null> {
  try {
    return (await fs.stat(fileOf(dataDir, key))).size
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
}
