import type { Db } from './sqlite/openDatabase.js'

export type AttendeeChipRow = { id: number; eventId: number; attendeeId: number; chipUid: string; stationId: number | null; boundAt: number; unboundAt: number | null }

const chipColumns = `id, event_id AS eventId, attendee_id AS attendeeId, chip_uid AS chipUid, station_id AS stationId,
  bound_at AS boundAt, unbound_at AS unboundAt`

/** Chips bound to guests (migration 015): imported with the list, or at a bind door. */
export function createAttendeeChipsRepository(db: Db) {
  const bind = db.prepare(
    `INSERT INTO attendee_chips (event_id, attendee_id, chip_uid, station_id, bound_at)
     VALUES (@eventId, @attendeeId, @chipUid, @stationId, @now) ON CONFLICT DO NOTHING`,
  )
  const byChip = db.prepare<[number, string], AttendeeChipRow>(
    `SELECT ${chipColumns} FROM attendee_chips WHERE event_id = ? AND chip_uid = ? AND unbound_at IS NULL`,
  )
  const ofAttendee = db.prepare<[number], AttendeeChipRow>(`SELECT ${chipColumns} FROM attendee_chips WHERE attendee_id = ? AND unbound_at IS NULL ORDER BY id`)
  const ofEvent = db.prepare<[number], AttendeeChipRow>(`SELECT ${chipColumns} FROM attendee_chips WHERE event_id = ? AND unbound_at IS NULL ORDER BY id`)
  const unbindAttendee = db.prepare<[number, number]>('UPDATE attendee_chips SET unbound_at = ? WHERE attendee_id = ? AND unbound_at IS NULL')
  return {
    /**
     * Binds a chip to a guest, unless the chip is bound (to anyone) for the event already, or the guest
     * has a wristband bound at a door already (`stationId` set): the unique indexes decide a race.
     *
     * @returns the binding's id, or null when it was refused
     */
    bind(b: { eventId: number; attendeeId: number; chipUid: string; stationId: number | null; now: number }): number | null {
      const result = bind.run(b)
      return result.changes === 1 ? Number(result.lastInsertRowid) : null
    },
    /** The guest a chip opens the door for at the event, if any. */
    findByChip: (eventId: number, chipUid: string) => byChip.get(eventId, chipUid),
    ofAttendee: (attendeeId: number) => ofAttendee.all(attendeeId),
    ofEvent: (eventId: number) => ofEvent.all(eventId),
    /** A rebind: every chip of the guest stops working for the event now. @returns how many were bound */
    unbindAttendee: (attendeeId: number, now: number) => unbindAttendee.run(now, attendeeId).changes,
  }
}
