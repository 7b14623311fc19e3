import type { ConsoleLinkRow, ConsoleSessionRow, createConsoleAuthRepository } from '../consoleAuth.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

const linkColumns = 'id, team_id, created_at, expires_at, used_at'
const sessionColumns = 'id, team_id, link_id, created_at, expires_at, revoked_at'

export function createPgConsoleAuthRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createConsoleAuthRepository>> {
  return {
    async insertLink(l) {
      const [row] = await sql<{ id: number }[]>`INSERT INTO console_links (team_id, token_hash, created_at, expires_at)
        VALUES (${l.teamId}, ${l.hash}, ${l.now}, ${l.expiresAt}) RETURNING id`
      return row!.id
    },
    async findLinkByHash(hash) {
      const [row] = await sql<ConsoleLinkRow[]>`SELECT ${sql.unsafe(linkColumns)} FROM console_links WHERE token_hash = ${hash}`
      return row
    },
    // Conditional, as SQLite's: of two sign-ins with one link, the one whose UPDATE changes the row wins.
    async useLink(id, now) {
      const rows = await sql`UPDATE console_links SET used_at = ${now} WHERE id = ${id} AND used_at IS NULL AND expires_at > ${now} RETURNING id`
      return rows.length === 1
    },
    async insertSession(s) {
      const [row] = await sql<{ id: number }[]>`INSERT INTO console_sessions (team_id, link_id, token_hash, created_at, expires_at)
        VALUES (${s.teamId}, ${s.linkId}, ${s.hash}, ${s.now}, ${s.expiresAt}) RETURNING id`
      return row!.id
    },
    async findSessionByHash(hash) {
      const [row] = await sql<ConsoleSessionRow[]>`SELECT ${sql.unsafe(sessionColumns)} FROM console_sessions WHERE token_hash = ${hash}`
      return row
    },
    async revokeSession(id, now) {
      const rows = await sql`UPDATE console_sessions SET revoked_at = ${now} WHERE id = ${id} AND revoked_at IS NULL RETURNING id`
      return rows.length === 1
    },
    async revokeTeamSessions(teamId, now) {
      const rows = await sql`UPDATE console_sessions SET revoked_at = ${now} WHERE team_id = ${teamId} AND revoked_at IS NULL RETURNING id`
      return rows.length
    },
  }
}
