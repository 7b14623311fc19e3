import type { Db } from './sqlite/openDatabase.js'

export type KioskTokenRow = { id: number; stationId: number; prefix: string; createdAt: number; lastSeenAt: number | null; revokedAt: number | null }

const COLUMNS = 'k.id, k.station_id AS stationId, k.prefix, k.created_at AS createdAt, k.last_seen_at AS lastSeenAt, k.revoked_at AS revokedAt'

/** Kiosk page tokens (migrations 007, 012), stored hashed like station tokens. */
export function createKioskTokensRepository(db: Db) {
  const insert = db.prepare<[number, string, string, number]>('INSERT INTO kiosk_tokens (station_id, prefix, token_hash, created_at) VALUES (?, ?, ?, ?)')
  // A revoked station's kiosks stop with it.
  const activeByHash = db.prepare<[string], KioskTokenRow>(
    `SELECT ${COLUMNS}
     FROM kiosk_tokens k JOIN stations s ON s.id = k.station_id
     WHERE k.token_hash = ? AND k.revoked_at IS NULL AND s.revoked_at IS NULL`,
  )
  const byHash = db.prepare<[string], KioskTokenRow>(`SELECT ${COLUMNS} FROM kiosk_tokens k WHERE k.token_hash = ?`)
  const byStation = db.prepare<[number], KioskTokenRow>(`SELECT ${COLUMNS} FROM kiosk_tokens k WHERE k.station_id = ? ORDER BY k.id`)
  const seen = db.prepare<[number, number]>('UPDATE kiosk_tokens SET last_seen_at = ? WHERE id = ?')
  const revoke = db.prepare<[number, number]>('UPDATE kiosk_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
  return {
    insert: (k: { stationId: number; prefix: string; hash: string; now: number }) => Number(insert.run(k.stationId, k.prefix, k.hash, k.now).lastInsertRowid),
    findActiveByHash: (hash: string) => activeByHash.get(hash),
    findByHash: (hash: string) => byHash.get(hash),
    listByStation: (stationId: number) => byStation.all(stationId),
    markSeen: (id: number, now: number) => void seen.run(now, id),
    /** @returns whether this call revoked it (false: it already was) */
    revoke: (id: number, now: number) => revoke.run(now, id).changes === 1,
  }
}
