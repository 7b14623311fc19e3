import { createAesEcb } from './aesEcb.js'
import { aesCmacSubkeys } from './aesCmac.js'
import type { KeyInput } from './aesKey.js'
import { writePiccFields } from './parsePiccData.js'

/** SV1 (encryption) and SV2 (MAC) labels of AN12196 §4.3. */
const LABEL = { enc: [0xc3, 0x3c], mac: [0x3c, 0xc3] } as const

/**
 * Writes an AES SDM session vector, `label ‖ 00 01 00 80 ‖ [UID] ‖ [SDMReadCtr LE] ‖ zero padding`,
 * as 16 bytes at `offset`. With a 7-byte UID and a counter it fills the block exactly,
 * which is why the session-key CMAC is a single block.
 *
 * @example
 * writeSessionVector(buf, 0, 'mac', uid, 61) // 3CC30001008004DE5F1EACC0403D0000
 */
export function writeSessionVector(target: Buffer, offset: number, label: 'enc' | 'mac', uid: Uint8Array | null, counter: number | null): void {
  const [a, b] = LABEL[label]
  target[offset] = a
  target[offset + 1] = b
  target[offset + 2] = 0x00
  target[offset + 3] = 0x01
  target[offset + 4] = 0x00
  target[offset + 5] = 0x80
  const pos = writePiccFields(target, offset + 6, uid, counter)
  target.fill(0, pos, offset + 16)
}

export type SdmSessionKeysParameters = {
  /** SDMFileReadKey (the key the chip MACs and encrypts file data with). */
  fileKey: KeyInput
  uid: Uint8Array | null
  counter: number | null
}

export type SdmSessionKeys = { sv1: Buffer; sv2: Buffer; encKey: Buffer; macKey: Buffer }

/**
 * AES-mode SDM session keys: KSesSDMFileReadENC = CMAC(K, SV1) and
 * KSesSDMFileReadMAC = CMAC(K, SV2) (AN12196 §4.3). SV is a single complete
 * block, so each CMAC is AES(K, SV ⊕ K1); both are computed in one cipher call.
 *
 * @example
 * sdmSessionKeys({ fileKey: '5ACE7E50AB65D5D51FD5BF5A16B8205B', uid: Buffer.from('04C767F2066180', 'hex'), counter: 1 })
 * // { encKey: 66DA6179…, macKey: 3A3E8110… }
 */
export function sdmSessionKeys(p: SdmSessionKeysParameters): SdmSessionKeys {
  const { K1 } = aesCmacSubkeys(p.fileKey)
  const sv = Buffer.alloc(32)
  writeSessionVector(sv, 0, 'enc', p.uid, p.counter)
  writeSessionVector(sv, 16, 'mac', p.uid, p.counter)
  const masked = Buffer.alloc(32)
  for (let i = 0; i < 32; i++) masked[i] = sv[i]! ^ K1[i & 15]!
  const keys = createAesEcb(p.fileKey).encrypt(masked)
  return { sv1: sv.subarray(0, 16), sv2: sv.subarray(16), encKey: keys.subarray(0, 16), macKey: keys.subarray(16) }
}
