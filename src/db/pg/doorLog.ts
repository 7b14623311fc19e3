import type { createDoorLogRepository, DoorPassRow, DoorRefusalReason } from '../doorLog.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

export function createPgDoorLogRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createDoorLogRepository>> {
  return {
    async addPass(p) {
      await sql`INSERT INTO door_passes (check_in_id, station_id, direction, created_at) VALUES (${p.checkInId}, ${p.stationId}, ${p.direction}, ${p.now})`
    },
    async passes(checkInId) {
      return [
        ...(await sql<DoorPassRow[]>`SELECT id, check_in_id, station_id, direction, created_at FROM door_passes
          WHERE check_in_id = ${checkInId} ORDER BY created_at, id`),
      ]
    },
    async addRefusal(r) {
      await sql`INSERT INTO door_refusals (event_id, station_id, attendee_id, chip_uid, reason, created_at)
        VALUES (${r.eventId}, ${r.stationId}, ${r.attendeeId}, ${r.chipUid}, ${r.reason}, ${r.now})`
    },
    async refusals(eventId) {
      const counts: Record<DoorRefusalReason, number> = { not_allowed: 0, no_reentry: 0, not_on_list: 0, not_paid: 0 }
      for (const row of await sql<{ reason: DoorRefusalReason; n: number }[]>`SELECT reason, count(*) AS n FROM door_refusals WHERE event_id = ${eventId} GROUP BY reason`)
        counts[row.reason] = row.n
      return counts
    },
  }
}
