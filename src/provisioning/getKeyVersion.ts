import { expectStatus, INS, nativeApdu } from './apdu.js'
import { checkByte } from './bytes.js'
import { SecureMessagingError } from './errors.js'
import type { Exchange, SecureSession } from './secureMessaging.js'

/**
 * GetKeyVersion (NT4H2421Gx §10.6.2): `90 64 00 00 01 KeyNo 00` → `KeyVer 91 00`.
 * Plain without a session (it needs no key, so a reader can learn which slots a
 * provisioning run already changed before authenticating); CommMode.MAC inside one.
 * Version 00 means factory: provisioning never writes it.
 *
 * @throws RangeError for a key number outside 0–4
 * @example
 * getKeyVersion(1).apdu // 90640000010100
 * getKeyVersion(1).parse(Buffer.from('019100', 'hex')) // 1
 */
export function getKeyVersion(keyNo: number, session?: SecureSession): Exchange<number> {
  checkByte(keyNo, 'keyNo', 0, 4)
  const header = Buffer.from([keyNo])
  if (session) {
    const apdu = session.command(INS.getKeyVersion, { header, commMode: 'mac' })
    return { apdu, parse: (response) => oneByte(session.response(response)) }
  }
  return { apdu: nativeApdu(INS.getKeyVersion, header), parse: (response) => oneByte(expectStatus(response, 'GetKeyVersion')) }
}

function oneByte(data: Buffer): number {
  if (data.length !== 1) throw new SecureMessagingError('length', `GetKeyVersion: expected 1 byte, got ${data.length}`)
  return data[0]!
}
