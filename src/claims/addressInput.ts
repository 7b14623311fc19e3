/*
 * What a customer gives as their wallet: typed on the kiosk's keyboard or a phone, pasted, or typed
 * by a USB 2D scanner reading their wallet's receive QR code. Shared by the gateway and both pages
 * (esbuild bundles it), so the page's "as typed" verdict and the gateway's are the same function.
 */
// viem/utils, not the root: the root entry costs the gateway ~55 ms more at start-up.
import { getAddress, isAddress } from 'viem/utils'

export type AddressInput =
  | { ok: true; address: `0x${string}` }
  | {
      ok: false
      /**
       * empty: nothing yet; partial: a 0x address still being typed; checksum: mixed case that fails
       * EIP-55 (a typo); invalid: not an address; name: an ENS name (resolved by the gateway).
       */
      reason: 'empty' | 'partial' | 'checksum' | 'invalid' | 'name'
      name?: string
    }

// EIP-681: ethereum:[pay-]<address>[@chainId][/function][?params]. Wallets' receive codes are the
// plain form, some with @chainId; anything after the address does not change who receives.
const EIP681 = /^ethereum:(?:pay-)?([^@/?]+)/i
const NAME = /^(?:[a-z0-9-]+\.)+[a-z]{2,}$/i

export function parseAddressInput(text: string): AddressInput {
  let value = text.trim()
  const uri = EIP681.exec(value)
  if (uri) value = uri[1]!
  if (value === '') return { ok: false, reason: 'empty' }
  if (/^0x[0-9a-f]*$/i.test(value)) {
    if (value.length < 42) return { ok: false, reason: 'partial' }
    if (value.length > 42) return { ok: false, reason: 'invalid' }
    // strict: a mixed-case address must pass EIP-55; one case throughout carries no checksum.
    if (!isAddress(value, { strict: true })) return { ok: false, reason: 'checksum' }
    return { ok: true, address: getAddress(value) }
  }
  if (!uri && NAME.test(value)) return { ok: false, reason: 'name', name: value.toLowerCase() }
  return { ok: false, reason: 'invalid' }
}

/** What the page says for each verdict (the gateway's errors use the same words). */
export const ADDRESS_INPUT_MESSAGES: Record<Exclude<AddressInput, { ok: true }>['reason'], string> = {
  empty: 'Enter your wallet address (0x…)',
  partial: 'Keep typing: an address has 40 characters after 0x',
  checksum: 'This address has a typo: its capital letters do not match (EIP-55 checksum)',
  invalid: 'This is not a wallet address',
  name: 'A name: it is looked up before anything is sent',
}
