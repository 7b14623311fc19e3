import { getAddress, isAddress } from 'viem/utils'
import { BadRequestError, UnavailableError } from '../errors.js'

/** Resolves an ENS name to an address; supplied by the chain layer when a mainnet RPC is configured. */
export type EnsResolver = (name: string) => Promise<string | null>

/**
 * Normalizes a recipient to a checksummed address. ENS names need a resolver
 * (an online mainnet RPC); without one they are refused with a clear 400
 * rather than guessed at.
 *
 * @example
 * await resolveRecipient('0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266', {}) // '0xf39F…2266'
 */
export async function resolveRecipient(raw: string, { ens }: { ens?: EnsResolver }): Promise<`0x${string}`> {
  const value = raw.trim()
  if (isAddress(value, { strict: false })) return getAddress(value.toLowerCase())
  if (value.startsWith('0x'))
    throw new BadRequestError('invalid_recipient', 'recipient looks like an address but is not 20 bytes of hex')
  if (!/^([a-z0-9-]+\.)+[a-z0-9-]+$/i.test(value))
    throw new BadRequestError('invalid_recipient', 'recipient must be a 0x address or an ENS name')
  if (!ens)
    throw new BadRequestError(
      'ens_unavailable',
      'ENS names can only be resolved with an online Ethereum mainnet RPC, and none is configured; send a 0x address instead',
    )
  let address: string | null
  try {
    address = await ens(value.toLowerCase())
  } catch (error) {
    throw new UnavailableError('ens_unreachable', `The ENS name ${value} could not be resolved right now: ${(error as Error).message.split('\n')[0]}`)
  }
  if (!address) throw new BadRequestError('ens_not_found', `The ENS name ${value} does not resolve to an address`)
  return getAddress(address)
}
