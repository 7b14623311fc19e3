import { consoleSignInUrl, createConsoleLink, revokeConsoleSessions } from '../../console/consoleSessions.js'
import { UsageError, type Flags } from '../usage.js'
import { noPositionals, printJson, teamIdOf, text, withStore } from './context.js'

/**
 * `console-link --team ID [--base-url URL]`: a one-time sign-in link to the team's web console,
 * printed on one line (the token in the fragment). `--revoke-sessions`: ends every console session
 * of the team instead (a lost laptop); make a new link afterwards to sign in again.
 */
export async function run(positionals: string[], flags: Flags) {
  noPositionals(positionals)
  const teamId = teamIdOf(flags)
  const baseFlag = text(flags, 'base-url')
  if (flags['revoke-sessions'] === true) {
    if (baseFlag !== undefined) throw new UsageError('--revoke-sessions makes no link: leave out --base-url')
    await withStore(flags, async (store) => printJson({ teamId, revokedSessions: await revokeConsoleSessions(store, { teamId, now: Date.now() }) }))
    return
  }
  if (baseFlag !== undefined && !/^https?:\/\/[^\s#?]+$/.test(baseFlag)) throw new UsageError(`--base-url takes the gateway's address as the browser reaches it, e.g. http://192.168.1.20:8787 (got ${baseFlag})`)
  await withStore(flags, async (store, config) => {
    // As `station kiosk-url`: the flag, else publicBaseUrl, else this machine's gateway.
    const base = baseFlag ?? config.publicBaseUrl ?? `http://127.0.0.1:${config.port}`
    const { token } = await createConsoleLink(store, { teamId, now: Date.now() })
    console.log(consoleSignInUrl(base, token))
  })
}
