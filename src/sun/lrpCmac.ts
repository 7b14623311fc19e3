import { gfDouble } from './gfDouble.js'
import { createLrp, lrpEval, type Lrp } from './lrp.js'
import type { KeyInput } from './aesKey.js'

const ZERO_BLOCK = Buffer.alloc(16)

/** CMAC_LRP subkeys: K0 = EvalLRP(K'0, 0¹²⁸), K1 = K0·x, K2 = K0·x² (AN12304). */
export type LrpCmacSubkeys = { K0: Buffer; K1: Buffer; K2: Buffer }

function expand(key: KeyInput | Lrp): Lrp {
  return typeof key === 'string' || key instanceof Uint8Array ? createLrp(key, 1) : key
}

/**
 * Derives the CMAC_LRP subkeys of a key (updated key 0, as NTAG 424 DNA uses).
 *
 * @example
 * lrpCmacSubkeys('8195088CE6C393708EBBE6C7914ECB0B').K2 // 2D22571A33B2965A9B49FF4395A43046
 */
export function lrpCmacSubkeys(key: KeyInput | Lrp): LrpCmacSubkeys {
  const lrp = expand(key)
  const K0 = lrpEval(lrp.plaintexts, lrp.updatedKeys[0]!, ZERO_BLOCK, true)
  const K1 = Buffer.from(gfDouble(K0))
  const K2 = Buffer.from(gfDouble(K1))
  return { K0, K1, K2 }
}

/**
 * CMAC_LRP (AN12304): CMAC with EvalLRP as the block function. A string is taken
 * as its UTF-8 bytes. Pass precomputed `subkeys` for a key that MACs repeatedly:
 * deriving them costs 33 LRP steps.
 *
 * @returns the full 16-byte MAC
 * @example
 * lrpCmac('8195088CE6C393708EBBE6C7914ECB0B', Buffer.from('BBD5B85772C7', 'hex')) // AD8595E0B49C5C0DB18E77355F5AAFF6
 */
export function lrpCmac(key: KeyInput | Lrp, message: Uint8Array | string, subkeys?: LrpCmacSubkeys): Buffer {
  const lrp = expand(key)
  const { K1, K2 } = subkeys ?? lrpCmacSubkeys(lrp)
  const msg = typeof message === 'string' ? Buffer.from(message, 'utf8') : message
  const kp = lrp.updatedKeys[0]!
  const blocks = msg.length === 0 ? 1 : (msg.length + 15) >>> 4
  const complete = msg.length !== 0 && msg.length % 16 === 0
  const x = Buffer.alloc(16)
  let y: Uint8Array = ZERO_BLOCK
  for (let b = 0; b < blocks - 1; b++) {
    for (let i = 0; i < 16; i++) x[i] = y[i]! ^ msg[b * 16 + i]!
    y = lrpEval(lrp.plaintexts, kp, x, true)
  }
  const lastStart = (blocks - 1) * 16
  const sub = complete ? K1 : K2
  for (let i = 0; i < 16; i++) {
    const pos = lastStart + i
    const m = pos < msg.length ? msg[pos]! : pos === msg.length ? 0x80 : 0
    x[i] = y[i]! ^ m ^ sub[i]!
  }
  return lrpEval(lrp.plaintexts, kp, x, true)
}
