import { createApiKey, revokeApiKey } from '../../auth/apiKeys.js'
import { UsageError, type GlobalOptions } from '../usage.js'
import { printJson, required, teamIdOf, withStore } from './context.js'

export async function key(action: string, o: GlobalOptions & { team?: string; label?: string; prefix?: string }) {
  if (action === 'create') {
    const teamId = teamIdOf(o.team)
    await withStore(o, (store) => printJson(store.tx(() => createApiKey(store, { teamId, label: o.label ?? null, now: Date.now() }))))
  } else if (action === 'revoke') {
    const prefix = String(required(o.prefix, '--prefix'))
    await withStore(o, (store) => {
      const revoked = revokeApiKey(store, { keyOrPrefix: prefix, now: Date.now() })
      if (revoked === 0) throw new UsageError(`no active key has the prefix ${prefix.slice(0, 10)}`)
      printJson({ revoked })
    })
  } else if (action === 'list') {
    const teamId = teamIdOf(o.team)
    await withStore(o, (store) =>
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
