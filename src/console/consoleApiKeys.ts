import { createApiKey, revokeApiKey } from '../auth/apiKeys.js'
import type { Store, Repositories } from '../db/store.js'
import { NotFoundError } from '../errors.js'

export type ConsoleApiKey = { prefix: string; label: string | null; createdAt: string; revokedAt: string | null }

/** `key list`: a team's keys, revoked ones included, by prefix; never a key. */
export async function consoleApiKeys(store: Repositories, p: { teamId: number }): Promise<ConsoleApiKey[]> {
  return (await store.apiKeys.listByTeam(p.teamId)).map((k) => ({
    prefix: k.prefix,
    label: k.label,
    createdAt: new Date(k.createdAt).toISOString(),
    revokedAt: k.revokedAt === null ? null : new Date(k.revokedAt).toISOString(),
  }))
}

/** `key create`: the key is in the answer, once; only its hash is stored. */
export async function createConsoleApiKey(store: Store, p: { teamId: number; label: string | null; now: number }): Promise<{ apiKey: string; prefix: string }> {
  const { apiKey, prefix } = await store.tx((tx) => createApiKey(tx, p))
  return { apiKey, prefix }
}

/**
 * `key revoke --prefix`, for one of the team's own active keys: the prefix is looked up among the
 * team's keys first, so a session never revokes by a prefix it does not own.
 *
 * @throws NotFoundError api_key_not_found
 */
export async function revokeConsoleApiKey(store: Store, p: { teamId: number; prefix: string; now: number }): Promise<void> {
  const owned = (await store.apiKeys.listByTeam(p.teamId)).some((k) => k.prefix === p.prefix && k.revokedAt === null)
  if (!owned || (await revokeApiKey(store, { keyOrPrefix: p.prefix, now: p.now })) === 0)
    throw new NotFoundError('api_key_not_found', `No active key of this team has the prefix ${p.prefix}`)
}
