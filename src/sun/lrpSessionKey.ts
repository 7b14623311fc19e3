import { createLrp, lrpEvalSteps, lrpFinal, type Lrp } from './lrp.js'
import { lrpCmacSubkeys } from './lrpCmac.js'
import type { KeyInput } from './aesKey.js'
import { writePiccFields } from './parsePiccData.js'

/**
 * Writes the LRP SDM session vector `00 01 00 80 ‖ [UID] ‖ [SDMReadCtr LE] ‖ zero padding ‖ 1E E1`
 * (AN12196/AN12304, as sdm-backend builds it) as 16 bytes at `offset`.
 *
 * @example
 * writeLrpSessionVector(buf, 0, uid, 30) // 0001008004827F126473801E00001EE1
 */
export function writeLrpSessionVector(target: Buffer, offset: number, uid: Uint8Array | null, counter: number | null): void {
  target[offset] = 0x00
  target[offset + 1] = 0x01
  target[offset + 2] = 0x00
  target[offset + 3] = 0x80
  const pos = writePiccFields(target, offset + 4, uid, counter)
  target.fill(0, pos, offset + 14)
  target[offset + 14] = 0x1e
  target[offset + 15] = 0xe1
}

/**
 * An SDM file read key prepared for LRP session-key derivation. The session key
 * is CMAC_LRP(K, SV) over one complete block, i.e. EvalLRP(SV ⊕ K1); SV always
 * starts 00 01 00 80, so the LRP state after those first 8 nibbles is the same for
 * every tap and is computed once here.
 */
export type LrpFileKey = { lrp: Lrp; K1: Buffer; prefixState: Buffer }

/**
 * Prepares a file read key (or one already expanded with `createLrp`) for {@link lrpSessionKeyFrom}.
 *
 * @example
 * const fileKey = prepareLrpFileKey('00000000000000000000000000000000')
 */
export function prepareLrpFileKey(key: KeyInput | Lrp): LrpFileKey {
  const lrp = typeof key === 'string' || key instanceof Uint8Array ? createLrp(key, 1) : key
  const { K1 } = lrpCmacSubkeys(lrp)
  const head = Buffer.from([0x00 ^ K1[0]!, 0x01 ^ K1[1]!, 0x00 ^ K1[2]!, 0x80 ^ K1[3]!])
  return { lrp, K1, prefixState: lrpEvalSteps(lrp.plaintexts, lrp.updatedKeys[0]!, head, 0, 8) }
}

/**
 * The LRP SDM session key from a prepared file key and a session vector
 * written by {@link writeLrpSessionVector}. `scratch` must hold 16 bytes.
 *
 * @example
 * lrpSessionKeyFrom(prepareLrpFileKey(key), sv, Buffer.alloc(16))
 */
export function lrpSessionKeyFrom(fileKey: LrpFileKey, sv: Uint8Array, scratch: Buffer): Buffer {
  for (let i = 0; i < 16; i++) scratch[i] = sv[i]! ^ fileKey.K1[i]!
  return lrpFinal(lrpEvalSteps(fileKey.lrp.plaintexts, fileKey.prefixState, scratch, 8, 32))
}

export type LrpSessionKeyParameters = {
  /** SDMFileReadKey. */
  fileKey: KeyInput
  uid: Uint8Array | null
  counter: number | null
}

/**
 * LRP-mode SDM session key: CMAC_LRP(SDMFileReadKey, SV). The chip MACs with it
 * (updated key 0) and encrypts file data with it (updated key 1).
 *
 * @example
 * lrpSessionKey({ fileKey: '00000000000000000000000000000000', uid: Buffer.from('042E1D222A6380', 'hex'), counter: 106 })
 * // 99C2FD9C885C2CA3C9089C20057310C0 (sdm-backend tests/test_lrp_sdm.py)
 */
export function lrpSessionKey(p: LrpSessionKeyParameters): Buffer {
  const sv = Buffer.alloc(16)
  writeLrpSessionVector(sv, 0, p.uid, p.counter)
  return lrpSessionKeyFrom(prepareLrpFileKey(p.fileKey), sv, Buffer.alloc(16))
}
