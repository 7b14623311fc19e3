import type { Store } from '../db/store.js'
import type { TokenKey } from '../db/tokens.js'
import { PhygitalMetadata } from '../schemas/metadata.js'
import { parseJsonField } from '../validation/issuesToErrors.js'
import { findToken } from './findTeamToken.js'

/**
 * PATCH /phygitals/metadata: validates and replaces a team token's metadata.
 * Unknown fields are kept. Validation happens before the transaction, so bad
 * input never touches what is stored.
 */
export function updateTokenMetadata(store: Store, p: { key: TokenKey; teamId: number; metadata: string; now: number }): void {
  const metadata = parseJsonField(p.metadata, PhygitalMetadata, 'metadata')
  store.tx(() => {
    const token = findToken(store, p.key, p.teamId)
    store.tokens.setMetadata(token.id, JSON.stringify(metadata), p.now)
  })
}
