import { expectStatus, INS, nativeApdu } from './apdu.js'
import { SecureMessagingError } from './errors.js'
import { SW_ADDITIONAL_FRAME, SW_OK } from './statusWords.js'

/**
 * GetVersion (NT4H2421Gx §10.5.2), unauthenticated: three frames, `90 60 00 00 00`
 * then `90 AF 00 00 00` twice; the answers are the hardware part (91 AF), the
 * software part (91 AF), then `UID ‖ production data` (91 00). Read it before
 * authenticating (inside a session it is MAC-protected, which this layer does not do).
 *
 * @example
 * GET_VERSION_APDUS // [9060000000, 90AF000000, 90AF000000]
 */
export const GET_VERSION_APDUS: readonly Buffer[] = [nativeApdu(INS.getVersion), nativeApdu(INS.additionalFrame), nativeApdu(INS.additionalFrame)]

/** The 7-byte hardware or software part of GetVersion. */
export type VersionPart = {
  vendorId: number
  type: number
  subType: number
  majorVersion: number
  minorVersion: number
  /** Storage size byte: 2^(n>>1) bytes, "between that and the next power" when bit 0 is set (0x11: 256 < size ≤ 512). */
  storageSize: number
  protocol: number
}

export type Ntag424Version = {
  hardware: VersionPart
  software: VersionPart
  /** The 7-byte UID, or null when the chip reports zeros (Random ID: learn the UID with GetCardUID). */
  uid: Buffer | null
  /** The rest of part 3 (batch number, fab key, production week and year), uppercase hex, undecoded. */
  production: string
}

function part(data: Buffer): VersionPart {
  const [vendorId, type, subType, majorVersion, minorVersion, storageSize, protocol] = data
  return { vendorId: vendorId!, type: type!, subType: subType!, majorVersion: majorVersion!, minorVersion: minorVersion!, storageSize: storageSize!, protocol: protocol! }
}

/**
 * Parses the three GetVersion answers. HW subtype 02 is 50 pF; sources disagree
 * on 08 (TagTamper or strong back modulation), so this does not classify TagTamper.
 *
 * @throws NtagStatusError when a frame was refused; SecureMessagingError (`length`) for a frame of the wrong size
 * @example
 * parseGetVersion([hwAnswer, swAnswer, uidAnswer]).uid // <04 de 5f 1e ac c0 40>
 */
export function parseGetVersion(responses: readonly Uint8Array[]): Ntag424Version {
  if (responses.length !== 3) throw new SecureMessagingError('length', `GetVersion answers in 3 frames, got ${responses.length}`)
  const hw = expectStatus(responses[0]!, 'GetVersion', [SW_ADDITIONAL_FRAME])
  const sw = expectStatus(responses[1]!, 'GetVersion', [SW_ADDITIONAL_FRAME])
  const last = expectStatus(responses[2]!, 'GetVersion', [SW_OK])
  if (hw.length !== 7 || sw.length !== 7) throw new SecureMessagingError('length', 'GetVersion: the hardware and software parts are 7 bytes each')
  if (last.length < 14) throw new SecureMessagingError('length', `GetVersion: part 3 has ${last.length} bytes, expected at least 14`)
  const uid = last.subarray(0, 7)
  return {
    hardware: part(hw),
    software: part(sw),
    uid: uid.every((b) => b === 0) ? null : Buffer.from(uid),
    production: last.subarray(7).toString('hex').toUpperCase(),
  }
}
