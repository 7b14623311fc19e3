import type { createStaffAuthRepository, StaffPinRow, StaffSessionRow } from '../staffAuth.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

export function createPgStaffAuthRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createStaffAuthRepository>> {
  return {
    /*
     * The caller counts a wrong PIN as getPin, then setTries(failedTries + 1) in one transaction; on
     * SQLite nothing runs between the two. The row lock makes that hold at READ COMMITTED too: a racer
     * waits here and reads the committed count (under SERIALIZABLE it is aborted and retried instead).
     */
    async getPin(stationId) {
      const [row] = await sql<StaffPinRow[]>`SELECT station_id, pin_hash, failed_tries, locked_until, consecutive_locks, updated_at
        FROM staff_pins WHERE station_id = ${stationId} FOR NO KEY UPDATE`
      return row
    },
    async setPin(stationId, pinHash, now) {
      await sql`INSERT INTO staff_pins (station_id, pin_hash, updated_at) VALUES (${stationId}, ${pinHash}, ${now})
        ON CONFLICT (station_id) DO UPDATE SET pin_hash = excluded.pin_hash, failed_tries = 0, locked_until = NULL, consecutive_locks = 0,
          updated_at = excluded.updated_at`
    },
    async setTries(stationId, t) {
      await sql`UPDATE staff_pins SET failed_tries = ${t.failedTries}, locked_until = ${t.lockedUntil}, consecutive_locks = ${t.consecutiveLocks}
        WHERE station_id = ${stationId}`
    },
    async insertSession(hash, stationId, now) {
      await sql`INSERT INTO staff_sessions (token_hash, station_id, created_at, last_used_at) VALUES (${hash}, ${stationId}, ${now}, ${now})`
    },
    async getSession(hash) {
      const [row] = await sql<StaffSessionRow[]>`SELECT station_id, created_at, last_used_at, ended_at FROM staff_sessions WHERE token_hash = ${hash}`
      return row
    },
    async touchSession(hash, now) {
      await sql`UPDATE staff_sessions SET last_used_at = GREATEST(last_used_at, ${now}) WHERE token_hash = ${hash} AND ended_at IS NULL`
    },
    async endSession(hash, now) {
      const rows = await sql`UPDATE staff_sessions SET ended_at = ${now} WHERE token_hash = ${hash} AND ended_at IS NULL RETURNING token_hash`
      return rows.length === 1
    },
  }
}
