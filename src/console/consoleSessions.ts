import crypto from 'node:crypto'
import { hashStationToken as hashToken } from '../auth/stationTokens.js'
import type { Store, Repositories } from '../db/store.js'
import type { TeamRow } from '../db/teams.js'
import { NotFoundError, UnauthorizedError } from '../errors.js'

/** A sign-in link works this long after it was made (and once). */
export const CONSOLE_LINK_MS = 60 * 60_000
/** A console session lasts this long from its sign-in, whatever is done meanwhile: the cookie's Max-Age. */
export const CONSOLE_SESSION_MS = 12 * 60 * 60_000

/** A link token: `tgc_` and 32 hex digits (128 random bits). Hex, so no `tg_` shows inside it where the demo key is looked for. */
const newLinkToken = () => `tgc_${crypto.randomBytes(16).toString('hex')}`

export type ConsoleSession = { id: number; team: Pick<TeamRow, 'id' | 'name'>; expiresAt: number }

/**
 * Makes a one-time sign-in link for a team's console: the token is returned once and stored as its
 * SHA-256; it signs in once, within CONSOLE_LINK_MS.
 *
 * @throws NotFoundError team_not_found
 * @example
 * const { token } = await createConsoleLink(store, { teamId: 1, now: Date.now() })
 * console.log(consoleSignInUrl('http://127.0.0.1:8787', token))
 */
export function createConsoleLink(store: Store, p: { teamId: number; now: number }): Promise<{ token: string; expiresAt: number }> {
  return store.tx(async (tx) => {
    if (!await tx.teams.get(p.teamId)) throw new NotFoundError('team_not_found', `No team with id ${p.teamId}`)
    const token = newLinkToken()
    const expiresAt = p.now + CONSOLE_LINK_MS
    await tx.consoleAuth.insertLink({ teamId: p.teamId, hash: hashToken(token), now: p.now, expiresAt })
    return { token, expiresAt }
  })
}

/** The link as it is handed out: the token in the fragment, which a browser never sends, so no log or Referer holds it. */
export const consoleSignInUrl = (base: string, token: string): string => `${base.replace(/\/+$/, '')}/console/sign-in#${token}`

// One answer for unknown, used and expired: whoever holds a stale link learns nothing from which it is.
const linkInvalid = () => new UnauthorizedError('console_link_invalid', 'This sign-in link is not valid (unknown, already used, or expired): make a new one with `tapgate console-link --team ID`')
const signedOut = () => new UnauthorizedError('console_signed_out', 'Not signed in to the console (or the session ended): sign in with a new link from `tapgate console-link --team ID`')

/**
 * Signs in with a link: uses it (once: of two sign-ins with one link, one wins) and opens a session
 * of the link's team for CONSOLE_SESSION_MS. The session token is returned once (the cookie) and
 * stored as its SHA-256.
 *
 * @throws UnauthorizedError console_link_invalid
 */
export function signInWithLink(store: Store, p: { link: string; now: number }): Promise<ConsoleSession & { token: string }> {
  return store.tx(async (tx) => {
    const link = await tx.consoleAuth.findLinkByHash(hashToken(p.link))
    if (!link || !await tx.consoleAuth.useLink(link.id, p.now)) throw linkInvalid()
    const team = await tx.teams.get(link.teamId)
    if (!team) throw linkInvalid()
    const token = crypto.randomBytes(32).toString('base64url')
    const expiresAt = p.now + CONSOLE_SESSION_MS
    const id = await tx.consoleAuth.insertSession({ teamId: team.id, linkId: link.id, hash: hashToken(token), now: p.now, expiresAt })
    return { id, team: { id: team.id, name: team.name }, expiresAt, token }
  })
}

/**
 * The session of a cookie's token: missing, unknown, forged, expired and revoked are one answer.
 *
 * @throws UnauthorizedError console_signed_out
 */
export async function authenticateConsole(store: Repositories, p: { token: string | undefined; now: number }): Promise<ConsoleSession> {
  if (!p.token) throw signedOut()
  const row = await store.consoleAuth.findSessionByHash(hashToken(p.token))
  if (!row || row.revokedAt !== null || row.expiresAt <= p.now) throw signedOut()
  const team = await store.teams.get(row.teamId)
  if (!team) throw signedOut()
  return { id: row.id, team: { id: team.id, name: team.name }, expiresAt: row.expiresAt }
}

/** Signs a session out (DELETE /console/api/session). */
export async function endConsoleSession(store: Store, p: { sessionId: number; now: number }): Promise<void> {
  await store.tx((tx) => tx.consoleAuth.revokeSession(p.sessionId, p.now))
}

/**
 * Ends every console session of a team (`console-link --revoke-sessions`): a lost laptop, a
 * colleague gone. Their next request is 401 console_signed_out.
 *
 * @returns how many sessions were open
 * @throws NotFoundError team_not_found
 */
export function revokeConsoleSessions(store: Store, p: { teamId: number; now: number }): Promise<number> {
  return store.tx(async (tx) => {
    if (!await tx.teams.get(p.teamId)) throw new NotFoundError('team_not_found', `No team with id ${p.teamId}`)
    return tx.consoleAuth.revokeTeamSessions(p.teamId, p.now)
  })
}
