import type { Db } from './sqlite/openDatabase.js'

export type ConsoleLinkRow = { id: number; teamId: number; createdAt: number; expiresAt: number; usedAt: number | null }
export type ConsoleSessionRow = { id: number; teamId: number; linkId: number; createdAt: number; expiresAt: number; revokedAt: number | null }

const LINK_COLUMNS = 'id, team_id AS teamId, created_at AS createdAt, expires_at AS expiresAt, used_at AS usedAt'
const SESSION_COLUMNS = 'id, team_id AS teamId, link_id AS linkId, created_at AS createdAt, expires_at AS expiresAt, revoked_at AS revokedAt'

/** The console's sign-in links and sessions (migration 020), both stored as the SHA-256 of their token. */
export function createConsoleAuthRepository(db: Db) {
  const insertLink = db.prepare<[number, string, number, number]>('INSERT INTO console_links (team_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?)')
  const linkByHash = db.prepare<[string], ConsoleLinkRow>(`SELECT ${LINK_COLUMNS} FROM console_links WHERE token_hash = ?`)
  // Conditional: of two sign-ins with one link, the one whose UPDATE changes the row wins.
  const useLink = db.prepare<[number, number, number]>('UPDATE console_links SET used_at = ? WHERE id = ? AND used_at IS NULL AND expires_at > ?')
  const insertSession = db.prepare<[number, number, string, number, number]>(
    'INSERT INTO console_sessions (team_id, link_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)',
  )
  const sessionByHash = db.prepare<[string], ConsoleSessionRow>(`SELECT ${SESSION_COLUMNS} FROM console_sessions WHERE token_hash = ?`)
  const revokeSession = db.prepare<[number, number]>('UPDATE console_sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
  const revokeTeam = db.prepare<[number, number]>('UPDATE console_sessions SET revoked_at = ? WHERE team_id = ? AND revoked_at IS NULL')
  return {
    insertLink: (l: { teamId: number; hash: string; now: number; expiresAt: number }) => Number(insertLink.run(l.teamId, l.hash, l.now, l.expiresAt).lastInsertRowid),
    findLinkByHash: (hash: string) => linkByHash.get(hash),
    /** @returns whether this call used it (false: used already, or expired at `now`) */
    useLink: (id: number, now: number) => useLink.run(now, id, now).changes === 1,
    insertSession: (s: { teamId: number; linkId: number; hash: string; now: number; expiresAt: number }) =>
      Number(insertSession.run(s.teamId, s.linkId, s.hash, s.now, s.expiresAt).lastInsertRowid),
    findSessionByHash: (hash: string) => sessionByHash.get(hash),
    /** @returns whether this call revoked it */
    revokeSession: (id: number, now: number) => revokeSession.run(now, id).changes === 1,
    /** @returns how many of the team's sessions this call revoked */
    revokeTeamSessions: (teamId: number, now: number) => revokeTeam.run(now, teamId).changes,
  }
}
