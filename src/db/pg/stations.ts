import type { createStationsRepository, StationRow } from '../stations.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

// in_process keeps SQLite's 0/1 in the row type (see types.ts).
const columns = `id, team_id, name, prefix, created_at, revoked_at, mode, event_id, in_process::int AS in_process, test_until, ticket_types,
  bind_attendee_id, bind_rebind::int AS bind_rebind, bind_until`

type NewStation = { teamId: number; name: string; prefix: string; hash: string; now: number }

export function createPgStationsRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createStationsRepository>> {
  const insert = async (s: NewStation, inProcess: boolean) => {
    const [row] = await sql<{ id: number }[]>`INSERT INTO stations (team_id, name, prefix, token_hash, created_at, in_process)
      VALUES (${s.teamId}, ${s.name}, ${s.prefix}, ${s.hash}, ${s.now}, ${inProcess}) RETURNING id`
    return row!.id
  }
  return {
    insert: (s) => insert(s, false),
    async findActiveByHash(hash) {
      const [row] = await sql<StationRow[]>`SELECT ${sql.unsafe(columns)} FROM stations WHERE token_hash = ${hash} AND revoked_at IS NULL`
      return row
    },
    async listByTeam(teamId) {
      return [...(await sql<StationRow[]>`SELECT ${sql.unsafe(columns)} FROM stations WHERE team_id = ${teamId} ORDER BY id`)]
    },
    // The count of rows this call revoked, as SQLite's `.changes`.
    async revokeByPrefix(prefix, now) {
      return (await sql`UPDATE stations SET revoked_at = ${now} WHERE prefix = ${prefix} AND revoked_at IS NULL RETURNING id`).length
    },
    async revokeByHash(hash, now) {
      return (await sql`UPDATE stations SET revoked_at = ${now} WHERE token_hash = ${hash} AND revoked_at IS NULL RETURNING id`).length
    },
    async get(id) {
      const [row] = await sql<StationRow[]>`SELECT ${sql.unsafe(columns)} FROM stations WHERE id = ${id}`
      return row
    },
    async setMode(id, mode, eventId) {
      await sql`UPDATE stations SET mode = ${mode}, event_id = ${eventId} WHERE id = ${id}`
    },
    async rename(id, name) {
      await sql`UPDATE stations SET name = ${name} WHERE id = ${id}`
    },
    async setTestUntil(id, until) {
      await sql`UPDATE stations SET test_until = ${until} WHERE id = ${id}`
    },
    async setTicketTypes(id, types) {
      await sql`UPDATE stations SET ticket_types = ${types === null ? null : JSON.stringify(types)} WHERE id = ${id}`
    },
    async arm(id, a) {
      await sql`UPDATE stations SET bind_attendee_id = ${a?.attendeeId ?? null}, bind_rebind = ${a?.rebind ?? false}, bind_until = ${a?.until ?? null} WHERE id = ${id}`
    },
    // Conditional on the arming the tap read: of two taps at one bind door (any gateway), one binds the guest.
    async takeArmed(id, attendeeId, now) {
      const rows = await sql`UPDATE stations SET bind_attendee_id = NULL, bind_rebind = false, bind_until = NULL
        WHERE id = ${id} AND bind_attendee_id = ${attendeeId} AND bind_until > ${now} RETURNING id`
      return rows.length === 1
    },
    async findInProcess(teamId) {
      const [row] = await sql<StationRow[]>`SELECT ${sql.unsafe(columns)} FROM stations WHERE team_id = ${teamId} AND in_process ORDER BY id LIMIT 1`
      return row
    },
    insertInProcess: (s) => insert(s, true),
  }
}
