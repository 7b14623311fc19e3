import { type AttendeeExportPass, type AttendeeExportRow, type AttendeeRow, type createAttendeesRepository, searchPattern, searchText } from '../attendees.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

// needs_attention keeps SQLite's 0/1 in the row type (see types.ts).
const columns = `a.id, a.event_id, a.name, a.email, a.ticket_type, a.ticket_code, a.wallet, a.note,
  a.needs_attention::int AS needs_attention, a.paid::int AS paid, a.created_at, a.updated_at`

/** Rows per INSERT of an import: 9 parameters each, well under PostgreSQL's 65,535. */
const BATCH = 1000

export function createPgAttendeesRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createAttendeesRepository>> {
  const count = async (eventId: number) => (await sql<{ n: number }[]>`SELECT count(*) AS n FROM attendees WHERE event_id = ${eventId}`)[0]!.n
  const page = async (eventId: number, pattern: string, limit: number, offset: number) => [
    ...(await sql<AttendeeRow[]>`SELECT ${sql.unsafe(columns)} FROM attendees a WHERE a.event_id = ${eventId} AND a.search LIKE ${pattern} ESCAPE '\\'
      ORDER BY a.name COLLATE "C", a.id LIMIT ${limit} OFFSET ${offset}`),
  ]
  return {
    // SQLite's per-row upsert, a batch per statement: the same coalesce rules for the columns a file may leave out.
    // needs_attention is NOT NULL, so a row without the flag inserts false and its update keeps the stored one: such
    // rows go in a statement of their own.
    async upsertMany(eventId, rows, now) {
      const before = await count(eventId)
      for (let i = 0; i < rows.length; i += BATCH) {
        const batch = rows.slice(i, i + BATCH)
        for (const flagged of [true, false]) {
          const part = batch.filter((row) => (row.needsAttention !== null) === flagged)
          if (part.length === 0) continue
          const values = part.map((row) => ({
            event_id: eventId,
            name: row.name,
            email: row.email,
            ticket_type: row.ticketType,
            ticket_code: row.ticketCode,
            wallet: row.wallet,
            note: row.note,
            needs_attention: row.needsAttention ?? false,
            paid: row.paid !== false,
            search: searchText(row.name, row.email, row.ticketCode),
            created_at: now,
            updated_at: now,
          }))
          await sql`
            INSERT INTO attendees ${sql(values, 'event_id', 'name', 'email', 'ticket_type', 'ticket_code', 'wallet', 'note', 'needs_attention', 'paid', 'search', 'created_at', 'updated_at')}
            ON CONFLICT (event_id, ticket_code) DO UPDATE SET name = excluded.name, email = coalesce(excluded.email, attendees.email),
              ticket_type = excluded.ticket_type, wallet = coalesce(excluded.wallet, attendees.wallet), note = coalesce(excluded.note, attendees.note),
              ${flagged ? sql`needs_attention = excluded.needs_attention,` : sql``} paid = excluded.paid, search = excluded.search, updated_at = excluded.updated_at`
        }
      }
      const inserted = (await count(eventId)) - before
      return { inserted, updated: rows.length - inserted }
    },
    async get(id) {
      const [row] = await sql<AttendeeRow[]>`SELECT ${sql.unsafe(columns)} FROM attendees a WHERE a.id = ${id}`
      return row
    },
    async findByCode(eventId, ticketCode) {
      const [row] = await sql<AttendeeRow[]>`SELECT ${sql.unsafe(columns)} FROM attendees a WHERE a.event_id = ${eventId} AND a.ticket_code = ${ticketCode}`
      return row
    },
    search: (eventId, query, limit) => page(eventId, searchPattern(query), limit, 0),
    async list(eventId, p) {
      const pattern = searchPattern(p.query ?? '')
      const [row] = await sql<{ n: number }[]>`SELECT count(*) AS n FROM attendees a WHERE a.event_id = ${eventId} AND a.search LIKE ${pattern} ESCAPE '\\'`
      return { attendees: await page(eventId, pattern, p.limit, p.offset), total: row!.n }
    },
    countEvent: count,
    async perType(eventId) {
      return [
        ...(await sql<{ ticketType: string; expected: number }[]>`SELECT ticket_type, count(*) AS expected FROM attendees WHERE event_id = ${eventId}
          GROUP BY ticket_type ORDER BY ticket_type COLLATE "C"`),
      ]
    },
    async setNeedsAttention(id, needsAttention, now) {
      await sql`UPDATE attendees SET needs_attention = ${needsAttention}, updated_at = ${now} WHERE id = ${id}`
    },
    async exportPage(eventId, after, limit) {
      return [
        ...(await sql<AttendeeExportRow[]>`
          SELECT a.id, a.name, a.email, a.ticket_type, a.ticket_code, a.wallet, a.note, a.needs_attention::int AS needs_attention, a.paid::int AS paid,
            (SELECT string_agg(ac.chip_uid, ' ' ORDER BY ac.id) FROM attendee_chips ac WHERE ac.attendee_id = a.id AND ac.unbound_at IS NULL) AS chips,
            c.id AS check_in_id, c.created_at AS checked_in_at, s.name AS check_in_station, c.manual::int AS manual, c.left_at,
            t.status AS tx_status, t.reverted::int AS tx_reverted, t.tx_hash, t.initial_tx_hash AS tx_initial_hash
          FROM attendees a
          LEFT JOIN check_ins c ON c.event_id = a.event_id AND c.attendee_id = a.id AND c.undone_at IS NULL
          LEFT JOIN stations s ON s.id = c.station_id
          LEFT JOIN chain_txs t ON t.id = c.chain_tx_id
          WHERE a.event_id = ${eventId} AND (a.name COLLATE "C", a.id) > (${after.name}::text COLLATE "C", ${after.id}::bigint)
          ORDER BY a.name COLLATE "C", a.id LIMIT ${limit}`),
      ]
    },
    async exportPasses(eventId, attendeeIds) {
      return [
        ...(await sql<AttendeeExportPass[]>`
          SELECT p.check_in_id, p.direction, p.created_at, s.name AS station_name
          FROM door_passes p JOIN check_ins c ON c.id = p.check_in_id JOIN stations s ON s.id = p.station_id
          WHERE c.event_id = ${eventId} AND c.undone_at IS NULL AND c.attendee_id = ANY(${attendeeIds}::bigint[]) ORDER BY p.created_at, p.id`),
      ]
    },
  }
}
