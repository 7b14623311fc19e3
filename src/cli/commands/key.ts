import { createApiKey, revokeApiKey } from '../../auth/apiKeys.js'
import { NotFoundError } from '../../errors.js'
import { UsageError, type Flags } from '../usage.js'
import { onePositional, printJson, required, teamIdOf, text, withStore } from './context.js'

export async function run(positionals: string[], flags: Flags) {
  const action = onePositional(positionals, 'action (create, revoke, list)')
  if (action === 'create') {
    const teamId = teamIdOf(flags)
    await withStore(flags, (store) =>
      printJson(store.tx(() => createApiKey(store, { teamId, label: text(flags, 'label') ?? null, now: Date.now() }))),
    )
  } else if (action === 'revoke') {
    const prefix = required(flags, 'prefix')
    await withStore(flags, (store) => {
      const revoked = revokeApiKey(store, { keyOrPrefix: prefix, now: Date.now() })
      if (revoked === 0) throw new NotFoundError('api_key_not_found', `No active key has the prefix ${prefix.slice(0, 10)}`)
      printJson({ revoked })
    })
  } else if (action === 'list') {
    const teamId = teamIdOf(flags)
    await withStore(flags, (store) =>
      printJson(
        store.apiKeys.listByTeam(teamId).map((k) => ({
          prefix: k.prefix,
          label: k.label,
          createdAt: new Date(k.createdAt).toISOString(),
          revokedAt: k.revokedAt === null ? null : new Date(k.revokedAt).toISOString(),
        })),
      ),
    )
  } else throw new UsageError(`unknown action "key ${action}" (create, revoke, list)`)
}
