import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { CsvTooLargeError, MAX_CSV_BYTES } from './readCsv.js'

export type SpooledUpload = { file: string; bytes: number; remove: () => void }

/**
 * An upload written to a private temporary file (mode 0600, in a directory of its own) as it arrives,
 * at most MAX_CSV_BYTES. The import then reads the file at its own pace: the request is received in
 * the time the network takes (the server's request timeout bounds that, not the import's minute), and
 * memory holds a socket buffer, never the file. `remove` deletes it; the caller calls it in `finally`.
 *
 * @throws CsvTooLargeError past MAX_CSV_BYTES, once that much has arrived (nothing of it is kept)
 * @example
 * const upload = await spoolUpload(request.body)
 * try { await importAttendees(store, { …, input: fs.createReadStream(upload.file) }) } finally { upload.remove() }
 */
export async function spoolUpload(body: AsyncIterable<Uint8Array>): Promise<SpooledUpload> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tapgate-upload-'))
  const file = path.join(dir, 'upload.csv')
  const remove = () => fs.rmSync(dir, { recursive: true, force: true })
  let bytes = 0
  try {
    const out = fs.createWriteStream(file, { flags: 'wx', mode: 0o600 })
    const bound = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        bytes += chunk.byteLength
        done(bytes > MAX_CSV_BYTES ? new CsvTooLargeError(bytes, true) : null, chunk)
      },
    })
    await pipeline(body, bound, out)
  } catch (error) {
    remove()
    throw error
  }
  return { file, bytes, remove }
}
