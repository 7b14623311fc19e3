import type { Db } from './openDatabase.js'

export type KioskTokenRow = { id: number; stationId: number; prefix: string; createdAt: number; revokedAt: number | null }

/** Kiosk page tokens (migration 007), stored hashed like station tokens. */
export function createKioskTokensRepository(db: Db) {
  const insert = db.prepare<[number, string, string, number]>('INSERT INTO kiosk_tokens (station_id, prefix, token_hash, created_at) VALUES (?, ?, ?, ?)')
  // A revoked station's kiosks stop with it.
  const activeByHash = db.prepare<[string], KioskTokenRow>(
    `SELECT k.id, k.station_id AS stationId, k.prefix, k.created_at AS createdAt, k.revoked_at AS revokedAt
     FROM kiosk_tokens k JOIN stations s ON s.id = k.station_id
     WHERE k.token_hash = ? AND k.revoked_at IS NULL AND s.revoked_at IS NULL`,
  )
  return {
    insert: (k: { stationId: number; prefix: string; hash: string; now: number }) => Number(insert.run(k.stationId, k.prefix, k.hash, k.now).lastInsertRowid),
    findActiveByHash: (hash: string) => activeByHash.get(hash),
  }
}
