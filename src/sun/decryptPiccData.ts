import { aesDecryptOnce, createAesEcb } from './aesEcb.js'
import type { KeyInput } from './aesKey.js'
import { parseHex } from './hex.js'
import { createLrp, lrpEval, type Lrp } from './lrp.js'
import { parsePiccData, type PiccFields } from './parsePiccData.js'
import type { SunMode } from './sunResult.js'

/**
 * Decrypts LRP PICCData: 8 bytes PICCRand, then one LRICB block under the meta
 * read key's updated key 0 with PICCRand as the counter (AN12196 §4.4, LRP).
 *
 * @example
 * decryptLrpPiccData(createLrp(metaKey, 1), Buffer.from('B3373525DC0343DEDB5F8E89F5387402EDFB8C22186FC129', 'hex'))
 */
export function decryptLrpPiccData(meta: Lrp, piccData: Uint8Array): Buffer {
  const y = lrpEval(meta.plaintexts, meta.updatedKeys[0]!, piccData.subarray(0, 8), true)
  return aesDecryptOnce(y, piccData.subarray(8, 24))
}

export type DecryptPiccDataParameters = {
  /** SDMMetaReadKey. */
  metaKey: KeyInput
  /** 16 bytes (AES) or 24 bytes (LRP), as hex or bytes; the length selects the mode. */
  piccData: string | Uint8Array
}

export type DecryptedPiccData = {
  mode: SunMode
  plaintext: Buffer
  /** The parsed fields, or null when the plaintext is not PICCData (wrong key). */
  fields: PiccFields | null
}

/**
 * Decrypts PICCData without checking any MAC: the result is not authenticated.
 * AES PICCData is one AES-CBC block with a zero IV, i.e. one ECB block.
 *
 * @throws RangeError when piccData is not 16 or 24 bytes of strict hex/bytes
 * @example
 * decryptPiccData({ metaKey: '00000000000000000000000000000000', piccData: 'EF963FF7828658A599F3041510671E88' })
 * // { mode: 'aes', plaintext: C704DE5F1EACC0403D0000DA5CF60941, fields: { tag: 0xC7, uid: 04DE5F1EACC040, counter: 61 } }
 */
export function decryptPiccData(p: DecryptPiccDataParameters): DecryptedPiccData {
  const data = typeof p.piccData === 'string' ? parseHex(p.piccData) : Buffer.from(p.piccData)
  if (!data || (data.length !== 16 && data.length !== 24)) throw new RangeError('PICCData must be 16 (AES) or 24 (LRP) bytes')
  const mode: SunMode = data.length === 16 ? 'aes' : 'lrp'
  const plaintext = mode === 'aes' ? createAesEcb(p.metaKey).decrypt(data) : decryptLrpPiccData(createLrp(p.metaKey, 1), data)
  return { mode, plaintext, fields: parsePiccData(plaintext) }
}
