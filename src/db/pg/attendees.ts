import { type AttendeeRow, type createAttendeesRepository, searchPattern, searchText } from '../attendees.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

// needs_attention keeps SQLite's 0/1 in the row type (see types.ts).
const columns = `a.id, a.event_id, a.name, a.email, a.ticket_type, a.ticket_code, a.wallet, a.note,
  a.needs_attention::int AS needs_attention, a.created_at, a.updated_at`

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
            search: searchText(row.name, row.email, row.ticketCode),
            created_at: now,
            updated_at: now,
          }))
          await sql`
            INSERT INTO attendees ${sql(values, 'event_id', 'name', 'email', 'ticket_type', 'ticket_code', 'wallet', 'note', 'needs_attention', 'search', 'created_at', 'updated_at')}
            ON CONFLICT (event_id, ticket_code) DO UPDATE SET name = excluded.name, email = coalesce(excluded.email, attendees.email),
              ticket_type = excluded.ticket_type, wallet = coalesce(excluded.wallet, attendees.wallet), note = coalesce(excluded.note, attendees.note),
              ${flagged ? sql`needs_attention = excluded.needs_attention,` : sql``} search = excluded.search, updated_at = excluded.updated_at`
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
  }
}
