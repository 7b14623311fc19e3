import type { CheckInDetail, createCheckInsRepository, DoorCheckInCounts } from '../checkIns.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

// manual keeps SQLite's 0/1 in the row type (see types.ts); the names are aliased snake_case so the
// client camelCases them (an unquoted camelCase alias would come back lower-cased).
const detail = `SELECT ci.id, ci.event_id, ci.chip_uid, ci.station_id, ci.manual::int AS manual, ci.mint_id, ci.chain_tx_id, ci.created_at,
  ci.undone_at, ci.attendee_id, ci.left_at, e.name AS event_name, s.name AS station_name
  FROM check_ins ci JOIN guestbook_events e ON e.id = ci.event_id JOIN stations s ON s.id = ci.station_id`

export function createPgCheckInsRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createCheckInsRepository>> {
  return {
    // ON CONFLICT DO NOTHING: the partial unique indexes check_ins_once and check_ins_attendee_once settle
    // stations racing for one chip or one guest, on any gateway (a SERIALIZABLE loser is retried by the
    // store and then sees the winner).
    async insert(c) {
      const [row] = await sql<{ id: number }[]>`INSERT INTO check_ins (event_id, chip_uid, attendee_id, station_id, manual, created_at)
        VALUES (${c.eventId}, ${c.chipUid}, ${c.attendeeId ?? null}, ${c.stationId}, ${c.manual}, ${c.now}) ON CONFLICT DO NOTHING RETURNING id`
      return row ? row.id : null
    },
    async get(id) {
      const [row] = await sql<CheckInDetail[]>`${sql.unsafe(detail)} WHERE ci.id = ${id}`
      return row
    },
    async findActive(eventId, chipUid) {
      const [row] = await sql<CheckInDetail[]>`${sql.unsafe(detail)} WHERE ci.event_id = ${eventId} AND ci.chip_uid = ${chipUid} AND ci.undone_at IS NULL`
      return row
    },
    async findActiveByAttendee(eventId, attendeeId) {
      const [row] = await sql<CheckInDetail[]>`${sql.unsafe(detail)} WHERE ci.event_id = ${eventId} AND ci.attendee_id = ${attendeeId} AND ci.undone_at IS NULL`
      return row
    },
    async markLeft(id, now) {
      return (await sql`UPDATE check_ins SET left_at = ${now} WHERE id = ${id} AND undone_at IS NULL AND left_at IS NULL RETURNING id`).length === 1
    },
    async markBack(id) {
      return (await sql`UPDATE check_ins SET left_at = NULL WHERE id = ${id} AND undone_at IS NULL AND left_at IS NOT NULL RETURNING id`).length === 1
    },
    async doorCounts(eventId) {
      const [row] = await sql<DoorCheckInCounts[]>`SELECT count(*) AS checked_in, count(attendee_id) AS with_attendee,
        count(*) FILTER (WHERE left_at IS NULL) AS inside, min(created_at) AS first FROM check_ins WHERE event_id = ${eventId} AND undone_at IS NULL`
      return row!
    },
    async perTicketType(eventId) {
      return [
        ...(await sql<{ ticketType: string; checkedIn: number }[]>`SELECT a.ticket_type, count(*) AS checked_in FROM check_ins ci
          JOIN attendees a ON a.id = ci.attendee_id WHERE ci.event_id = ${eventId} AND ci.undone_at IS NULL
          GROUP BY a.ticket_type ORDER BY a.ticket_type COLLATE "C"`),
      ]
    },
    async arrivals(eventId, bucketMs, since) {
      return [
        ...(await sql<{ at: number; count: number }[]>`SELECT created_at - created_at % ${bucketMs}::bigint AS at, count(*) AS count
          FROM check_ins WHERE event_id = ${eventId} AND undone_at IS NULL AND created_at >= ${since} GROUP BY 1 ORDER BY 1`),
      ]
    },
    async findByTx(chainTxId) {
      const [row] = await sql<CheckInDetail[]>`${sql.unsafe(detail)} WHERE ci.chain_tx_id = ${chainTxId} ORDER BY ci.id DESC LIMIT 1`
      return row
    },
    async lastAtStation(stationId) {
      const [row] = await sql<CheckInDetail[]>`${sql.unsafe(detail)} WHERE ci.station_id = ${stationId} AND ci.undone_at IS NULL
        ORDER BY ci.created_at DESC, ci.id DESC LIMIT 1`
      return row
    },
    async setMint(id, mintId, chainTxId) {
      await sql`UPDATE check_ins SET mint_id = ${mintId}, chain_tx_id = ${chainTxId} WHERE id = ${id}`
    },
    async dropMintOfTx(chainTxId) {
      await sql`UPDATE check_ins SET mint_id = NULL WHERE chain_tx_id = ${chainTxId}`
    },
    async undo(id, now) {
      const rows = await sql`UPDATE check_ins SET undone_at = ${now} WHERE id = ${id} AND undone_at IS NULL RETURNING id`
      return rows.length === 1
    },
    async countEvent(eventId) {
      const [row] = await sql<{ n: number }[]>`SELECT count(*) AS n FROM check_ins WHERE event_id = ${eventId} AND undone_at IS NULL`
      return row!.n
    },
    async countStation(stationId, eventId, since) {
      const [row] = await sql<{ n: number; recent: number }[]>`SELECT count(*) AS n, count(*) FILTER (WHERE created_at >= ${since}) AS recent
        FROM check_ins WHERE station_id = ${stationId} AND event_id = ${eventId} AND undone_at IS NULL`
      return row!
    },
    async perEvent(teamId) {
      return [
        ...(await sql<{ eventId: number; name: string; n: number }[]>`SELECT e.id AS event_id, e.name, count(ci.id) AS n FROM guestbook_events e
          LEFT JOIN check_ins ci ON ci.event_id = e.id AND ci.undone_at IS NULL
          WHERE e.team_id = ${teamId} GROUP BY e.id ORDER BY e.id`),
      ]
    },
    async perStation(teamId, since) {
      return [
        ...(await sql<{ stationId: number; n: number; recent: number }[]>`SELECT s.id AS station_id, count(ci.id) AS n,
          count(ci.id) FILTER (WHERE ci.created_at >= ${since}) AS recent FROM stations s
          LEFT JOIN check_ins ci ON ci.station_id = s.id AND ci.event_id = s.event_id AND ci.undone_at IS NULL
          WHERE s.team_id = ${teamId} GROUP BY s.id ORDER BY s.id`),
      ]
    },
  }
}
