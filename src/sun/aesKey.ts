import { parseHex } from './hex.js'

/** An AES-128 key as 32 hex characters or 16 bytes. */
export type KeyInput = string | Uint8Array

/**
 * Thrown for a key that is not AES-128. A bad key is a configuration mistake,
 * not a property of the tap, so it is an exception rather than a verification result.
 */
export class InvalidKeyError extends Error {
  override name = 'InvalidKeyError'
}

/**
 * Normalises a key to a 16-byte Buffer. Never echoes the key: messages end up in logs.
 *
 * @throws InvalidKeyError when the key is not 16 bytes / 32 hex characters
 * @example
 * toAesKey('00000000000000000000000000000000', 'sdmMetaReadKey') // 16 zero bytes
 */
export function toAesKey(key: KeyInput, name = 'key'): Buffer {
  if (typeof key === 'string') {
    const bytes = parseHex(key, 16)
    if (!bytes) throw new InvalidKeyError(`${name} must be 32 hex characters (AES-128)`)
    return bytes
  }
  if (!(key instanceof Uint8Array) || key.length !== 16) throw new InvalidKeyError(`${name} must be 16 bytes (AES-128)`)
  return Buffer.from(key)
}
