import type { Db } from './openDatabase.js'

export type StationRow = { id: number; teamId: number; name: string; prefix: string; createdAt: number; revokedAt: number | null }

const columns = 'id, team_id AS teamId, name, prefix, created_at AS createdAt, revoked_at AS revokedAt'

export function createStationsRepository(db: Db) {
  const insert = db.prepare<[number, string, string, string, number]>(
    'INSERT INTO stations (team_id, name, prefix, token_hash, created_at) VALUES (?, ?, ?, ?, ?)',
  )
  const activeByHash = db.prepare<[string], StationRow>(`SELECT ${columns} FROM stations WHERE token_hash = ? AND revoked_at IS NULL`)
  const byTeam = db.prepare<[number], StationRow>(`SELECT ${columns} FROM stations WHERE team_id = ? ORDER BY id`)
  const revoke = db.prepare<[number, string]>('UPDATE stations SET revoked_at = ? WHERE prefix = ? AND revoked_at IS NULL')
  const revokeHash = db.prepare<[number, string]>('UPDATE stations SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL')
  return {
    insert: (s: { teamId: number; name: string; prefix: string; hash: string; now: number }) =>
      Number(insert.run(s.teamId, s.name, s.prefix, s.hash, s.now).lastInsertRowid),
    findActiveByHash: (hash: string) => activeByHash.get(hash),
    listByTeam: (teamId: number) => byTeam.all(teamId),
    revokeByPrefix: (prefix: string, now: number) => revoke.run(now, prefix).changes,
    revokeByHash: (hash: string, now: number) => revokeHash.run(now, hash).changes,
  }
}
