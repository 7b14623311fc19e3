import type { Store } from '../db/store.js'
import type { TokenKey, TokenRow } from '../db/tokens.js'
import { NotFoundError } from '../errors.js'

/**
 * Looks a token up by its on-chain key; another team's token is reported
 * exactly like a missing one. `teamId: null` skips the team check (public reads).
 */
export function findToken(store: Store, key: TokenKey, teamId: number | null): TokenRow {
  const token = store.tokens.findByKey(key)
  if (!token || (teamId !== null && token.teamId !== teamId))
    throw new NotFoundError('token_not_found', 'No phygital token with this contractAddress, chainId and tokenId')
  return token
}

/** The chips linked to a team's token (GET /phygitals/chip). */
export function getTokenChips(store: Store, p: { key: TokenKey; teamId: number }): { uid: string; uids: string[] } {
  const token = findToken(store, p.key, p.teamId)
  const uids = store.tokens.chipUids(token.id)
  if (uids.length === 0) throw new NotFoundError('chip_not_found', 'No chip is linked to this token')
  return { uid: uids[0]!, uids }
}
