import { aesDecryptOnce, aesEncryptOnce } from './aesEcb.js'
import { createLrp, lrpEval, type Lrp } from './lrp.js'
import type { KeyInput } from './aesKey.js'

export type LricbParameters = {
  /** The LRP key, or a key already expanded with {@link createLrp}. */
  key: KeyInput | Lrp
  /** Index of the updated key to use (SDM uses 0 for PICCData, 1 for file data). */
  updatedKey?: number
  /** The counter/IV; any length, incremented big-endian per block, wrapping to zero. */
  counter: Uint8Array
  /** Apply (encrypt) or strip (decrypt) ISO/IEC 9797-1 method 2 padding (0x80 00…). */
  pad?: boolean
}

/** Thrown when LRICB input has the wrong length or decrypted padding is invalid. */
export class LricbError extends Error {
  override name = 'LricbError'
}

function expand(key: KeyInput | Lrp, updatedKey: number): Lrp {
  const lrp = typeof key === 'string' || key instanceof Uint8Array ? createLrp(key, updatedKey + 1) : key
  if (!lrp.updatedKeys[updatedKey]) throw new LricbError(`updated key ${updatedKey} was not expanded`)
  return lrp
}

/** Runs `crypt` on each block under EvalLRP(counter), incrementing the counter per block. */
function lricb(p: LricbParameters, data: Uint8Array, crypt: (key: Uint8Array, block: Uint8Array) => Buffer): Buffer {
  const u = p.updatedKey ?? 0
  const lrp = expand(p.key, u)
  const counter = Buffer.from(p.counter)
  const out = Buffer.allocUnsafe(data.length)
  for (let off = 0; off < data.length; off += 16) {
    crypt(lrpEval(lrp.plaintexts, lrp.updatedKeys[u]!, counter, true), data.subarray(off, off + 16)).copy(out, off)
    increment(counter)
  }
  return out
}

function increment(counter: Buffer): void {
  for (let i = counter.length - 1; i >= 0; i--) {
    counter[i] = (counter[i]! + 1) & 0xff
    if (counter[i] !== 0) return
  }
}

/**
 * LRICBEnc (AN12304): each block is AES-encrypted under EvalLRP(counter), then the
 * counter is incremented.
 *
 * @example
 * lricbEncrypt({ key: 'E0C4935FF0C254CD2CEF8FDDC32460CF', counter: Buffer.from('C3315DBF', 'hex'), pad: true },
 *   Buffer.from('012D7F1653CAF6503C6AB0C1010E8CB0', 'hex')) // FCBBACAA…ECE0D623
 */
export function lricbEncrypt(p: LricbParameters, plaintext: Uint8Array): Buffer {
  let data = Buffer.from(plaintext)
  if (p.pad ?? true) {
    const padded = Buffer.alloc((data.length + 16) & ~15)
    data.copy(padded)
    padded[data.length] = 0x80
    data = padded
  } else if (data.length === 0 || data.length % 16 !== 0) {
    throw new LricbError('unpadded LRICB input must be a non-empty multiple of 16 bytes')
  }
  return lricb(p, data, aesEncryptOnce)
}

/**
 * LRICBDec (AN12304), the inverse of {@link lricbEncrypt}.
 *
 * @throws LricbError on a length that is not whole blocks, or invalid padding when `pad` is set
 * @example
 * lricbDecrypt({ key: 'E0C4935FF0C254CD2CEF8FDDC32460CF', counter: Buffer.from('C3315DBF', 'hex'), pad: true }, ciphertext)
 */
export function lricbDecrypt(p: LricbParameters, ciphertext: Uint8Array): Buffer {
  if (ciphertext.length === 0 || ciphertext.length % 16 !== 0)
    throw new LricbError('LRICB ciphertext must be a non-empty multiple of 16 bytes')
  const out = lricb(p, ciphertext, aesDecryptOnce)
  if (!(p.pad ?? true)) return out
  let end = out.length - 1
  while (end >= out.length - 16 && out[end] === 0) end--
  if (end < out.length - 16 || out[end] !== 0x80) throw new LricbError('invalid LRICB padding')
  return out.subarray(0, end)
}
