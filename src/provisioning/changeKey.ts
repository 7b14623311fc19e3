import { toAesKey, type KeyInput } from '../sun/aesKey.js'
import { INS } from './apdu.js'
import { checkByte, xorBytes } from './bytes.js'
import { crc32nk } from './crc32nk.js'
import { SecureMessagingError } from './errors.js'
import type { Exchange, SecureSession } from './secureMessaging.js'

/*
 * ChangeKey (NT4H2421Gx §10.6.1, Table 63; AN12196 §6.16). Only the
 * AppMasterKey (key 0) can change keys, so the session is always one
 * authenticated with key 0, and the two cases of the data sheet are:
 *
 * - case 1, a key other than the session's (keys 1–4):
 *   `(NewKey ⊕ OldKey) ‖ KeyVer ‖ CRC32NK(NewKey)`, answered with a MAC;
 * - case 2, the session's own key (key 0): `NewKey ‖ KeyVer`, answered with a
 *   bare 91 00: the session ends and the reader must authenticate with the new key.
 */

export type ChangeKeyParameters = {
  /** The key to change, 0–4. */
  keyNo: number
  /** The new AES key. */
  newKey: KeyInput
  /** The key's current value: required for keys 1–4 (the chip checks it through the XOR and the CRC). */
  oldKey?: KeyInput
  /** The new key version, 0–255 (provisioning never uses 00: it means "factory"). */
  keyVersion: number
}

/**
 * The plaintext CmdData of ChangeKey (17 bytes for the session's own key, 21 otherwise), before padding and encryption.
 *
 * @throws RangeError for a key number or version out of range, or a missing old key
 * @example
 * changeKeyData({ keyNo: 2, newKey: 'F3847D627727ED3BC9C4CC050489B966', oldKey: zero, keyVersion: 1 }, 0)
 * // F3847D627727ED3BC9C4CC050489B966 01 789DFADC (AN12196 Table 26)
 */
export function changeKeyData(p: ChangeKeyParameters, authKeyNo: number): Buffer {
  checkByte(p.keyNo, 'keyNo', 0, 4)
  checkByte(p.keyVersion, 'keyVersion')
  const newKey = toAesKey(p.newKey, 'newKey')
  if (p.keyNo === authKeyNo) return Buffer.concat([newKey, Buffer.from([p.keyVersion])])
  if (p.oldKey === undefined) throw new RangeError(`changing key ${p.keyNo} needs its current value (oldKey): the chip takes the new key XOR the old one`)
  return Buffer.concat([xorBytes(newKey, toAesKey(p.oldKey, 'oldKey')), Buffer.from([p.keyVersion]), crc32nk(newKey)])
}

/** What ChangeKey did to the session. */
export type ChangeKeyResult = {
  /** True when the session's own key changed: authenticate again, with the new key. */
  sessionEnded: boolean
}

/**
 * ChangeKey in CommMode.Full: `90 C4 00 00 Lc KeyNo E(KeyData) MACt 00`.
 * Changing key 0 ends the session; change keys 1–4 first and key 0 last.
 *
 * @throws SecureMessagingError (`session`) when the session is not authenticated with key 0
 * @example
 * const x = changeKey(session, { keyNo: 2, newKey, oldKey, keyVersion: 1 })
 * x.apdu  // 90C4000029022CF362B7… (AN12196 Table 26)
 * x.parse(response) // { sessionEnded: false }
 */
export function changeKey(session: SecureSession, p: ChangeKeyParameters): Exchange<ChangeKeyResult> {
  if (session.keyNo !== 0)
    throw new SecureMessagingError('session', `ChangeKey needs a session authenticated with key 0 (the AppMasterKey); this one used key ${session.keyNo}`)
  const ownKey = p.keyNo === session.keyNo
  const apdu = session.command(INS.changeKey, { header: Buffer.from([p.keyNo]), data: changeKeyData(p, session.keyNo), commMode: 'full' })
  return {
    apdu,
    parse: (response) => {
      session.response(response, ownKey ? { mac: 'none', endsSession: true } : {})
      return { sessionEnded: ownKey }
    },
  }
}

/** A ChangeKey as the card decodes it. */
export type DecodedChangeKey = { ok: true; newKey: Buffer; keyVersion: number } | { ok: false; reason: 'length' | 'crc' }

/**
 * The card's side: recovers the new key and version from the decrypted CmdData,
 * checking the length and, for another key than the session's, the CRC32NK over
 * `data ⊕ oldKey` (a wrong old key fails here: the chip answers 91 1E and keeps the key).
 *
 * @example
 * decodeChangeKeyData(2, 0, keyData, currentKey2) // { ok: true, newKey, keyVersion: 1 }
 */
export function decodeChangeKeyData(keyNo: number, authKeyNo: number, data: Uint8Array, oldKey: KeyInput): DecodedChangeKey {
  if (keyNo === authKeyNo) {
    if (data.length !== 17) return { ok: false, reason: 'length' }
    return { ok: true, newKey: Buffer.from(data.subarray(0, 16)), keyVersion: data[16]! }
  }
  if (data.length !== 21) return { ok: false, reason: 'length' }
  const newKey = xorBytes(data.subarray(0, 16), toAesKey(oldKey, 'oldKey'))
  if (!crc32nk(newKey).equals(data.subarray(17, 21))) return { ok: false, reason: 'crc' }
  return { ok: true, newKey, keyVersion: data[16]! }
}
