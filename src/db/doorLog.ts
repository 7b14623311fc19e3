import type { Db } from './sqlite/openDatabase.js'

export type DoorPassRow = { id: number; checkInId: number; stationId: number; direction: 'in' | 'out'; createdAt: number }
export type DoorRefusalReason = 'not_allowed' | 'no_reentry' | 'not_on_list' | 'not_paid'

/** Exits and re-entries after a check-in, and the taps a door turned away (migration 015). */
export function createDoorLogRepository(db: Db) {
  const pass = db.prepare('INSERT INTO door_passes (check_in_id, station_id, direction, created_at) VALUES (@checkInId, @stationId, @direction, @now)')
  const passes = db.prepare<[number], DoorPassRow>(
    `SELECT id, check_in_id AS checkInId, station_id AS stationId, direction, created_at AS createdAt FROM door_passes
     WHERE check_in_id = ? ORDER BY created_at, id`,
  )
  const refuse = db.prepare(
    `INSERT INTO door_refusals (event_id, station_id, attendee_id, chip_uid, reason, created_at)
     VALUES (@eventId, @stationId, @attendeeId, @chipUid, @reason, @now)`,
  )
  const refusals = db.prepare<[number], { reason: DoorRefusalReason; n: number }>(
    'SELECT reason, count(*) AS n FROM door_refusals WHERE event_id = ? GROUP BY reason',
  )
  return {
    addPass: (p: { checkInId: number; stationId: number; direction: 'in' | 'out'; now: number }) => void pass.run(p),
    passes: (checkInId: number) => passes.all(checkInId),
    addRefusal: (r: { eventId: number; stationId: number; attendeeId: number | null; chipUid: string | null; reason: DoorRefusalReason; now: number }) =>
      void refuse.run(r),
    /** The event's refused taps per reason (every reason present, 0 when none). */
    refusals(eventId: number): Record<DoorRefusalReason, number> {
      const counts: Record<DoorRefusalReason, number> = { not_allowed: 0, no_reentry: 0, not_on_list: 0, not_paid: 0 }
      for (const row of refusals.all(eventId)) counts[row.reason] = row.n
      return counts
    },
  }
}
