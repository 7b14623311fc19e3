import { INS } from './apdu.js'
import { SecureMessagingError } from './errors.js'
import type { Exchange, SecureSession } from './secureMessaging.js'

/**
 * GetCardUID (NT4H2421Gx §10.5.3; AN12196 Table 29): the real 7-byte UID, in
 * CommMode.Full with any key. With Random ID enabled this is the only way to
 * learn it: GetVersion and the reader's anticollision show random bytes or zeros.
 * The command carries no data (`90 51 00 00 08 MACt 00`); the answer is
 * `E(UID ‖ 80 00…) ‖ MACt`, decrypted with the response IV (CmdCtr + 1).
 *
 * @throws SecureMessagingError (`length`) from parse when the decrypted UID is not 7 bytes
 * @example
 * const x = getCardUid(session) // x.apdu: 90510000088E2C155ADDA99BE300 (AN12196 Table 29)
 * x.parse(response) // <04 95 8c aa 5c 5e 80>
 */
export function getCardUid(session: SecureSession): Exchange<Buffer> {
  const apdu = session.command(INS.getCardUid, { commMode: 'full' })
  return {
    apdu,
    parse: (response) => {
      const uid = session.response(response)
      if (uid.length !== 7) throw new SecureMessagingError('length', `GetCardUID: expected a 7-byte UID, got ${uid.length} bytes`)
      return uid
    },
  }
}
