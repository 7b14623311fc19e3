import type { Db } from './sqlite/openDatabase.js'

export type ApiKeyRow = {
  id: number
  teamId: number
  prefix: string
  label: string | null
  createdAt: number
  revokedAt: number | null
}

const columns = 'id, team_id AS teamId, prefix, label, created_at AS createdAt, revoked_at AS revokedAt'

export function createApiKeysRepository(db: Db) {
  const insert = db.prepare<[number, string, string, string | null, number]>(
    'INSERT INTO api_keys (team_id, prefix, key_hash, label, created_at) VALUES (?, ?, ?, ?, ?)',
  )
  const activeByHash = db.prepare<[string], ApiKeyRow>(
    `SELECT ${columns} FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL`,
  )
  const byTeam = db.prepare<[number], ApiKeyRow>(`SELECT ${columns} FROM api_keys WHERE team_id = ? ORDER BY id`)
  const byPrefix = db.prepare<[string], ApiKeyRow>(`SELECT ${columns} FROM api_keys WHERE prefix = ?`)
  const revoke = db.prepare<[number, string]>(
    'UPDATE api_keys SET revoked_at = ? WHERE prefix = ? AND revoked_at IS NULL',
  )
  const revokeHash = db.prepare<[number, string]>('UPDATE api_keys SET revoked_at = ? WHERE key_hash = ? AND revoked_at IS NULL')
  return {
    insert: (k: { teamId: number; prefix: string; hash: string; label: string | null; now: number }) =>
      Number(insert.run(k.teamId, k.prefix, k.hash, k.label, k.now).lastInsertRowid),
    findActiveByHash: (hash: string) => activeByHash.get(hash),
    listByTeam: (teamId: number) => byTeam.all(teamId),
    listByPrefix: (prefix: string) => byPrefix.all(prefix),
    revokeByPrefix: (prefix: string, now: number) => revoke.run(now, prefix).changes,
    revokeByHash: (hash: string, now: number) => revokeHash.run(now, hash).changes,
  }
}
