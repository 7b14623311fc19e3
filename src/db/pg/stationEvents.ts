import type { StationEvent, StationEventKind } from '../../wire/feedProtocol.js'
import type { createStationEventsRepository } from '../stationEvents.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

type Row = { id: number; stationId: number; kind: StationEventKind; data: string; createdAt: number }

const columns = 'id, station_id, kind, data, created_at'

const toEvent = (row: Row): StationEvent =>
  ({ id: row.id, stationId: row.stationId, kind: row.kind, at: new Date(row.createdAt).toISOString(), data: JSON.parse(row.data) }) as StationEvent

/** The per-station feed: append-only, read by id ("the events after id N"). */
export function createPgStationEventsRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createStationEventsRepository>> {
  return {
    /*
     * A reader resumes after the last id it saw, so a station's ids must become visible in id order.
     * SQLite gives that for free (one writer at a time); an identity here is drawn at INSERT, and two
     * gateways' transactions can commit in the other order: a reader would see id 6, resume after it,
     * and never get 5. The station's row is locked (FOR NO KEY UPDATE, which lets the foreign-key
     * checks of other tables through) before the id is drawn and until COMMIT, so the station's next
     * append draws its id after this one is visible. Across stations ids still commit out of order.
     * The LEFT JOIN keeps SQLite's answer to an unknown station: the foreign-key error.
     */
    // The same statement notifies every gateway's feed hub (LISTEN tapgate_feed): PostgreSQL delivers
    // it when this transaction commits, never if it rolls back, so the row and the push go together.
    async append(stationId, kind, data, now) {
      const [row] = await sql<{ id: number }[]>`WITH station AS (SELECT id FROM stations WHERE id = ${stationId} FOR NO KEY UPDATE),
        appended AS (
          INSERT INTO station_events (station_id, kind, data, created_at)
          SELECT ${stationId}, ${kind}, ${JSON.stringify(data)}, ${now} FROM (VALUES (1)) one LEFT JOIN station ON true RETURNING id)
        SELECT appended.id FROM appended, (SELECT pg_notify('tapgate_feed', ${String(stationId)})) notified`
      return row!.id
    },
    async after(stationId, afterId, limit = 500) {
      const rows = await sql<Row[]>`SELECT ${sql.unsafe(columns)} FROM station_events WHERE station_id = ${stationId} AND id > ${afterId} ORDER BY id LIMIT ${limit}`
      return rows.map(toEvent)
    },
    async last(stationId) {
      const [row] = await sql<Row[]>`SELECT ${sql.unsafe(columns)} FROM station_events WHERE station_id = ${stationId} ORDER BY id DESC LIMIT 1`
      return row && toEvent(row)
    },
    async lastOfKind(stationId, kind) {
      const [row] = await sql<Row[]>`SELECT ${sql.unsafe(columns)} FROM station_events WHERE station_id = ${stationId} AND kind = ${kind} ORDER BY id DESC LIMIT 1`
      return row && toEvent(row)
    },
    async recent(stationId, limit) {
      const rows = await sql<Row[]>`SELECT ${sql.unsafe(columns)} FROM station_events WHERE station_id = ${stationId} ORDER BY id DESC LIMIT ${limit}`
      return rows.reverse().map(toEvent)
    },
    async maxId() {
      const [row] = await sql<{ id: number }[]>`SELECT coalesce(max(id), 0) AS id FROM station_events`
      return row!.id
    },
  }
}
