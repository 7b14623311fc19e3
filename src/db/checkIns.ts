import type { Db } from './sqlite/openDatabase.js'

export type CheckInRow = {
  id: number
  eventId: number
  /** null: a guest checked in by name, with no chip (events with a guest list). */
  chipUid: string | null
  stationId: number
  manual: number
  mintId: number | null
  chainTxId: number | null
  createdAt: number
  undoneAt: number | null
  /** Migration 015: the guest (events with a guest list), and when they went out (null: inside). */
  attendeeId: number | null
  leftAt: number | null
}

/** The event's door numbers from its check-ins (active ones: not undone). */
export type DoorCheckInCounts = { checkedIn: number; withAttendee: number; inside: number; first: number | null }

/** A check-in with what a feed row shows of it: the event's and the station's names. */
export type CheckInDetail = CheckInRow & { eventName: string; stationName: string }

const columns = `ci.id, ci.event_id AS eventId, ci.chip_uid AS chipUid, ci.station_id AS stationId, ci.manual,
  ci.mint_id AS mintId, ci.chain_tx_id AS chainTxId, ci.created_at AS createdAt, ci.undone_at AS undoneAt,
  ci.attendee_id AS attendeeId, ci.left_at AS leftAt`
const detail = `SELECT ${columns}, e.name AS eventName, s.name AS stationName
  FROM check_ins ci JOIN guestbook_events e ON e.id = ci.event_id JOIN stations s ON s.id = ci.station_id`

/** Check-ins (migration 007): one per chip per event, undone ones excepted (the unique index). */
export function createCheckInsRepository(db: Db) {
  // ON CONFLICT DO NOTHING: the partial unique indexes settle two stations racing for one chip, or
  // for one guest (two chips of one guest tapped at two doors at once).
  const insert = db.prepare(
    `INSERT INTO check_ins (event_id, chip_uid, attendee_id, station_id, manual, created_at)
     VALUES (@eventId, @chipUid, @attendeeId, @stationId, @manual, @now) ON CONFLICT DO NOTHING`,
  )
  const byId = db.prepare<[number], CheckInDetail>(`${detail} WHERE ci.id = ?`)
  const active = db.prepare<[number, string], CheckInDetail>(`${detail} WHERE ci.event_id = ? AND ci.chip_uid = ? AND ci.undone_at IS NULL`)
  const activeByAttendee = db.prepare<[number, number], CheckInDetail>(`${detail} WHERE ci.event_id = ? AND ci.attendee_id = ? AND ci.undone_at IS NULL`)
  // Conditional on left_at: of two exit doors (or two gateways) only one records the guest leaving.
  const markLeft = db.prepare<[number, number]>('UPDATE check_ins SET left_at = ? WHERE id = ? AND undone_at IS NULL AND left_at IS NULL')
  const markBack = db.prepare<[number]>('UPDATE check_ins SET left_at = NULL WHERE id = ? AND undone_at IS NULL AND left_at IS NOT NULL')
  const doorCounts = db.prepare<[number], DoorCheckInCounts>(
    `SELECT count(*) AS checkedIn, count(attendee_id) AS withAttendee, count(*) FILTER (WHERE left_at IS NULL) AS inside,
       min(created_at) AS first FROM check_ins WHERE event_id = ? AND undone_at IS NULL`,
  )
  const perType = db.prepare<[number], { ticketType: string; checkedIn: number }>(
    `SELECT a.ticket_type AS ticketType, count(*) AS checkedIn FROM check_ins ci JOIN attendees a ON a.id = ci.attendee_id
     WHERE ci.event_id = ? AND ci.undone_at IS NULL GROUP BY a.ticket_type ORDER BY a.ticket_type`,
  )
  // created_at - created_at % bucket: SQLite's % is an integer one even for a bound number (a REAL).
  const arrivals = db.prepare<[number, number, number], { at: number; count: number }>(
    `SELECT created_at - created_at % ? AS at, count(*) AS count FROM check_ins WHERE event_id = ? AND undone_at IS NULL AND created_at >= ?
     GROUP BY 1 ORDER BY 1`,
  )
  // The newest: an undone check-in and the chip's next one share the mint they both point at.
  const byTx = db.prepare<[number], CheckInDetail>(`${detail} WHERE ci.chain_tx_id = ? ORDER BY ci.id DESC LIMIT 1`)
  const lastAtStation = db.prepare<[number], CheckInDetail>(
    `${detail} WHERE ci.station_id = ? AND ci.undone_at IS NULL ORDER BY ci.created_at DESC, ci.id DESC LIMIT 1`,
  )
  const setMint = db.prepare<[number | null, number | null, number]>('UPDATE check_ins SET mint_id = ?, chain_tx_id = ? WHERE id = ?')
  const dropMint = db.prepare<[number]>('UPDATE check_ins SET mint_id = NULL WHERE chain_tx_id = ?')
  const undo = db.prepare<[number, number]>('UPDATE check_ins SET undone_at = ? WHERE id = ? AND undone_at IS NULL')
  const countEvent = db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM check_ins WHERE event_id = ? AND undone_at IS NULL')
  const countStation = db.prepare<[number, number, number], { n: number; recent: number }>(
    `SELECT count(*) AS n, count(*) FILTER (WHERE created_at >= ?) AS recent FROM check_ins
     WHERE station_id = ? AND event_id = ? AND undone_at IS NULL`,
  )
  const perEvent = db.prepare<[number], { eventId: number; name: string; n: number }>(
    `SELECT e.id AS eventId, e.name, count(ci.id) AS n FROM guestbook_events e
     LEFT JOIN check_ins ci ON ci.event_id = e.id AND ci.undone_at IS NULL
     WHERE e.team_id = ? GROUP BY e.id ORDER BY e.id`,
  )
  const perStation = db.prepare<[number, number], { stationId: number; n: number; recent: number }>(
    `SELECT s.id AS stationId, count(ci.id) AS n, count(ci.id) FILTER (WHERE ci.created_at >= ?) AS recent FROM stations s
     LEFT JOIN check_ins ci ON ci.station_id = s.id AND ci.event_id = s.event_id AND ci.undone_at IS NULL
     WHERE s.team_id = ? GROUP BY s.id ORDER BY s.id`,
  )
  return {
    /** @returns the new check-in's id, or null when the chip (or the guest) is checked in to the event already */
    insert(c: { eventId: number; chipUid: string | null; attendeeId?: number | null; stationId: number; manual: boolean; now: number }): number | null {
      const result = insert.run({ ...c, attendeeId: c.attendeeId ?? null, manual: c.manual ? 1 : 0 })
      return result.changes === 1 ? Number(result.lastInsertRowid) : null
    },
    get: (id: number) => byId.get(id),
    findActive: (eventId: number, chipUid: string) => active.get(eventId, chipUid),
    findActiveByAttendee: (eventId: number, attendeeId: number) => activeByAttendee.get(eventId, attendeeId),
    findByTx: (chainTxId: number) => byTx.get(chainTxId),
    /** An exit: @returns whether this call recorded it (false: undone, out already, or another door did) */
    markLeft: (id: number, now: number) => markLeft.run(now, id).changes === 1,
    /** A re-entry: @returns whether this call recorded it (false: inside already, or another door did) */
    markBack: (id: number) => markBack.run(id).changes === 1,
    /** The event's check-ins, those with a guest, those inside now, and the first one's time. */
    doorCounts: (eventId: number) => doorCounts.get(eventId)!,
    /** The event's check-ins per ticket type of their guests. */
    perTicketType: (eventId: number) => perType.all(eventId),
    /** The event's check-ins since `since`, per bucket of `bucketMs` (its start, epoch ms; empty buckets left out). */
    arrivals: (eventId: number, bucketMs: number, since: number) => arrivals.all(bucketMs, eventId, since),
    lastAtStation: (stationId: number) => lastAtStation.get(stationId),
    setMint: (id: number, mintId: number | null, chainTxId: number | null) => setMint.run(mintId, chainTxId, id),
    /** A reverted mint's guestbook_mints row is about to be deleted: the check-in keeps its tx id only. */
    dropMintOfTx: (chainTxId: number) => dropMint.run(chainTxId),
    undo: (id: number, now: number) => undo.run(now, id).changes === 1,
    countEvent: (eventId: number) => countEvent.get(eventId)!.n,
    /** A station's check-ins for an event, and those since `since` (epoch ms). */
    countStation: (stationId: number, eventId: number, since: number) => countStation.get(since, stationId, eventId)!,
    perEvent: (teamId: number) => perEvent.all(teamId),
    perStation: (teamId: number, since: number) => perStation.all(since, teamId),
  }
}
