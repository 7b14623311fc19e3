import { aesCmac } from './aesCmac.js'
import { toAesKey, type KeyInput } from './aesKey.js'
import { parseHex } from './hex.js'

export type DeriveBoltCardKeysParameters = {
  issuerKey: KeyInput
  /** 7-byte UID. */
  uid: string | Uint8Array
  /** Card key version (incremented when a card is re-keyed). */
  version: number
}

/** The Bolt Card key set: K1 decrypts PICCData (meta key), K2 MACs (file key). */
export type BoltCardKeys = { cardKey: Buffer; k0: Buffer; k1: Buffer; k2: Buffer; k3: Buffer; k4: Buffer; id: Buffer }

/**
 * Bolt Card deterministic keys (boltcard docs/DETERMINISTIC.md):
 * CardKey = CMAC(IssuerKey, 2D003F75 ‖ UID ‖ version LE32); K0, K2, K3, K4 =
 * CMAC(CardKey, 2D003F76/78/79/7A); K1 = CMAC(IssuerKey, 2D003F77), shared by all
 * cards of an issuer because it must decrypt PICCData before the UID is known;
 * ID = CMAC(IssuerKey, 2D003F7B ‖ UID).
 *
 * @example
 * deriveBoltCardKeys({ issuerKey: '00000000000000000000000000000001', uid: '04A39493CC8680', version: 1 }).k2
 * // F4B404BE700AB285E333E32348FA3D3B
 */
export function deriveBoltCardKeys(p: DeriveBoltCardKeysParameters): BoltCardKeys {
  const issuer = toAesKey(p.issuerKey, 'issuerKey')
  const uid = typeof p.uid === 'string' ? parseHex(p.uid, 7) : Buffer.from(p.uid)
  if (!uid || uid.length !== 7) throw new RangeError('uid must be 7 bytes')
  if (!Number.isInteger(p.version) || p.version < 0 || p.version > 0xffffffff) throw new RangeError('version must be a 32-bit unsigned integer')
  const version = Buffer.alloc(4)
  version.writeUInt32LE(p.version)
  const label = (last: number): Buffer => Buffer.from([0x2d, 0x00, 0x3f, last])
  const cardKey = aesCmac(issuer, Buffer.concat([label(0x75), uid, version]))
  return {
    cardKey,
    k0: aesCmac(cardKey, label(0x76)),
    k1: aesCmac(issuer, label(0x77)),
    k2: aesCmac(cardKey, label(0x78)),
    k3: aesCmac(cardKey, label(0x79)),
    k4: aesCmac(cardKey, label(0x7a)),
    id: aesCmac(issuer, Buffer.concat([label(0x7b), uid])),
  }
}
