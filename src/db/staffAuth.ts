import type { Db } from './sqlite/openDatabase.js'

export type StaffPinRow = { stationId: number; pinHash: string; failedTries: number; lockedUntil: number | null; consecutiveLocks: number; updatedAt: number }
export type StaffSessionRow = { stationId: number; createdAt: number; lastUsedAt: number; endedAt: number | null }

/** Staff PINs (with their wrong tries and locks) and staff sessions of stations (migrations 007, 012). */
export function createStaffAuthRepository(db: Db) {
  const pin = db.prepare<[number], StaffPinRow>(
    `SELECT station_id AS stationId, pin_hash AS pinHash, failed_tries AS failedTries, locked_until AS lockedUntil,
            consecutive_locks AS consecutiveLocks, updated_at AS updatedAt
     FROM staff_pins WHERE station_id = ?`,
  )
  const setPin = db.prepare<[number, string, number]>(
    `INSERT INTO staff_pins (station_id, pin_hash, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (station_id) DO UPDATE SET pin_hash = excluded.pin_hash, failed_tries = 0, locked_until = NULL, consecutive_locks = 0, updated_at = excluded.updated_at`,
  )
  const setTries = db.prepare<[number, number | null, number, number]>('UPDATE staff_pins SET failed_tries = ?, locked_until = ?, consecutive_locks = ? WHERE station_id = ?')
  const insertSession = db.prepare<[string, number, number, number]>(
    'INSERT INTO staff_sessions (token_hash, station_id, created_at, last_used_at) VALUES (?, ?, ?, ?)',
  )
  const session = db.prepare<[string], StaffSessionRow>(
    'SELECT station_id AS stationId, created_at AS createdAt, last_used_at AS lastUsedAt, ended_at AS endedAt FROM staff_sessions WHERE token_hash = ?',
  )
  const touch = db.prepare<[number, string]>('UPDATE staff_sessions SET last_used_at = max(last_used_at, ?) WHERE token_hash = ? AND ended_at IS NULL')
  const end = db.prepare<[number, string]>('UPDATE staff_sessions SET ended_at = ? WHERE token_hash = ? AND ended_at IS NULL')
  return {
    getPin: (stationId: number) => pin.get(stationId),
    setPin: (stationId: number, pinHash: string, now: number) => setPin.run(stationId, pinHash, now),
    setTries: (stationId: number, t: { failedTries: number; lockedUntil: number | null; consecutiveLocks: number }) =>
      setTries.run(t.failedTries, t.lockedUntil, t.consecutiveLocks, stationId),
    insertSession: (hash: string, stationId: number, now: number) => insertSession.run(hash, stationId, now, now),
    getSession: (hash: string) => session.get(hash),
    touchSession: (hash: string, now: number) => touch.run(now, hash),
    endSession: (hash: string, now: number) => end.run(now, hash).changes === 1,
  }
}
