import { type AttendeeImportRow, type createAttendeeImportsRepository, type StagedChip, type StagingConflict, stagedParams } from '../attendeeImports.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

export function createPgAttendeeImportsRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createAttendeeImportsRepository>> {
  // SQLite's applyChunk, the same coalesce rules: a column the file lacks keeps what is stored. xmax = 0 marks a
  // row this statement inserted (an updated one carries the updating transaction's id): the count of new guests
  // without a NOT EXISTS query per chunk, which PostgreSQL planned as a scan of the whole import (30–100 ms a chunk).
  const apply = (importId: number, eventId: number, upto: number, now: number, flagged: boolean) => sql<{ inserted: boolean }[]>`
    INSERT INTO attendees (event_id, name, email, ticket_type, ticket_code, wallet, note, needs_attention, paid, search, created_at, updated_at)
    SELECT ${eventId}, name, email, ticket_type, ticket_code, wallet, note, coalesce(needs_attention, false), paid, search, ${now}, ${now}
    FROM attendee_import_rows WHERE import_id = ${importId} AND id <= ${upto}
      AND ${flagged ? sql`needs_attention IS NOT NULL` : sql`needs_attention IS NULL`} ORDER BY id
    ON CONFLICT (event_id, ticket_code) DO UPDATE SET name = excluded.name, email = coalesce(excluded.email, attendees.email),
      ticket_type = excluded.ticket_type, wallet = coalesce(excluded.wallet, attendees.wallet), note = coalesce(excluded.note, attendees.note),
      ${flagged ? sql`needs_attention = excluded.needs_attention,` : sql``} paid = excluded.paid, search = excluded.search, updated_at = excluded.updated_at
    RETURNING (xmax = 0) AS inserted`
  return {
    async create(eventId, now) {
      const [row] = await sql<{ id: number }[]>`INSERT INTO attendee_imports (event_id, state, created_at, touched_at)
        VALUES (${eventId}, 'staging', ${now}, ${now}) RETURNING id`
      return row!.id
    },
    async setState(importId, state) {
      await sql`UPDATE attendee_imports SET state = ${state} WHERE id = ${importId}`
    },
    async touch(importId, now) {
      await sql`UPDATE attendee_imports SET touched_at = ${now} WHERE id = ${importId}`
    },
    async pending(before) {
      return [...(await sql<AttendeeImportRow[]>`SELECT id, event_id, state, created_at FROM attendee_imports WHERE touched_at < ${before} ORDER BY id`)]
    },
    // One INSERT per call (a chunk of a few thousand rows, 12 parameters each, under PostgreSQL's 65,535);
    // a row either unique index refuses is left out, and its earlier line looked up afterwards.
    async stage(importId, rows) {
      if (rows.length === 0) return []
      const values = rows.map((row) => {
        const p = stagedParams(importId, row)
        return {
          import_id: importId,
          line: p.line,
          name: p.name,
          email: p.email,
          ticket_type: p.ticketType,
          ticket_code: p.ticketCode,
          wallet: p.wallet,
          note: p.note,
          needs_attention: row.needsAttention,
          paid: row.paid !== false,
          chip_uid: p.chipUid,
          chip_column: p.chipColumn,
          search: p.search,
        }
      })
      const staged = new Set<number>()
      for (let i = 0; i < values.length; i += STAGE_BATCH) {
        const part = values.slice(i, i + STAGE_BATCH)
        const returned = await sql<{ line: number }[]>`INSERT INTO attendee_import_rows
          ${sql(part)}
          ON CONFLICT DO NOTHING RETURNING line`
        for (const { line } of returned) staged.add(line)
      }
      const refused = rows.filter((row) => !staged.has(row.line))
      if (refused.length === 0) return []
      const codes = refused.map((row) => row.ticketCode)
      const chipUids = refused.flatMap((row) => (row.chipUid === null ? [] : [row.chipUid]))
      const byCode = new Map<string, number>()
      for (const r of await sql<{ ticketCode: string; line: number }[]>`SELECT ticket_code, line FROM attendee_import_rows
        WHERE import_id = ${importId} AND ticket_code = ANY(${codes}::text[])`)
        byCode.set(r.ticketCode, r.line)
      const byChip = new Map<string, number>()
      if (chipUids.length > 0)
        for (const r of await sql<{ chipUid: string; line: number }[]>`SELECT chip_uid, line FROM attendee_import_rows
          WHERE import_id = ${importId} AND chip_uid = ANY(${chipUids}::text[])`)
          byChip.set(r.chipUid, r.line)
      const conflicts: StagingConflict[] = []
      for (const row of refused) {
        const first = byCode.get(row.ticketCode)
        if (first !== undefined && first !== row.line) conflicts.push({ line: row.line, what: 'ticket', value: row.ticketCode, firstLine: first })
        else if (row.chipUid !== null) conflicts.push({ line: row.line, what: 'chip', value: row.chipUid, firstLine: byChip.get(row.chipUid) ?? 0 })
      }
      return conflicts
    },
    async chipsAfter(importId, afterId, limit) {
      return [
        ...(await sql<(StagedChip & { id: number })[]>`SELECT id, line, ticket_code, chip_uid, chip_column FROM attendee_import_rows
          WHERE import_id = ${importId} AND chip_uid IS NOT NULL AND id > ${afterId} ORDER BY id LIMIT ${limit}`),
      ]
    },
    async applyChunk(importId, eventId, limit, now) {
      const [end] = await sql<{ upto: number | null; rows: number }[]>`SELECT max(id) AS upto, count(*)::int AS rows
        FROM (SELECT id FROM attendee_import_rows WHERE import_id = ${importId} ORDER BY id LIMIT ${limit}) chunk`
      const upto = end!.upto === null ? null : Number(end!.upto)
      if (upto === null) return { rows: 0, inserted: 0, chips: [] }
      let inserted = 0
      for (const flagged of [true, false]) for (const row of await apply(importId, eventId, upto, now, flagged)) if (row.inserted) inserted++
      const chips = [
        ...(await sql<StagedChip[]>`SELECT line, ticket_code, chip_uid, chip_column FROM attendee_import_rows
          WHERE import_id = ${importId} AND id <= ${upto} AND chip_uid IS NOT NULL ORDER BY id`),
      ]
      await sql`DELETE FROM attendee_import_rows WHERE import_id = ${importId} AND id <= ${upto}`
      return { rows: end!.rows, inserted, chips }
    },
    async discard(importId, limit) {
      const dropped = await sql`DELETE FROM attendee_import_rows WHERE id IN
        (SELECT id FROM attendee_import_rows WHERE import_id = ${importId} ORDER BY id LIMIT ${limit})`
      if (dropped.count === 0) await sql`DELETE FROM attendee_imports WHERE id = ${importId}`
      return dropped.count
    },
    async finish(importId) {
      await sql`DELETE FROM attendee_imports WHERE id = ${importId}`
    },
  }
}

/** Rows per INSERT when staging: 12 parameters each. */
const STAGE_BATCH = 2000
