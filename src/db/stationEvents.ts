import type { StationEvent, StationEventData, StationEventKind } from '../wire/feedProtocol.js'
import type { Db } from './sqlite/openDatabase.js'

type Row = { id: number; stationId: number; kind: StationEventKind; data: string; createdAt: number }

const toEvent = (row: Row): StationEvent =>
  ({ id: row.id, stationId: row.stationId, kind: row.kind, at: new Date(row.createdAt).toISOString(), data: JSON.parse(row.data) }) as StationEvent

/** The per-station feed (migration 007): append-only, read in id order. */
export function createStationEventsRepository(db: Db) {
  const insert = db.prepare<[number, string, string, number]>('INSERT INTO station_events (station_id, kind, data, created_at) VALUES (?, ?, ?, ?)')
  const after = db.prepare<[number, number, number], Row>(
    'SELECT id, station_id AS stationId, kind, data, created_at AS createdAt FROM station_events WHERE station_id = ? AND id > ? ORDER BY id LIMIT ?',
  )
  const last = db.prepare<[number], Row>(
    'SELECT id, station_id AS stationId, kind, data, created_at AS createdAt FROM station_events WHERE station_id = ? ORDER BY id DESC LIMIT 1',
  )
  const lastOfKind = db.prepare<[number, string], Row>(
    'SELECT id, station_id AS stationId, kind, data, created_at AS createdAt FROM station_events WHERE station_id = ? AND kind = ? ORDER BY id DESC LIMIT 1',
  )
  const maxId = db.prepare<[], { id: number | null }>('SELECT max(id) AS id FROM station_events')
  const recent = db.prepare<[number, number], Row>(
    'SELECT id, station_id AS stationId, kind, data, created_at AS createdAt FROM station_events WHERE station_id = ? ORDER BY id DESC LIMIT ?',
  )
  return {
    append<K extends StationEventKind>(stationId: number, kind: K, data: StationEventData[K], now: number): number {
      return Number(insert.run(stationId, kind, JSON.stringify(data), now).lastInsertRowid)
    },
    /** Events of a station after `afterId`, oldest first, at most `limit`. */
    after: (stationId: number, afterId: number, limit = 500): StationEvent[] => after.all(stationId, afterId, limit).map(toEvent),
    last: (stationId: number): StationEvent | undefined => {
      const row = last.get(stationId)
      return row && toEvent(row)
    },
    lastOfKind<K extends StationEventKind>(stationId: number, kind: K): Extract<StationEvent, { kind: K }> | undefined {
      const row = lastOfKind.get(stationId, kind)
      return row && (toEvent(row) as Extract<StationEvent, { kind: K }>)
    },
    /** The newest `limit` events of a station, oldest first (the staff view's feed). */
    recent: (stationId: number, limit: number): StationEvent[] => recent.all(stationId, limit).reverse().map(toEvent),
    /** The newest id of every station: a hub polls for rows another process appended. */
    maxId: (): number => maxId.get()?.id ?? 0,
  }
}
