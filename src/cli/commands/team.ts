import { createTeam } from '../../auth/apiKeys.js'
import { RedirectUrl } from '../../schemas/redirectUrl.js'
import { UsageError, type Flags } from '../usage.js'
import { onePositional, printJson, required, text, withStore } from './context.js'

export async function run(positionals: string[], flags: Flags) {
  const action = onePositional(positionals, 'action (create, list)')
  if (action === 'create') {
    const name = required(flags, 'name')
    const redirectUrl = redirectUrlOf(flags)
    await withStore(flags, async (store) => {
      const { teamId, apiKey } = await createTeam(store, { name, redirectUrl, now: Date.now() })
      printJson({ teamId, apiKey })
    })
  } else if (action === 'list') {
    await withStore(flags, async (store) =>
      printJson(
        (await store.teams.list()).map((t) => ({ id: t.id, name: t.name, redirectUrl: t.redirectUrl, createdAt: new Date(t.createdAt).toISOString() })),
      ),
    )
  } else throw new UsageError(`unknown action "team ${action}" (create, list)`)
}

/** --redirect-url, checked by the rule import applies to the same field (an http(s) URL only). */
function redirectUrlOf(flags: Flags): string | null {
  const value = text(flags, 'redirect-url')
  if (value === undefined) return null
  const parsed = RedirectUrl.safeParse(value)
  if (!parsed.success) throw new UsageError(`--redirect-url: ${parsed.error.issues[0]!.message}`)
  return parsed.data
}
