import { createHmac } from 'node:crypto'
import { aesCmac } from './aesCmac.js'
import { InvalidKeyError } from './aesKey.js'
import { parseHex } from './hex.js'

// Labels of sdm-backend's libsdm/derive.py ("standard" scheme since 2023-01-24).
const PICC_DATA_KEY = Buffer.from('PICCDataKey', 'ascii')
const SLOT_MASTER_KEY = Buffer.from('SlotMasterKey', 'ascii')
const DIV_BASE_KEY = Buffer.from('DivBaseKey', 'ascii')

function masterKeyBytes(masterKey: string | Uint8Array): Buffer {
  const key = typeof masterKey === 'string' ? parseHex(masterKey) : Buffer.from(masterKey)
  if (!key || key.length < 16) throw new InvalidKeyError('masterKey must be at least 16 bytes of hex')
  return key
}

function isFactoryKey(key: Buffer): boolean {
  // sdm-backend maps the all-zero 16-byte master to all-zero chip keys, so factory-fresh chips verify.
  return key.length === 16 && key.every((b) => b === 0)
}

function hmacSha256(key: Uint8Array, ...parts: Uint8Array[]): Buffer {
  const h = createHmac('sha256', key)
  for (const part of parts) h.update(part)
  return h.digest()
}

export type DeriveSdmBackendTagKeyParameters = {
  masterKey: string | Uint8Array
  uid: string | Uint8Array
  /** The chip key slot; sdm-backend's app uses slot 2 for the SDMFileReadKey (its meta key is undiversified, see {@link deriveSdmBackendMetaKey}). */
  keyNo: number
}

/**
 * A UID-diversified chip key in sdm-backend's "standard" scheme:
 * CMAC(HMAC(M, "SlotMasterKey" ‖ keyNo)[0:16], 01h ‖ HMAC(HMAC(M, "DivBaseKey"), UID)[0:16]).
 *
 * @example
 * deriveSdmBackendTagKey({ masterKey: 'C9EB67DF090AFF47C3B19A2516680B9D', uid: '010203040506AB', keyNo: 1 })
 * // F18CDD9389D47AE7AB381E80E5AB6FE3
 */
export function deriveSdmBackendTagKey(p: DeriveSdmBackendTagKeyParameters): Buffer {
  const master = masterKeyBytes(p.masterKey)
  if (!Number.isInteger(p.keyNo) || p.keyNo < 0 || p.keyNo > 255) throw new RangeError('keyNo must be a byte')
  if (isFactoryKey(master)) return Buffer.alloc(16)
  const uid = typeof p.uid === 'string' ? parseHex(p.uid) : Buffer.from(p.uid)
  if (!uid) throw new RangeError('uid must be hex or bytes')
  const slotKey = hmacSha256(master, SLOT_MASTER_KEY, Buffer.from([p.keyNo])).subarray(0, 16)
  const divBase = hmacSha256(master, DIV_BASE_KEY)
  const uidPart = hmacSha256(divBase, uid).subarray(0, 16)
  return aesCmac(slotKey, Buffer.concat([Buffer.from([0x01]), uidPart]))
}

/**
 * The undiversified SDMMetaReadKey (slot 1) in sdm-backend's "standard" scheme:
 * HMAC(M, "PICCDataKey")[0:16]. It cannot depend on the UID: the UID is inside the PICCData it decrypts.
 *
 * @example
 * deriveSdmBackendMetaKey({ masterKey: 'C9EB67DF090AFF47C3B19A2516680B9D' }) // A13086F194D7BDFD108DD11716EA2BDF
 */
export function deriveSdmBackendMetaKey(p: { masterKey: string | Uint8Array }): Buffer {
  const master = masterKeyBytes(p.masterKey)
  if (isFactoryKey(master)) return Buffer.alloc(16)
  return hmacSha256(master, PICC_DATA_KEY).subarray(0, 16)
}
