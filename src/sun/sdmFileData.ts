import { createCipheriv, createDecipheriv } from 'node:crypto'
import { toAesKey, type KeyInput } from './aesKey.js'
import { createLrp, type Lrp } from './lrp.js'
import { lricbDecrypt } from './lricb.js'
import { lrpSessionKey } from './lrpSessionKey.js'
import { sdmSessionKeys } from './sdmSessionKeys.js'
import type { SunMode } from './sunResult.js'

/**
 * IV for AES SDMENCFileData: AES-ECB(KSesSDMFileReadENC, SDMReadCtr LE ‖ 13 zero bytes).
 * (AN12196 §4.4.3; the datasheet names the meta key here, but chips use the session ENC key.)
 *
 * @example
 * sdmFileDataIv('8097D73344D53F963B09E23E03B62336', 1) // 7B3F3CFC39D3B7FF5868636E38AF7C3A
 */
export function sdmFileDataIv(sessionEncKey: KeyInput, counter: number): Buffer {
  const block = Buffer.alloc(16)
  block[0] = counter & 0xff
  block[1] = (counter >>> 8) & 0xff
  block[2] = (counter >>> 16) & 0xff
  return createCipheriv('aes-128-ecb', toAesKey(sessionEncKey), null).update(block)
}

/**
 * AES-CBC decryption of SDMENCFileData under the session ENC key.
 *
 * @example
 * decryptAesFileData(sesEncKey, 1, Buffer.from('94592FDE69FA06E8E3B6CA686A22842B', 'hex')) // 'xxxxxxxxxxxxxxxx'
 */
export function decryptAesFileData(sessionEncKey: Buffer, counter: number, encFileData: Uint8Array): Buffer {
  const iv = sdmFileDataIv(sessionEncKey, counter)
  return createDecipheriv('aes-128-cbc', sessionEncKey, iv).setAutoPadding(false).update(encFileData)
}

/**
 * LRICB decryption of SDMENCFileData under the LRP session key, updated key 1,
 * counter SDMReadCtr LE ‖ 00 00 00, no padding.
 *
 * @example
 * decryptLrpFileData(createLrp(sessionKey, 2), 123, encFileData)
 */
export function decryptLrpFileData(session: Lrp, counter: number, encFileData: Uint8Array): Buffer {
  const iv = Buffer.from([counter & 0xff, (counter >>> 8) & 0xff, (counter >>> 16) & 0xff, 0, 0, 0])
  return lricbDecrypt({ key: session, updatedKey: 1, counter: iv, pad: false }, encFileData)
}

export type DecryptSdmFileDataParameters = {
  fileKey: KeyInput
  uid: Uint8Array | null
  counter: number
  /** Whole 16-byte blocks. */
  encFileData: Uint8Array
  mode?: SunMode
}

/**
 * Decrypts SDMENCFileData given the SDM file read key and the decrypted PICCData fields.
 * Verify the SDMMAC first: this does not authenticate anything.
 *
 * @example
 * decryptSdmFileData({ fileKey: '00000000000000000000000000000000', uid, counter: 1, encFileData }) // 78787878…
 */
export function decryptSdmFileData(p: DecryptSdmFileDataParameters): Buffer {
  if (p.encFileData.length === 0 || p.encFileData.length % 16 !== 0) throw new RangeError('SDMENCFileData must be whole 16-byte blocks')
  if ((p.mode ?? 'aes') === 'lrp') {
    return decryptLrpFileData(createLrp(lrpSessionKey(p), 2), p.counter, p.encFileData)
  }
  return decryptAesFileData(sdmSessionKeys(p).encKey, p.counter, p.encFileData)
}
