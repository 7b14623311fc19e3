import { createCipheriv } from 'node:crypto'
import { aesCmacSubkeys } from './aesCmac.js'
import { toAesKey, type KeyInput } from './aesKey.js'
import { parseHex } from './hex.js'

export type DiversifyAn10922Parameters = {
  masterKey: KeyInput
  /**
   * Diversification input M, 1…31 bytes; NXP builds it as UID ‖ AID ‖ system
   * identifier (see {@link an10922Input}).
   */
  m: string | Uint8Array
}

/** Thrown when M is empty or longer than 31 bytes. */
export class DiversificationInputError extends Error {
  override name = 'DiversificationInputError'
}

const ZERO_BLOCK = Buffer.alloc(16)

/**
 * NXP AN10922 AES-128 key diversification: CMAC(K, 01h ‖ M) over a fixed 32-byte
 * input. Unlike plain CMAC, a short input is always padded to two blocks (with
 * K2); only a 31-byte M is used unpadded (with K1). The two differ when 01h ‖ M
 * is 16 bytes or less, so this is not `aesCmac(K, 01 ‖ M)`.
 *
 * @throws DiversificationInputError when M is not 1…31 bytes
 * @example
 * diversifyAn10922({ masterKey: '00112233445566778899AABBCCDDEEFF', m: '04782E21801D803042F54E585020416275' })
 * // A8DD63A3B89D54B37CA802473FDA9175
 */
export function diversifyAn10922(p: DiversifyAn10922Parameters): Buffer {
  const m = typeof p.m === 'string' ? parseHex(p.m) : Buffer.from(p.m)
  if (!m || m.length < 1 || m.length > 31) throw new DiversificationInputError('M must be 1 to 31 bytes')
  const key = toAesKey(p.masterKey, 'masterKey')
  const { K1, K2 } = aesCmacSubkeys(key)
  const d = Buffer.alloc(32)
  d[0] = 0x01
  m.copy(d, 1)
  const padded = m.length < 31
  if (padded) d[1 + m.length] = 0x80
  const sub = padded ? K2 : K1
  for (let i = 0; i < 16; i++) d[16 + i] = d[16 + i]! ^ sub[i]!
  return createCipheriv('aes-128-cbc', key, ZERO_BLOCK).update(d).subarray(16)
}

/**
 * Builds AN10922's M = UID ‖ AID ‖ system identifier.
 *
 * @example
 * an10922Input({ uid: '04782E21801D80', aid: '3042F5', systemIdentifier: Buffer.from('NXP Abu') }) // 04782E21801D803042F54E585020416275
 */
export function an10922Input(p: { uid: string | Uint8Array; aid?: string | Uint8Array; systemIdentifier?: string | Uint8Array }): Buffer {
  const part = (v: string | Uint8Array | undefined): Buffer => {
    if (v === undefined) return Buffer.alloc(0)
    const b = typeof v === 'string' ? parseHex(v) : Buffer.from(v)
    if (!b) throw new DiversificationInputError('AN10922 input parts must be hex or bytes')
    return b
  }
  return Buffer.concat([part(p.uid), part(p.aid), part(p.systemIdentifier)])
}
