import { aesEncryptOnce as encryptOnce } from './aesEcb.js'
import { toAesKey, type KeyInput } from './aesKey.js'

/**
 * A key expanded for the Leakage Resilient Primitive (NXP AN12304, m = 4):
 * 16 plaintexts P0…P15 and the updated keys K'0…K'(q-1). LRP rekeys AES at every
 * nibble, so each step costs a node:crypto cipher creation; expanding a static
 * key once and keeping the result is the main saving available.
 */
export type Lrp = {
  readonly plaintexts: readonly Buffer[]
  readonly updatedKeys: readonly Buffer[]
}

const BLOCK_55 = Buffer.alloc(16, 0x55)
const BLOCK_AA = Buffer.alloc(16, 0xaa)
const BLOCK_AA_55 = Buffer.concat([BLOCK_AA, BLOCK_55])
const BLOCK_55_AA = Buffer.concat([BLOCK_55, BLOCK_AA])
const ZERO_BLOCK = Buffer.alloc(16)

/**
 * Expands a key into LRP plaintexts (AN12304 Algorithm 1) and `updatedKeyCount`
 * updated keys (Algorithm 2). Both chains start by encrypting under the key itself,
 * so they share that cipher, and each chain step encrypts its two constants in one call.
 *
 * @example
 * createLrp('567826B8DA8E768432A9548DBE4AA3A0').plaintexts[0] // AC20D39F5341FE98DFCA21DA86BA7914
 */
export function createLrp(key: KeyInput, updatedKeyCount = 4): Lrp {
  const first = encryptOnce(toAesKey(key), BLOCK_55_AA)
  let h = first.subarray(0, 16)
  const plaintexts: Buffer[] = []
  for (let i = 0; i < 16; i++) {
    const out = encryptOnce(h, BLOCK_AA_55)
    plaintexts.push(out.subarray(0, 16))
    h = out.subarray(16)
  }
  let g = first.subarray(16)
  const updatedKeys: Buffer[] = []
  for (let i = 0; i < updatedKeyCount; i++) {
    // The last step's second block is unused; asking for it costs less than a second call.
    const out = encryptOnce(g, BLOCK_AA_55)
    updatedKeys.push(out.subarray(0, 16))
    g = out.subarray(16)
  }
  return { plaintexts, updatedKeys }
}

/**
 * LRP plaintexts P0…P15 of a key (AN12304 Algorithm 1).
 *
 * @example
 * lrpPlaintexts('567826B8DA8E768432A9548DBE4AA3A0')[15] // 71B444AF257A93215311D758DD333247
 */
export function lrpPlaintexts(key: KeyInput): Buffer[] {
  return [...createLrp(key, 0).plaintexts]
}

/**
 * LRP updated keys K'0…K'(count-1) of a key (AN12304 Algorithm 2).
 *
 * @example
 * lrpUpdatedKeys('567826B8DA8E768432A9548DBE4AA3A0')[2] // FE30AB50467E61783BFE6B5E0560160E
 */
export function lrpUpdatedKeys(key: KeyInput, count = 4): Buffer[] {
  const out: Buffer[] = []
  let g = encryptOnce(toAesKey(key), BLOCK_AA)
  for (let i = 0; i < count; i++) {
    const step = encryptOnce(g, BLOCK_AA_55)
    out.push(step.subarray(0, 16))
    g = step.subarray(16)
  }
  return out
}

/**
 * Runs LRP evaluation steps y ← AES(y, P[nibble]) over nibbles [from, to) of `x`,
 * most significant nibble of each byte first, starting from state `y`. Exposed
 * separately from {@link lrpEval} so callers can cache the state after a constant
 * prefix of `x`.
 *
 * @example
 * lrpEvalSteps(lrp.plaintexts, lrp.updatedKeys[0]!, x, 0, 8) // state after the first 4 bytes of x
 */
export function lrpEvalSteps(plaintexts: readonly Buffer[], y: Uint8Array, x: Uint8Array, from: number, to: number): Buffer {
  let state = y
  for (let n = from; n < to; n++) {
    const byte = x[n >>> 1]!
    const nibble = (n & 1) === 0 ? byte >>> 4 : byte & 0x0f
    state = encryptOnce(state, plaintexts[nibble]!)
  }
  return Buffer.from(state.buffer, state.byteOffset, 16)
}

/**
 * EvalLRP (AN12304 Algorithm 3, m = 4): evaluates the whole of `x` under updated
 * key `kp`, with the final AES(y, 0¹²⁸) step when `final` is set.
 *
 * @example
 * const lrp = createLrp('567826B8DA8E768432A9548DBE4AA3A0')
 * lrpEval(lrp.plaintexts, lrp.updatedKeys[2]!, Buffer.from('1359', 'hex'), true) // 1BA2C0C578996BC497DD181C6885A9DD
 */
export function lrpEval(plaintexts: readonly Buffer[], kp: Uint8Array, x: Uint8Array, final: boolean): Buffer {
  const y = lrpEvalSteps(plaintexts, kp, x, 0, x.length * 2)
  return final ? encryptOnce(y, ZERO_BLOCK) : y
}

/**
 * The final EvalLRP step, AES(y, 0¹²⁸), for callers that ran {@link lrpEvalSteps}.
 *
 * @example
 * lrpFinal(lrpEvalSteps(p, kp, x, 0, 32))
 */
export function lrpFinal(y: Uint8Array): Buffer {
  return encryptOnce(y, ZERO_BLOCK)
}
