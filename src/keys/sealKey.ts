import crypto from 'node:crypto'
import { SealedKeyError } from './errors.js'

const VERSION = 1

/**
 * Seals a key for storage: AES-256-GCM under the gateway secret. `context`
 * (e.g. `profile:3:meta`) is bound as additional data, so a sealed key copied
 * into another row or column no longer opens.
 *
 * Layout: version(1) ‖ iv(12) ‖ ciphertext ‖ tag(16).
 *
 * @example
 * const blob = sealKey(secret, Buffer.alloc(16), 'chip:04DE5F1EACC040:file')
 */
export function sealKey(secret: Buffer, key: Buffer, context: string): Buffer {
  const iv = crypto.randomBytes(12)
  const cipher = crypto.createCipheriv('aes-256-gcm', secret, iv)
  cipher.setAAD(Buffer.from(context))
  const body = Buffer.concat([cipher.update(key), cipher.final()])
  return Buffer.concat([Buffer.from([VERSION]), iv, body, cipher.getAuthTag()])
}

/**
 * Opens a sealed key.
 * @throws SealedKeyError when the blob was sealed under another secret or context, or altered
 */
export function openKey(secret: Buffer, blob: Buffer, context: string): Buffer {
  if (blob.length < 1 + 12 + 16 || blob[0] !== VERSION) throw new SealedKeyError(context, 'malformed')
  const decipher = crypto.createDecipheriv('aes-256-gcm', secret, blob.subarray(1, 13))
  decipher.setAAD(Buffer.from(context))
  decipher.setAuthTag(blob.subarray(blob.length - 16))
  try {
    return Buffer.concat([decipher.update(blob.subarray(13, blob.length - 16)), decipher.final()])
  } catch {
    throw new SealedKeyError(context, 'does_not_open')
  }
}
