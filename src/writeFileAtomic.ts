import { open, rename, rm } from 'node:fs/promises'
import { dirname } from 'node:path'

/** tmp, fsync, rename, fsync dir: a reader sees the old file or the new one, never half of one. */
export async function writeFileAtomic(path: string, data: Uint8Array): Promise<void> {
  const tmp = `${path}.tmp`
  try {
    const file = await open(tmp, 'w', 0o600)
    try {
      await file.chmod(0o600) // exact, whatever the umask or a previous tmp file said
      await file.writeFile(data)
      await file.sync()
    } finally {
      await file.close()
    }
    await rename(tmp, path)
  } catch (error) {
    await rm(tmp, { force: true })
    throw error
  }
  const parent = await open(dirname(path), 'r')
  try {
    await parent.sync()
  } catch {
    // not every platform can fsync a directory (Windows); the rename stands either way
  } finally {
    await parent.close()
  }
}
