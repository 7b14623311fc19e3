import type { Address } from 'viem'
import { refuseZeroAddress } from '../chain/recipientCheck.js'
import { BadRequestError } from '../errors.js'
import { type EnsResolver, resolveRecipient } from '../chain/resolveRecipient.js'
import { ADDRESS_INPUT_MESSAGES, parseAddressInput } from './addressInput.js'

/**
 * The address a customer gave at the kiosk or on the phone, checked as strictly as the pages check
 * it as typed (EIP-55 for mixed case, EIP-681 `ethereum:` from a scanner): a typo is refused, never
 * lower-cased into someone else's address. A name goes to ENS (400 ens_unavailable without a
 * mainnet RPC: "use the 0x address").
 *
 * @throws BadRequestError invalid_recipient / recipient_cannot_receive (the zero address) / the ENS refusals
 */
export async function claimRecipient(raw: string, ens: EnsResolver | undefined): Promise<Address> {
  const input = parseAddressInput(raw)
  const address = input.ok ? input.address : input.reason === 'name' ? await resolveRecipient(input.name!, { ens }) : null
  if (address === null) throw new BadRequestError('invalid_recipient', ADDRESS_INPUT_MESSAGES[input.ok ? 'invalid' : input.reason])
  refuseZeroAddress(address)
  return address
}
