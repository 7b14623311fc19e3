import { INS } from './apdu.js'
import { SecureMessagingError } from './errors.js'
import type { Exchange, SecureSession } from './secureMessaging.js'

/*
 * SetConfiguration (NT4H2421Gx §10.5.1, Tables 49–50): CommMode.Full with the
 * AppMasterKey; the option byte is the plain CmdHeader, the data is encrypted.
 * Only the two provisioning options are here, and both are permanent: a chip
 * can never go back to AES mode or to a fixed UID. The `irreversible: true`
 * field makes a caller say so in code.
 */

/**
 * A SetConfiguration this layer builds:
 *
 * - `randomId` (option 00, data `02`): the chip answers anticollision with a new
 *   random ID per tap and GetVersion with zeros; the UID then comes only from
 *   GetCardUID after authenticating (AN12196 §7.2, Table 28).
 * - `lrp` (option 05, data `00000000 02 000000 00 00`, i.e. PDCap2.1 bit 1): LRP
 *   secure messaging and LRP SUN from now on; AES authentication then answers 91 9D.
 *   PDCap2.5 and PDCap2.6 (the last two bytes) stay 00.
 */
export type ConfigurationChange = { option: 'randomId'; irreversible: true } | { option: 'lrp'; irreversible: true }

/**
 * The option byte and plaintext data of a configuration change.
 *
 * @example
 * configurationData({ option: 'lrp', irreversible: true }) // { option: 0x05, data: 00000000020000000000 }
 */
export function configurationData(change: ConfigurationChange): { option: number; data: Buffer } {
  if (change.irreversible !== true) throw new RangeError('SetConfiguration options here are irreversible: say so with irreversible: true')
  if (change.option === 'randomId') return { option: 0x00, data: Buffer.from([0x02]) }
  if (change.option === 'lrp') return { option: 0x05, data: Buffer.from('00000000020000000000', 'hex') }
  throw new RangeError('unknown SetConfiguration option')
}

/**
 * SetConfiguration in CommMode.Full. The switch to LRP ends the AES session: a
 * real chip answers it with a bare 91 00 (no MAC), so that answer is accepted
 * unverified and the proof is the next authentication, in LRP mode. Random ID
 * answers with a MAC (AN12196 Table 28) and the session goes on.
 *
 * @throws SecureMessagingError (`session`) when the session is not authenticated with key 0
 * @example
 * setConfiguration(session, { option: 'randomId', irreversible: true }).apdu // 905C000019008EA0138A… (AN12196 Table 28)
 */
export function setConfiguration(session: SecureSession, change: ConfigurationChange): Exchange<void> {
  if (session.keyNo !== 0) throw new SecureMessagingError('session', 'SetConfiguration needs a session authenticated with key 0 (the AppMasterKey)')
  const { option, data } = configurationData(change)
  const lrp = change.option === 'lrp'
  const apdu = session.command(INS.setConfiguration, { header: Buffer.from([option]), data, commMode: 'full' })
  return {
    apdu,
    parse: (response) => {
      session.response(response, lrp ? { mac: 'optional', endsSession: true } : {})
    },
  }
}
