import type { AttendeeChipRow, createAttendeeChipsRepository } from '../attendeeChips.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

const columns = 'id, event_id, attendee_id, chip_uid, station_id, bound_at, unbound_at'

export function createPgAttendeeChipsRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createAttendeeChipsRepository>> {
  return {
    // ON CONFLICT DO NOTHING, as on SQLite: either unique index (the chip's, the guest's door binding) refuses.
    async bind(b) {
      const [row] = await sql<{ id: number }[]>`INSERT INTO attendee_chips (event_id, attendee_id, chip_uid, station_id, bound_at)
        VALUES (${b.eventId}, ${b.attendeeId}, ${b.chipUid}, ${b.stationId}, ${b.now}) ON CONFLICT DO NOTHING RETURNING id`
      return row?.id ?? null
    },
    async findByChip(eventId, chipUid) {
      const [row] = await sql<AttendeeChipRow[]>`SELECT ${sql.unsafe(columns)} FROM attendee_chips
        WHERE event_id = ${eventId} AND chip_uid = ${chipUid} AND unbound_at IS NULL`
      return row
    },
    async ofAttendee(attendeeId) {
      return [...(await sql<AttendeeChipRow[]>`SELECT ${sql.unsafe(columns)} FROM attendee_chips WHERE attendee_id = ${attendeeId} AND unbound_at IS NULL ORDER BY id`)]
    },
    async ofEvent(eventId) {
      return [...(await sql<AttendeeChipRow[]>`SELECT ${sql.unsafe(columns)} FROM attendee_chips WHERE event_id = ${eventId} AND unbound_at IS NULL ORDER BY id`)]
    },
    async unbindAttendee(attendeeId, now) {
      const rows = await sql`UPDATE attendee_chips SET unbound_at = ${now} WHERE attendee_id = ${attendeeId} AND unbound_at IS NULL RETURNING id`
      return rows.length
    },
  }
}
