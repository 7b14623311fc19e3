import { createCipheriv, createDecipheriv, type Cipher, type Decipher } from 'node:crypto'
import { toAesKey, type KeyInput } from './aesKey.js'

/** AES-128-ECB bound to one key, for keys that are used again and again. */
export type AesEcb = {
  /** Encrypts whole 16-byte blocks, each independently. */
  encrypt(blocks: Uint8Array): Buffer
  /** Decrypts whole 16-byte blocks, each independently. */
  decrypt(blocks: Uint8Array): Buffer
}

/**
 * Keeps one ECB cipher and one decipher per key. Creating a node:crypto cipher
 * costs several times more than encrypting a block with it, and ECB without
 * padding keeps no state between `update` calls as long as `final` is never
 * called, so one object serves every later call for the same key.
 *
 * @example
 * const ecb = createAesEcb('00000000000000000000000000000000')
 * ecb.encrypt(Buffer.alloc(16)) // 66E94BD4EF8A2C3B884CFA59CA342B2E
 */
export function createAesEcb(key: KeyInput): AesEcb {
  const k = toAesKey(key)
  const enc: Cipher = createCipheriv('aes-128-ecb', k, null).setAutoPadding(false)
  let dec: Decipher | undefined
  return {
    encrypt: (blocks) => {
      assertBlocks(blocks)
      return enc.update(blocks)
    },
    decrypt: (blocks) => {
      assertBlocks(blocks)
      // Without padding disabled, the decipher would hold the last block back for `final`.
      dec ??= createDecipheriv('aes-128-ecb', k, null).setAutoPadding(false)
      return dec.update(blocks)
    },
  }
}

/**
 * AES-128-ECB encryption of whole blocks under a key used once (LRP derives a new
 * key at every step). Skips `setAutoPadding`: encryption emits whole blocks from
 * `update` regardless, and the call is measurable on this path.
 *
 * @example
 * aesEncryptOnce(Buffer.alloc(16), Buffer.alloc(16)) // 66E94BD4EF8A2C3B884CFA59CA342B2E
 */
export function aesEncryptOnce(key: Uint8Array, blocks: Uint8Array): Buffer {
  return createCipheriv('aes-128-ecb', key, null).update(blocks)
}

/**
 * AES-128-ECB decryption of whole blocks under a key used once.
 *
 * @example
 * aesDecryptOnce(Buffer.alloc(16), Buffer.from('66E94BD4EF8A2C3B884CFA59CA342B2E', 'hex')) // 16 zero bytes
 */
export function aesDecryptOnce(key: Uint8Array, blocks: Uint8Array): Buffer {
  // Padding off: otherwise the decipher keeps the last block back for `final`.
  return createDecipheriv('aes-128-ecb', key, null).setAutoPadding(false).update(blocks)
}

function assertBlocks(blocks: Uint8Array): void {
  // A partial block would be buffered inside the cipher and corrupt the next call.
  if (blocks.length === 0 || blocks.length % 16 !== 0) throw new RangeError('AES-ECB input must be whole 16-byte blocks')
}
