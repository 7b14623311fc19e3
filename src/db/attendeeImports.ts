import { type AttendeeInput, searchText } from './attendees.js'
import type { Db } from './sqlite/openDatabase.js'

/** A checked row of a guest list file, staged before it goes on the list (migration 018): the guest, and where it came from. */
export type StagedAttendee = AttendeeInput & {
  line: number
  chipUid: string | null
  /** The column the chip came from, for an error found when it is bound. */
  chipColumn: string | null
}

/** A staged row that repeats a ticket code or a chip of an earlier line of the same file. */
export type StagingConflict = { line: number; what: 'ticket' | 'chip'; value: string; firstLine: number }

/** A staged row with a chip, for the chip checks and the binding. */
export type StagedChip = { line: number; ticketCode: string; chipUid: string; chipColumn: string }

/** What one applied chunk did: its rows are on the list and gone from the staging table. */
export type AppliedChunk = { rows: number; inserted: number; chips: StagedChip[] }

export type AttendeeImportRow = { id: number; eventId: number; state: 'staging' | 'applying'; createdAt: number }

/** The params of one staged row's insert (the flag as SQLite's 0/1, the search text made once). */
export function stagedParams(importId: number, row: StagedAttendee) {
  return {
    importId,
    line: row.line,
    name: row.name,
    email: row.email,
    ticketType: row.ticketType,
    ticketCode: row.ticketCode,
    wallet: row.wallet,
    note: row.note,
    needsAttention: row.needsAttention === null ? null : row.needsAttention ? 1 : 0,
    paid: row.paid === false ? 0 : 1,
    chipUid: row.chipUid,
    chipColumn: row.chipColumn,
    search: searchText(row.name, row.email, row.ticketCode),
  }
}

// A file's row updates a guest as upsertMany does: a column the file lacks (NULL here) keeps what is stored.
const applySql = (flagged: boolean) => `
  INSERT INTO attendees (event_id, name, email, ticket_type, ticket_code, wallet, note, needs_attention, paid, search, created_at, updated_at)
  SELECT @eventId, name, email, ticket_type, ticket_code, wallet, note, coalesce(needs_attention, 0), paid, search, @now, @now
  FROM attendee_import_rows WHERE import_id = @importId AND id <= @upto AND needs_attention IS ${flagged ? 'NOT NULL' : 'NULL'} ORDER BY id
  ON CONFLICT (event_id, ticket_code) DO UPDATE SET name = excluded.name, email = coalesce(excluded.email, attendees.email),
    ticket_type = excluded.ticket_type, wallet = coalesce(excluded.wallet, attendees.wallet), note = coalesce(excluded.note, attendees.note),
    ${flagged ? 'needs_attention = excluded.needs_attention,' : ''} paid = excluded.paid, search = excluded.search, updated_at = excluded.updated_at`

/**
 * Guest list imports in progress (migration 018): rows staged in chunks, checked for repeats by the
 * table's unique indexes, then moved onto the list a chunk per transaction.
 */
export function createAttendeeImportsRepository(db: Db) {
  const create = db.prepare<[number, number, number]>("INSERT INTO attendee_imports (event_id, state, created_at, touched_at) VALUES (?, 'staging', ?, ?)")
  const setState = db.prepare<[string, number]>('UPDATE attendee_imports SET state = ? WHERE id = ?')
  const touch = db.prepare<[number, number]>('UPDATE attendee_imports SET touched_at = ? WHERE id = ?')
  const pending = db.prepare<[number], AttendeeImportRow>(
    'SELECT id, event_id AS eventId, state, created_at AS createdAt FROM attendee_imports WHERE touched_at < ? ORDER BY id',
  )
  const stage = db.prepare(
    `INSERT INTO attendee_import_rows (import_id, line, name, email, ticket_type, ticket_code, wallet, note, needs_attention, paid, chip_uid, chip_column, search)
     VALUES (@importId, @line, @name, @email, @ticketType, @ticketCode, @wallet, @note, @needsAttention, @paid, @chipUid, @chipColumn, @search)
     ON CONFLICT DO NOTHING`,
  )
  const ticketLine = db.prepare<[number, string], { line: number }>('SELECT line FROM attendee_import_rows WHERE import_id = ? AND ticket_code = ?')
  const chipLine = db.prepare<[number, string], { line: number }>('SELECT line FROM attendee_import_rows WHERE import_id = ? AND chip_uid = ?')
  const chips = db.prepare<[number, number, number], StagedChip & { id: number }>(
    `SELECT id, line, ticket_code AS ticketCode, chip_uid AS chipUid, chip_column AS chipColumn FROM attendee_import_rows
     WHERE import_id = ? AND chip_uid IS NOT NULL AND id > ? ORDER BY id LIMIT ?`,
  )
  const chunkEnd = db.prepare<[number, number], { upto: number | null; rows: number }>(
    'SELECT max(id) AS upto, count(*) AS rows FROM (SELECT id FROM attendee_import_rows WHERE import_id = ? ORDER BY id LIMIT ?)',
  )
  const newInChunk = db.prepare<[number, number, number], { n: number }>(
    `SELECT count(*) AS n FROM attendee_import_rows r WHERE r.import_id = ? AND r.id <= ?
     AND NOT EXISTS (SELECT 1 FROM attendees a WHERE a.event_id = ? AND a.ticket_code = r.ticket_code)`,
  )
  const applyFlagged = db.prepare(applySql(true))
  const applyUnflagged = db.prepare(applySql(false))
  const chunkChips = db.prepare<[number, number], StagedChip>(
    `SELECT line, ticket_code AS ticketCode, chip_uid AS chipUid, chip_column AS chipColumn FROM attendee_import_rows
     WHERE import_id = ? AND id <= ? AND chip_uid IS NOT NULL ORDER BY id`,
  )
  const dropChunk = db.prepare<[number, number]>('DELETE FROM attendee_import_rows WHERE import_id = ? AND id <= ?')
  const discardSome = db.prepare<[number, number, number]>(
    'DELETE FROM attendee_import_rows WHERE import_id = ? AND id IN (SELECT id FROM attendee_import_rows WHERE import_id = ? ORDER BY id LIMIT ?)',
  )
  const drop = db.prepare<[number]>('DELETE FROM attendee_imports WHERE id = ?')

  return {
    create: (eventId: number, now: number): number => Number(create.run(eventId, now, now).lastInsertRowid),
    setState: (importId: number, state: 'staging' | 'applying') => void setState.run(state, importId),
    /** A chunk's sign of life. */
    touch: (importId: number, now: number) => void touch.run(now, importId),
    /** Imports no process has touched since `before` (a crash left them), oldest first. */
    pending: (before: number) => pending.all(before),
    /**
     * Stages rows (inside the caller's transaction); a row whose ticket code or chip an earlier row of
     * the file has is not staged and comes back as a conflict naming that row's line.
     */
    stage(importId: number, rows: StagedAttendee[]): StagingConflict[] {
      const conflicts: StagingConflict[] = []
      for (const row of rows) {
        if (stage.run(stagedParams(importId, row)).changes === 1) continue
        const first = ticketLine.get(importId, row.ticketCode)
        if (first) conflicts.push({ line: row.line, what: 'ticket', value: row.ticketCode, firstLine: first.line })
        else if (row.chipUid !== null) conflicts.push({ line: row.line, what: 'chip', value: row.chipUid, firstLine: chipLine.get(importId, row.chipUid)?.line ?? 0 })
      }
      return conflicts
    },
    /** Up to `limit` staged rows with a chip, after staged row `afterId`, for the chip checks. */
    chipsAfter: (importId: number, afterId: number, limit: number) => chips.all(importId, afterId, limit),
    /**
     * Moves the oldest `limit` staged rows onto the event's list (inside the caller's transaction):
     * new ticket codes inserted, known ones updated, and the rows dropped from the staging table.
     */
    applyChunk(importId: number, eventId: number, limit: number, now: number): AppliedChunk {
      const { upto, rows } = chunkEnd.get(importId, limit)!
      if (upto === null) return { rows: 0, inserted: 0, chips: [] }
      const inserted = newInChunk.get(importId, upto, eventId)!.n
      applyFlagged.run({ importId, eventId, upto, now })
      applyUnflagged.run({ importId, eventId, upto, now })
      const bound = chunkChips.all(importId, upto)
      dropChunk.run(importId, upto)
      return { rows, inserted, chips: bound }
    },
    /** Drops up to `limit` staged rows of an import given up; the import's own row once none is left. Returns the rows dropped. */
    discard(importId: number, limit: number): number {
      const dropped = discardSome.run(importId, importId, limit).changes
      if (dropped === 0) drop.run(importId)
      return dropped
    },
    /** The import's own row, once every staged row is applied. */
    finish: (importId: number) => void drop.run(importId),
  }
}
