import { createTeam } from '../../auth/apiKeys.js'
import { UsageError, type GlobalOptions } from '../usage.js'
import { printJson, required, withStore } from './context.js'

export async function team(action: string, o: GlobalOptions & { name?: string; redirectUrl?: string }) {
  if (action === 'create') {
    const name = required(o.name, '--name')
    await withStore(o, (store) => {
      const { teamId, apiKey } = createTeam(store, { name: String(name), redirectUrl: o.redirectUrl ?? null, now: Date.now() })
      printJson({ teamId, apiKey })
    })
  } else if (action === 'list') {
    await withStore(o, (store) =>
      printJson(store.teams.list().map((t) => ({ id: t.id, name: t.name, redirectUrl: t.redirectUrl, createdAt: new Date(t.createdAt).toISOString() }))),
    )
  } else throw new UsageError(`unknown action "team ${action}" (create, list)`)
}
