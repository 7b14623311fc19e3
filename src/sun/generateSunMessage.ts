import { createCipheriv, randomBytes } from 'node:crypto'
import { aesEncryptOnce, createAesEcb } from './aesEcb.js'
import { toAesKey, type KeyInput } from './aesKey.js'
import { parseHex, toHex } from './hex.js'
import { createLrp, lrpEval } from './lrp.js'
import { lricbEncrypt } from './lricb.js'
import { lrpSessionKey } from './lrpSessionKey.js'
import { writePiccFields } from './parsePiccData.js'
import { sdmFileDataIv } from './sdmFileData.js'
import { sdmMac } from './sdmMac.js'
import { sdmSessionKeys } from './sdmSessionKeys.js'
import type { SunMode } from './sunResult.js'

export type GenerateSunMessageParameters = {
  metaKey: KeyInput
  fileKey: KeyInput
  mode?: SunMode
  /** 14 hex characters, or null for a counter-only message (PICCDataTag 0x40). */
  uid: string | null
  /** SDMReadCtr, or null for a UID-only message (PICCDataTag 0x87). */
  counter: number | null
  /** Plain file data to mirror encrypted, as hex in whole 16-byte blocks. */
  fileData?: string
  /** Builds the MAC input from the mirrored hex fields; default: empty (SDMMACInputOffset = SDMMACOffset). */
  macInput?: (mirrored: { piccData: string; encFileData: string | null }) => string
  /** The chip's randomness: the PICCData padding after the fields, preceded in LRP mode by the 8-byte PICCRand; random when omitted. */
  random?: Uint8Array
}

export type GeneratedSunMessage = { piccData: string; encFileData: string | null; sdmmac: string; macInput: string }

/**
 * Produces the SUN fields an NTAG 424 DNA would mirror for a UID and counter: the
 * chip side of verification, for tests, benchmarks and virtual cards. Not needed to verify taps.
 *
 * @throws RangeError on an invalid UID, counter or file data
 * @example
 * generateSunMessage({ metaKey: K, fileKey: K, uid: '04DE5F1EACC040', counter: 0 })
 * // { piccData: '…32 hex…', encFileData: null, sdmmac: '…16 hex…', macInput: '' }
 */
export function generateSunMessage(p: GenerateSunMessageParameters): GeneratedSunMessage {
  const mode = p.mode ?? 'aes'
  const uid = p.uid === null ? null : parseHex(p.uid, 7)
  if (p.uid !== null && !uid) throw new RangeError('uid must be 14 hex characters')
  if (p.counter !== null && (!Number.isInteger(p.counter) || p.counter < 0 || p.counter > 0xffffff))
    throw new RangeError('counter must be 0…0xFFFFFF')
  if (!uid && p.counter === null) throw new RangeError('a SUN message mirrors a UID, a counter or both')
  const fileData = p.fileData === undefined ? null : parseHex(p.fileData)
  if (p.fileData !== undefined && (!fileData || fileData.length === 0 || fileData.length % 16 !== 0))
    throw new RangeError('fileData must be hex in whole 16-byte blocks')
  if (fileData && p.counter === null) throw new RangeError('encrypted file data needs the counter mirrored')

  const plain = Buffer.alloc(16)
  plain[0] = (uid ? 0x87 : 0) | (p.counter !== null ? 0x40 : 0)
  const pos = writePiccFields(plain, 1, uid, p.counter)
  const randLength = mode === 'aes' ? 16 - pos : 8 + 16 - pos
  const random = p.random ? Buffer.from(p.random) : randomBytes(randLength)
  if (random.length !== randLength) throw new RangeError(`random must be ${randLength} bytes here`)
  const metaKey = toAesKey(p.metaKey, 'metaKey')
  let piccData: Buffer
  if (mode === 'aes') {
    random.copy(plain, pos)
    piccData = createAesEcb(metaKey).encrypt(plain)
  } else {
    // LRP PICCData is PICCRand ‖ LRICB(plaintext), with PICCRand as the LRICB counter.
    random.copy(plain, pos, 8)
    const meta = createLrp(metaKey, 1)
    const y = lrpEval(meta.plaintexts, meta.updatedKeys[0]!, random.subarray(0, 8), true)
    piccData = Buffer.concat([random.subarray(0, 8), aesEncryptOnce(y, plain)])
  }

  let encFileData: Buffer | null = null
  let macKey: Buffer
  if (mode === 'aes') {
    const keys = sdmSessionKeys({ fileKey: p.fileKey, uid, counter: p.counter })
    macKey = keys.macKey
    if (fileData) encFileData = createCipheriv('aes-128-cbc', keys.encKey, sdmFileDataIv(keys.encKey, p.counter!)).setAutoPadding(false).update(fileData)
  } else {
    macKey = lrpSessionKey({ fileKey: p.fileKey, uid, counter: p.counter })
    if (fileData) {
      const iv = Buffer.alloc(6)
      iv.writeUIntLE(p.counter!, 0, 3)
      encFileData = lricbEncrypt({ key: createLrp(macKey, 2), updatedKey: 1, counter: iv, pad: false }, fileData)
    }
  }
  const mirrored = { piccData: toHex(piccData), encFileData: encFileData ? toHex(encFileData) : null }
  const macInput = p.macInput ? p.macInput(mirrored) : ''
  return { ...mirrored, sdmmac: toHex(sdmMac({ sessionKey: macKey, macInput, mode })), macInput }
}
