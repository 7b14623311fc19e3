import { createTeam } from '../../auth/apiKeys.js'
import { UsageError, type Flags } from '../usage.js'
import { onePositional, printJson, required, text, withStore } from './context.js'

export async function run(positionals: string[], flags: Flags) {
  const action = onePositional(positionals, 'action (create, list)')
  if (action === 'create') {
    const name = required(flags, 'name')
    await withStore(flags, (store) => {
      const { teamId, apiKey } = createTeam(store, { name, redirectUrl: text(flags, 'redirect-url') ?? null, now: Date.now() })
      printJson({ teamId, apiKey })
    })
  } else if (action === 'list') {
    await withStore(flags, (store) =>
      printJson(
        store.teams.list().map((t) => ({ id: t.id, name: t.name, redirectUrl: t.redirectUrl, createdAt: new Date(t.createdAt).toISOString() })),
      ),
    )
  } else throw new UsageError(`unknown action "team ${action}" (create, list)`)
}
