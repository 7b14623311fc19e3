import type { Store, Repositories } from '../db/store.js'
import type { TokenKey, TokenRow } from '../db/tokens.js'
import { NotFoundError } from '../errors.js'

/**
 * Looks a token up by its on-chain key; another team's token is reported
 * exactly like a missing one. `teamId: null` skips the team check (public reads).
 */
export async function findToken(store: Repositories, key: TokenKey, teamId: number | null): Promise<TokenRow> {
  const token = await store.tokens.findByKey(key)
  if (!token || (teamId !== null && token.teamId !== teamId))
    throw new NotFoundError('token_not_found', 'No phygital token with this contractAddress, chainId and tokenId')
  return token
}

/** The chips linked to a team's token (GET /phygitals/chip). */
export async function getTokenChips(store: Repositories, p: { key: TokenKey; teamId: number }): Promise<{ uid: string; uids: string[] }> {
  const token = await findToken(store, p.key, p.teamId)
  const uids = await store.tokens.chipUids(token.id)
  if (uids.length === 0) throw new NotFoundError('chip_not_found', 'No chip is linked to this token')
  return { uid: uids[0]!, uids }
}
