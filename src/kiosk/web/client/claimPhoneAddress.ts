/*
 * The phone's verdict on what is in the address field, as typed. parseAddressInput is the gateway's
 * own check (one function, so the page refuses exactly what the gateway would); this adds what only
 * the page knows: whether the person is still typing, and whether names can be looked up here.
 */
import { ADDRESS_INPUT_MESSAGES, parseAddressInput } from '../../../claims/addressInput.js'

export type Verdict =
  /** Nothing wrong yet, nothing to send yet: a hint under the field. */
  | { kind: 'typing'; hint: string }
  | { kind: 'address'; address: `0x${string}` }
  /** A name: the gateway resolves it, and the page shows the answer before Send works. */
  | { kind: 'name'; name: string }
  /** Wrong as it stands (the page's `invalid` state). */
  | { kind: 'invalid'; message: string }

export const NAMES_NEED_INTERNET = 'Names need internet here — use the 0x address'

// A name on its way to `alice.eth` (letters, digits, hyphens, dots; not 0x…).
const NAME_SO_FAR = /^[a-z0-9-]+(?:\.[a-z0-9-]*)*$/i
const HEX_WITHOUT_PREFIX = /^[0-9a-f]{40}$/i

export function checkAddress(text: string, ens: boolean): Verdict {
  const parsed = parseAddressInput(text)
  if (parsed.ok) return { kind: 'address', address: parsed.address }
  const value = text.trim()
  switch (parsed.reason) {
    case 'empty':
      return { kind: 'typing', hint: ens ? 'Your wallet address (0x…) or name (alice.eth)' : ADDRESS_INPUT_MESSAGES.empty }
    case 'partial':
      return { kind: 'typing', hint: ADDRESS_INPUT_MESSAGES.partial }
    case 'checksum':
      return { kind: 'invalid', message: ADDRESS_INPUT_MESSAGES.checksum }
    case 'name':
      return ens ? { kind: 'name', name: parsed.name! } : { kind: 'invalid', message: NAMES_NEED_INTERNET }
    case 'invalid': {
      // The start of an address ("0"), or of a wallet's receive code ("ethereum:…", typed a
      // character at a time by a hand or a scanner): not wrong yet.
      const rest = value.toLowerCase().replace(/^ethereum:(?:pay-)?/, '')
      if ('0x'.startsWith(rest) || 'ethereum:pay-'.startsWith(value.toLowerCase())) return { kind: 'typing', hint: ADDRESS_INPUT_MESSAGES.partial }
      if (HEX_WITHOUT_PREFIX.test(value)) return { kind: 'invalid', message: 'An address starts with 0x: add it in front' }
      if (!/^0x/i.test(value) && NAME_SO_FAR.test(value)) {
        return ens ? { kind: 'typing', hint: 'Keep typing: a name looks like alice.eth' } : { kind: 'invalid', message: NAMES_NEED_INTERNET }
      }
      return { kind: 'invalid', message: ADDRESS_INPUT_MESSAGES.invalid }
    }
  }
}

/** 0x1234…abcd: enough to compare with the wallet app at a glance (the full address is shown too). */
export const shortAddress = (address: string): string => `${address.slice(0, 6)}…${address.slice(-4)}`
