import type { Db } from './sqlite/openDatabase.js'

/** A guest on an event's list (migration 015). needsAttention is 0/1 as the other flags of the row types. */
export type AttendeeRow = {
  id: number
  eventId: number
  name: string
  email: string | null
  ticketType: string
  ticketCode: string
  wallet: string | null
  note: string | null
  needsAttention: number
  /** Migration 017: 0 when the guest's order is not paid (the door refuses them not_paid unless the event admits unpaid guests). */
  paid: number
  createdAt: number
  updatedAt: number
}

/**
 * One row of an import. null for email, wallet, note or needsAttention: the file has no such column,
 * so a re-import keeps what is stored (a file cannot clear a wallet by leaving its column out).
 */
export type AttendeeInput = Pick<AttendeeRow, 'name' | 'email' | 'ticketType' | 'ticketCode' | 'wallet' | 'note'> & {
  needsAttention: boolean | null
  /** Always the file's word (a re-import of the order now paid makes the guest admissible); undefined: paid. */
  paid?: boolean
}

export type AttendeeListing = { attendees: AttendeeRow[]; total: number }

/**
 * A guest as the export shows them: the row, the chips bound now (space-separated, in binding order),
 * the active check-in (when, at which door, manual or tapped, left_at) and its mint's transaction.
 */
export type AttendeeExportRow = Pick<AttendeeRow, 'id' | 'name' | 'email' | 'ticketType' | 'ticketCode' | 'wallet' | 'note' | 'needsAttention' | 'paid'> & {
  chips: string | null
  checkInId: number | null
  checkedInAt: number | null
  checkInStation: string | null
  manual: number | null
  leftAt: number | null
  txStatus: 'queued' | 'sent' | 'mined' | null
  txReverted: number | null
  txHash: string | null
  txInitialHash: string | null
}

/** Where a page of the export starts: after this guest (name, then id). */
export type ExportCursor = { name: string; id: number }

/** Before every guest: no name sorts before the empty one, no id is 0. */
export const EXPORT_START: ExportCursor = { name: '', id: 0 }

/** An exit or a re-entry after a check-in, with its door's name (the export lists them per guest). */
export type AttendeeExportPass = { checkInId: number; direction: 'in' | 'out'; createdAt: number; stationName: string }

/**
 * What staff search matches: name, email and ticket code in lower case with accents off, so "zoe"
 * finds Zoë on both engines alike (SQLite's LIKE folds ASCII only, PostgreSQL's ILIKE depends on the
 * collation). Stored in `attendees.search`; a query is folded the same way.
 */
export function searchText(...parts: Array<string | null>): string {
  return parts
    .filter((part): part is string => part !== null && part !== '')
    .join(' ')
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
}

/** A LIKE pattern that matches `query` anywhere in `search`, its own % and _ taken literally (ESCAPE '\'). */
export function searchPattern(query: string): string {
  return `%${searchText(query).replace(/[\\%_]/g, (c) => `\\${c}`)}%`
}

const attendeeColumns = `a.id, a.event_id AS eventId, a.name, a.email, a.ticket_type AS ticketType,
  a.ticket_code AS ticketCode, a.wallet, a.note, a.needs_attention AS needsAttention, a.paid, a.created_at AS createdAt,
  a.updated_at AS updatedAt`

/** The guest list of guestbook events (migration 015). */
export function createAttendeesRepository(db: Db) {
  const upsert = db.prepare(
    `INSERT INTO attendees (event_id, name, email, ticket_type, ticket_code, wallet, note, needs_attention, paid, search, created_at, updated_at)
     VALUES (@eventId, @name, @email, @ticketType, @ticketCode, @wallet, @note, coalesce(@needsAttention, 0), @paid, @search, @now, @now)
     ON CONFLICT (event_id, ticket_code) DO UPDATE SET name = excluded.name, email = coalesce(@email, attendees.email),
       ticket_type = excluded.ticket_type, wallet = coalesce(@wallet, attendees.wallet), note = coalesce(@note, attendees.note),
       needs_attention = coalesce(@needsAttention, attendees.needs_attention), paid = excluded.paid,
       search = excluded.search, updated_at = excluded.updated_at`,
  )
  const count = db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM attendees WHERE event_id = ?')
  const byId = db.prepare<[number], AttendeeRow>(`SELECT ${attendeeColumns} FROM attendees a WHERE a.id = ?`)
  const byCode = db.prepare<[number, string], AttendeeRow>(`SELECT ${attendeeColumns} FROM attendees a WHERE a.event_id = ? AND a.ticket_code = ?`)
  const search = db.prepare<[number, string, number, number], AttendeeRow>(
    `SELECT ${attendeeColumns} FROM attendees a WHERE a.event_id = ? AND a.search LIKE ? ESCAPE '\\' ORDER BY a.name, a.id LIMIT ? OFFSET ?`,
  )
  const countSearch = db.prepare<[number, string], { n: number }>(`SELECT count(*) AS n FROM attendees a WHERE a.event_id = ? AND a.search LIKE ? ESCAPE '\\'`)
  const perType = db.prepare<[number], { ticketType: string; expected: number }>(
    'SELECT ticket_type AS ticketType, count(*) AS expected FROM attendees WHERE event_id = ? GROUP BY ticket_type ORDER BY ticket_type',
  )
  const setAttention = db.prepare<[number, number, number]>('UPDATE attendees SET needs_attention = ?, updated_at = ? WHERE id = ?')
  const exportRows = db.prepare<[{ eventId: number; name: string; id: number; limit: number }], AttendeeExportRow>(
    `SELECT a.id, a.name, a.email, a.ticket_type AS ticketType, a.ticket_code AS ticketCode, a.wallet, a.note,
       a.needs_attention AS needsAttention, a.paid,
       (SELECT group_concat(chip_uid, ' ') FROM (SELECT ac.chip_uid FROM attendee_chips ac
          WHERE ac.attendee_id = a.id AND ac.unbound_at IS NULL ORDER BY ac.id)) AS chips,
       c.id AS checkInId, c.created_at AS checkedInAt, s.name AS checkInStation, c.manual, c.left_at AS leftAt,
       t.status AS txStatus, t.reverted AS txReverted, t.tx_hash AS txHash, t.initial_tx_hash AS txInitialHash
     FROM attendees a
     LEFT JOIN check_ins c ON c.event_id = a.event_id AND c.attendee_id = a.id AND c.undone_at IS NULL
     LEFT JOIN stations s ON s.id = c.station_id
     LEFT JOIN chain_txs t ON t.id = c.chain_tx_id
     WHERE a.event_id = @eventId AND (a.name, a.id) > (@name, @id) ORDER BY a.name, a.id LIMIT @limit`,
  )
  const exportPasses = db.prepare<[number, string], AttendeeExportPass>(
    `SELECT p.check_in_id AS checkInId, p.direction, p.created_at AS createdAt, s.name AS stationName
     FROM door_passes p JOIN check_ins c ON c.id = p.check_in_id JOIN stations s ON s.id = p.station_id
     WHERE c.event_id = ? AND c.undone_at IS NULL AND c.attendee_id IN (SELECT value FROM json_each(?)) ORDER BY p.created_at, p.id`,
  )

  return {
    /**
     * Inserts or updates (by ticket code) every row, inside the caller's transaction: a re-import
     * changes what the file says and keeps the rest (check-ins, chips, attendees the file leaves out).
     */
    upsertMany(eventId: number, rows: AttendeeInput[], now: number): { inserted: number; updated: number } {
      const before = count.get(eventId)!.n
      for (const row of rows) {
        upsert.run({
          ...row,
          eventId,
          needsAttention: row.needsAttention === null ? null : row.needsAttention ? 1 : 0,
          paid: row.paid === false ? 0 : 1,
          search: searchText(row.name, row.email, row.ticketCode),
          now,
        })
      }
      const inserted = count.get(eventId)!.n - before
      return { inserted, updated: rows.length - inserted }
    },
    get: (id: number) => byId.get(id),
    findByCode: (eventId: number, ticketCode: string) => byCode.get(eventId, ticketCode),
    /** Staff search: name, email or ticket code contains `query` (folded), by name. */
    search: (eventId: number, query: string, limit: number) => search.all(eventId, searchPattern(query), limit, 0),
    /** A page of the list (all of it, or what `query` matches), by name, and how many there are in all. */
    list(eventId: number, p: { query?: string; limit: number; offset: number }): AttendeeListing {
      const pattern = searchPattern(p.query ?? '')
      return { attendees: search.all(eventId, pattern, p.limit, p.offset), total: countSearch.get(eventId, pattern)!.n }
    },
    countEvent: (eventId: number) => count.get(eventId)!.n,
    /** Guests per ticket type, for the door's numbers. */
    perType: (eventId: number) => perType.all(eventId),
    setNeedsAttention: (id: number, needsAttention: boolean, now: number) => void setAttention.run(needsAttention ? 1 : 0, now, id),
    /**
     * A page of the export, by name then id, after the guest `after` (keyset: each page reads only its
     * own rows, so a 2-million-guest export holds one page at a time): chips, check-in, door and mint
     * transaction (issue 19, the CSV helper). EXPORT_START starts at the first guest.
     */
    exportPage: (eventId: number, after: ExportCursor, limit: number) => exportRows.all({ eventId, name: after.name, id: after.id, limit }),
    /** The exits and re-entries of these guests' active check-ins, oldest first. */
    exportPasses: (eventId: number, attendeeIds: number[]) => exportPasses.all(eventId, JSON.stringify(attendeeIds)),
  }
}
