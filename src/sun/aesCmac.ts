import { createCipheriv } from 'node:crypto'
import { toAesKey, type KeyInput } from './aesKey.js'
import { gfDouble } from './gfDouble.js'

const ZERO_BLOCK = Buffer.alloc(16)

/** The CMAC subkeys of RFC 4493 §2.3: L = AES(K, 0¹²⁸), K1 = L·x, K2 = L·x². */
export type AesCmacSubkeys = { L: Buffer; K1: Buffer; K2: Buffer }

/**
 * Derives the RFC 4493 subkeys of a key.
 *
 * @example
 * aesCmacSubkeys('3FB5F6E3A807A03D5E3570ACE393776F').K1 // 1C5E18A33EC1D73292FDDAD167EF8B4A (AN12196 Table 5)
 */
export function aesCmacSubkeys(key: KeyInput): AesCmacSubkeys {
  const L = createCipheriv('aes-128-ecb', toAesKey(key), null).update(ZERO_BLOCK)
  const K1 = Buffer.from(gfDouble(L))
  const K2 = Buffer.from(gfDouble(K1))
  return { L, K1, K2 }
}

/**
 * AES-128-CMAC (RFC 4493) of a message; a string is taken as its UTF-8 bytes
 * (SDM MAC inputs are ASCII, so anything else must not verify).
 *
 * @returns the full 16-byte CMAC
 * @example
 * aesCmac('3ED0920E5E6A0320D823D5987FEAFBB1', 'CEE9A53E3E463EF1F459635736738962&cmac=') // 81EC45C175E72FF6FAC61BC7AB3BAEF6
 */
export function aesCmac(key: KeyInput, message: Uint8Array | string): Buffer {
  const msg = typeof message === 'string' ? Buffer.from(message, 'utf8') : Buffer.from(message.buffer, message.byteOffset, message.byteLength)
  return cmacInto(toAesKey(key), msg, msg.length, Buffer.allocUnsafe(cmacScratchSize(msg.length)))
}

/**
 * Bytes of scratch {@link cmacInto} needs for a message of `length` bytes: the
 * padded message plus room for the subkey.
 *
 * @example
 * const scratch = Buffer.alloc(cmacScratchSize(256))
 */
export function cmacScratchSize(length: number): number {
  return Math.max(16, (length + 15) & ~15) + 32
}

/**
 * CMAC of `msg[0, length)` under a key used once, with caller-owned scratch
 * (the SUN hot path keeps one per verifier). A single CBC cipher does all the
 * work in two `update` calls: the first encrypts the zero block, giving L and
 * leaving L as the chaining value; XOR-ing L into the first message block
 * cancels that chaining, so the second call is exactly CBC-MAC from a zero IV.
 *
 * @example
 * cmacInto(key, msg, msg.length, Buffer.allocUnsafe(cmacScratchSize(msg.length)))
 */
export function cmacInto(key: Buffer, msg: Buffer, length: number, scratch: Buffer): Buffer {
  const cipher = createCipheriv('aes-128-cbc', key, ZERO_BLOCK)
  const L = cipher.update(ZERO_BLOCK)
  const blocks = length === 0 ? 1 : (length + 15) >>> 4
  const padded = blocks * 16
  const sub = scratch.subarray(padded, padded + 16)
  gfDouble(L, sub)
  const complete = length !== 0 && length % 16 === 0
  if (!complete) gfDouble(sub, sub)
  msg.copy(scratch, 0, 0, length)
  if (!complete) {
    scratch[length] = 0x80
    scratch.fill(0, length + 1, padded)
  }
  const last = padded - 16
  for (let i = 0; i < 16; i++) {
    scratch[i] = scratch[i]! ^ L[i]!
    scratch[last + i] = scratch[last + i]! ^ sub[i]!
  }
  const out = cipher.update(scratch.subarray(0, padded))
  return out.subarray(padded - 16)
}
