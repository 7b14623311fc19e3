import { API_KEY_PATTERN, API_KEY_PREFIX_LENGTH, createApiKey, revokeApiKey } from '../../auth/apiKeys.js'
import { NotFoundError } from '../../errors.js'
import { UsageError, type Flags } from '../usage.js'
import { onePositional, printJson, required, teamIdOf, text, withStore } from './context.js'

export async function run(positionals: string[], flags: Flags) {
  const action = onePositional(positionals, 'action (create, revoke, list)')
  if (action === 'create') {
    const teamId = teamIdOf(flags)
    await withStore(flags, async (store) =>
      printJson(await store.tx((tx) => createApiKey(tx, { teamId, label: text(flags, 'label') ?? null, now: Date.now() }))),
    )
  } else if (action === 'revoke') {
    const keyOrPrefix = required(flags, 'prefix')
    const wholeKey = API_KEY_PATTERN.test(keyOrPrefix)
    if (!wholeKey && keyOrPrefix.length !== API_KEY_PREFIX_LENGTH)
      throw new UsageError(`--prefix takes a key prefix (${API_KEY_PREFIX_LENGTH} characters) or a whole key (tg_ + 32 characters)`)
    await withStore(flags, async (store) => {
      const revoked = await revokeApiKey(store, { keyOrPrefix, now: Date.now() })
      // Never the key itself in the message: it may be a real key with a typo.
      const prefix = keyOrPrefix.slice(0, API_KEY_PREFIX_LENGTH)
      if (revoked === 0)
        throw new NotFoundError('api_key_not_found', wholeKey ? `No active key matches that key (prefix ${prefix})` : `No active key has the prefix ${prefix}`)
      printJson({ revoked })
    })
  } else if (action === 'list') {
    const teamId = teamIdOf(flags)
    await withStore(flags, async (store) =>
      printJson(
        (await store.apiKeys.listByTeam(teamId)).map((k) => ({
          prefix: k.prefix,
          label: k.label,
          createdAt: new Date(k.createdAt).toISOString(),
          revokedAt: k.revokedAt === null ? null : new Date(k.revokedAt).toISOString(),
        })),
      ),
    )
  } else throw new UsageError(`unknown action "key ${action}" (create, revoke, list)`)
}
