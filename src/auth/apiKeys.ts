import crypto from 'node:crypto'
import type { Store, Repositories } from '../db/store.js'
import type { TeamRow } from '../db/teams.js'
import { ConflictError, NotFoundError, UnauthorizedError } from '../errors.js'

/** How many leading characters of a key are stored in clear, to tell keys apart (`tg_` + 7). */
export const API_KEY_PREFIX_LENGTH = 10
const PREFIX_LENGTH = API_KEY_PREFIX_LENGTH

/** A whole API key: `tg_` + 24 random bytes in base64url. */
export const API_KEY_PATTERN = /^tg_[\w-]{32}$/

export const hashApiKey = (key: string): string => crypto.createHash('sha256').update(key).digest('hex')

export type CreateApiKeyReturnType = { teamId: number; apiKey: string; prefix: string }

/**
 * Creates an API key for a team. The key itself is returned once and never
 * stored: only its SHA-256 and a short prefix (to tell keys apart) are kept.
 *
 * @example
 * const { apiKey } = createApiKey(store, { teamId: 1, label: 'kiosk', now: Date.now() })
 */
export async function createApiKey(store: Repositories, p: { teamId: number; label?: string | null; now: number }): Promise<CreateApiKeyReturnType> {
  if (!await store.teams.get(p.teamId)) throw new NotFoundError('team_not_found', `No team with id ${p.teamId}`)
  const apiKey = `tg_${crypto.randomBytes(24).toString('base64url')}`
  const prefix = apiKey.slice(0, PREFIX_LENGTH)
  await store.apiKeys.insert({ teamId: p.teamId, prefix, hash: hashApiKey(apiKey), label: p.label ?? null, now: p.now })
  return { teamId: p.teamId, apiKey, prefix }
}

/**
 * Revokes by prefix (the 10 characters `key list` shows) or by the whole key. Anything longer than a
 * prefix is taken as a whole key and must match a stored hash: cutting it down to its prefix would
 * revoke the real key for anyone who knows only its first 10 characters.
 *
 * @returns the number of keys revoked (0 when nothing active matched)
 */
export function revokeApiKey(store: Store, p: { keyOrPrefix: string; now: number }): Promise<number> {
  return store.tx(async (tx) =>
    p.keyOrPrefix.length <= PREFIX_LENGTH
      ? await tx.apiKeys.revokeByPrefix(p.keyOrPrefix, p.now)
      : await tx.apiKeys.revokeByHash(hashApiKey(p.keyOrPrefix), p.now),
  )
}

/**
 * Resolves an `x-service-api-key` header to its team.
 * @throws UnauthorizedError when the key is unknown or revoked
 */
export async function authenticateApiKey(store: Repositories, key: string): Promise<TeamRow> {
  const row = await store.apiKeys.findActiveByHash(hashApiKey(key))
  const team = row && await store.teams.get(row.teamId)
  if (!team) throw new UnauthorizedError('invalid_api_key', 'The API key is unknown or has been revoked')
  return team
}

/** Creates a team and its first API key in one transaction. */
export function createTeam(store: Store, p: { name: string; redirectUrl?: string | null; now: number }): Promise<CreateApiKeyReturnType> {
  return store.tx(async (tx) => {
    if (await tx.teams.getByName(p.name)) throw new ConflictError('team_exists', `A team named ${JSON.stringify(p.name)} already exists`)
    const teamId = await tx.teams.insert({ name: p.name, redirectUrl: p.redirectUrl ?? null, now: p.now })
    return createApiKey(tx, { teamId, label: 'initial', now: p.now })
  })
}
