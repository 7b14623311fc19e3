import { aesCmac } from './aesCmac.js'
import { lrpCmac } from './lrpCmac.js'
import type { KeyInput } from './aesKey.js'
import type { SunMode } from './sunResult.js'

/**
 * Truncates a full 16-byte CMAC to the 8-byte SDMMAC: the bytes at odd indexes
 * 1, 3, …, 15 (NXP's MACt truncation, not the first 8 bytes).
 *
 * @example
 * truncateMac(Buffer.from('E194C7EE12D9F7EE8A65C8331B704386', 'hex')) // 94EED9EE65337086
 */
export function truncateMac(full: Uint8Array, out: Buffer = Buffer.allocUnsafe(8)): Buffer {
  for (let i = 0; i < 8; i++) out[i] = full[2 * i + 1]!
  return out
}

export type SdmMacParameters = {
  /** KSesSDMFileReadMAC (AES) or the LRP session key. */
  sessionKey: KeyInput
  /** The exact ASCII the chip MACed, from SDMMACInputOffset up to the MAC; often empty. Case matters. */
  macInput: string
  mode?: SunMode
}

/**
 * The 8-byte SDMMAC over the exact ASCII MAC input.
 *
 * @example
 * sdmMac({ sessionKey: '3FB5F6E3A807A03D5E3570ACE393776F', macInput: '' }) // 94EED9EE65337086
 */
export function sdmMac(p: SdmMacParameters): Buffer {
  const full = (p.mode ?? 'aes') === 'aes' ? aesCmac(p.sessionKey, p.macInput) : lrpCmac(p.sessionKey, p.macInput)
  return truncateMac(full)
}
