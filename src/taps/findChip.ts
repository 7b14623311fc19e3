import type { Store } from '../db/store.js'
import { BadRequestError } from '../errors.js'
import type { Keyring } from './createKeyring.js'
import { TapRejectedError } from './tapErrors.js'
import { verifyTapBatched } from './verifyTap.js'

export type FoundChip = {
  uid: string
  isValidTap: boolean
  linkedToken: { contractAddress: string; chainId: number; tokenId: string } | null
  /** The ref this tap minted, as a tap's redirect carries it; absent on a replay. */
  ref?: string
}

/**
 * GET /chips/find: a hosted chip URL's `e` (PICCData) and `c` (SDMMAC) judged as a phone tap is,
 * so a find consumes the counter and mints a ref like a tap, and the same URL cannot be spent twice
 * through either door. A replay answers `isValidTap: false` with the chip, as the hosted API does;
 * any other refusal is one 400 whatever the reason, as /tap answers one page, so the endpoint
 * cannot be used to learn which UIDs are registered.
 *
 * @throws BadRequestError tap_refused
 * @throws SealedKeyError (503) when the chip keys do not open under the gateway secret
 */
export async function findChip(store: Store, keyring: Keyring, p: { e: string; c: string; now: number }): Promise<FoundChip> {
  // The hosted `d` is not SDM file data, so it stays out: the MAC input of an `e`/`c` URL is empty.
  const url = `https://chips.find.invalid/?e=${p.e}&c=${p.c}`
  try {
    const tap = await verifyTapBatched(store, keyring, { url, source: 'phone', layout: { piccParam: 'e', macParam: 'c' }, now: p.now })
    return { uid: tap.uid, isValidTap: true, linkedToken: await linkedToken(store, tap.uid), ref: tap.refId }
  } catch (error) {
    if (!(error instanceof TapRejectedError)) throw error
    // A replay is judged after the MAC verified: the chip is surely this one, only the tap is spent.
    if (error.reason === 'counter_replay' && error.uid !== null) return { uid: error.uid, isValidTap: false, linkedToken: await linkedToken(store, error.uid) }
    throw new BadRequestError('tap_refused', 'The chip URL was not accepted: not a valid tap of a chip registered here (the reason is in the tap log)')
  }
}

async function linkedToken(store: Store, uid: string): Promise<FoundChip['linkedToken']> {
  const token = await store.tokens.findByChip(uid)
  return token ? { contractAddress: token.contractAddress, chainId: token.chainId, tokenId: token.tokenId } : null
}
