import type { Db } from './sqlite/openDatabase.js'

export type StationRow = {
  id: number
  teamId: number
  name: string
  prefix: string
  createdAt: number
  revokedAt: number | null
  /** Migration 007: what the station is for (null: no mode, taps as before), its event, test-chip window. */
  mode: 'checkin' | 'bind' | 'exit' | 'claim' | 'closed' | null
  eventId: number | null
  inProcess: number
  testUntil: number | null
  /** Migration 015: the ticket types this door admits (a JSON array; null: every type). */
  ticketTypes: string | null
  /** The guest a bind door's next tap binds (until bindUntil); bindRebind 1: after unbinding their chips. */
  bindAttendeeId: number | null
  bindRebind: number
  bindUntil: number | null
}

const columns = `id, team_id AS teamId, name, prefix, created_at AS createdAt, revoked_at AS revokedAt,
  mode, event_id AS eventId, in_process AS inProcess, test_until AS testUntil, ticket_types AS ticketTypes,
  bind_attendee_id AS bindAttendeeId, bind_rebind AS bindRebind, bind_until AS bindUntil`

export function createStationsRepository(db: Db) {
  const insert = db.prepare<[number, string, string, string, number]>(
    'INSERT INTO stations (team_id, name, prefix, token_hash, created_at) VALUES (?, ?, ?, ?, ?)',
  )
  const activeByHash = db.prepare<[string], StationRow>(`SELECT ${columns} FROM stations WHERE token_hash = ? AND revoked_at IS NULL`)
  const byTeam = db.prepare<[number], StationRow>(`SELECT ${columns} FROM stations WHERE team_id = ? ORDER BY id`)
  const revoke = db.prepare<[number, string]>('UPDATE stations SET revoked_at = ? WHERE prefix = ? AND revoked_at IS NULL')
  const revokeHash = db.prepare<[number, string]>('UPDATE stations SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL')
  const byId = db.prepare<[number], StationRow>(`SELECT ${columns} FROM stations WHERE id = ?`)
  const setMode = db.prepare<[string | null, number | null, number]>('UPDATE stations SET mode = ?, event_id = ? WHERE id = ?')
  const setTicketTypes = db.prepare<[string | null, number]>('UPDATE stations SET ticket_types = ? WHERE id = ?')
  const rename = db.prepare<[string, number]>('UPDATE stations SET name = ? WHERE id = ?')
  const arm = db.prepare<[number | null, number, number | null, number]>('UPDATE stations SET bind_attendee_id = ?, bind_rebind = ?, bind_until = ? WHERE id = ?')
  // Conditional on the arming the tap read: of two taps at one bind door, one binds the guest.
  const takeArmed = db.prepare<[number, number, number]>(
    'UPDATE stations SET bind_attendee_id = NULL, bind_rebind = 0, bind_until = NULL WHERE id = ? AND bind_attendee_id = ? AND bind_until > ?',
  )
  const setTestUntil = db.prepare<[number | null, number]>('UPDATE stations SET test_until = ? WHERE id = ?')
  const inProcessOf = db.prepare<[number], StationRow>(`SELECT ${columns} FROM stations WHERE team_id = ? AND in_process = 1 ORDER BY id LIMIT 1`)
  const insertInProcess = db.prepare<[number, string, string, string, number]>(
    'INSERT INTO stations (team_id, name, prefix, token_hash, created_at, in_process) VALUES (?, ?, ?, ?, ?, 1)',
  )
  return {
    insert: (s: { teamId: number; name: string; prefix: string; hash: string; now: number }) =>
      Number(insert.run(s.teamId, s.name, s.prefix, s.hash, s.now).lastInsertRowid),
    findActiveByHash: (hash: string) => activeByHash.get(hash),
    listByTeam: (teamId: number) => byTeam.all(teamId),
    revokeByPrefix: (prefix: string, now: number) => revoke.run(now, prefix).changes,
    revokeByHash: (hash: string, now: number) => revokeHash.run(now, hash).changes,
    get: (id: number) => byId.get(id),
    setMode: (id: number, mode: StationRow['mode'], eventId: number | null) => setMode.run(mode, eventId, id),
    setTestUntil: (id: number, until: number | null) => setTestUntil.run(until, id),
    rename: (id: number, name: string) => void rename.run(name, id),
    /** The ticket types the door admits; null: every type. */
    setTicketTypes: (id: number, types: string[] | null) => setTicketTypes.run(types === null ? null : JSON.stringify(types), id),
    /** Arms a bind door with a guest until `until` (null disarms). */
    arm: (id: number, a: { attendeeId: number; rebind: boolean; until: number } | null) =>
      arm.run(a?.attendeeId ?? null, a?.rebind ? 1 : 0, a?.until ?? null, id),
    /** A tap takes the door's arming for `attendeeId` if it still holds at `now`. @returns whether this call took it */
    takeArmed: (id: number, attendeeId: number, now: number) => takeArmed.run(id, attendeeId, now).changes === 1,
    /** The team's in-process station (the gateway's own readers), if it has been started once. */
    findInProcess: (teamId: number) => inProcessOf.get(teamId),
    insertInProcess: (s: { teamId: number; name: string; prefix: string; hash: string; now: number }) =>
      Number(insertInProcess.run(s.teamId, s.name, s.prefix, s.hash, s.now).lastInsertRowid),
  }
}
