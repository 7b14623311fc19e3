import type { StationRow } from '../db/stations.js'
import type { Store, Repositories } from '../db/store.js'
import type { Config } from '../config.js'
import type { KioskCounts, KioskSettings, KioskStation } from '../wire/feedProtocol.js'

const FIVE_MINUTES_MS = 5 * 60_000

/**
 * The counts every kiosk message carries, from the database (never a page's memory). At an event
 * with a guest list they are the event's door numbers, every station and gateway: guests checked in
 * (`event`), expected, inside now, refused at the doors; an event without a list keeps its chip counts.
 */
export async function kioskCounts(store: Repositories, station: Pick<StationRow, 'id' | 'eventId'>, now: number): Promise<KioskCounts> {
  const claimed = await store.claims.countClaimed(station.id)
  if (station.eventId === null) return { event: 0, station: 0, last5Minutes: 0, claimed }
  const { n, recent } = await store.checkIns.countStation(station.id, station.eventId, now - FIVE_MINUTES_MS)
  const expected = await store.attendees.countEvent(station.eventId)
  if (expected === 0) return { event: await store.checkIns.countEvent(station.eventId), station: n, last5Minutes: recent, claimed }
  const door = await store.checkIns.doorCounts(station.eventId)
  const refused = Object.values(await store.doorLog.refusals(station.eventId)).reduce((sum, count) => sum + count, 0)
  return { event: door.withAttendee, station: n, last5Minutes: recent, claimed, expected, inside: door.inside, refused }
}

export async function kioskStation(store: Repositories, station: StationRow): Promise<KioskStation> {
  const event = station.eventId === null ? undefined : await store.guestbook.getEvent(station.eventId)
  return { id: station.id, name: station.name, mode: station.mode, event: event ? { id: event.id, name: event.name } : null }
}

/** Per-station and per-event counts of a team, for the staff view. */
export async function teamCounts(store: Repositories, teamId: number, now: number) {
  const stations = new Map((await store.stations.listByTeam(teamId)).map((s) => [s.id, s]))
  return {
    events: (await store.checkIns.perEvent(teamId)).map((e) => ({ eventId: e.eventId, name: e.name, checkedIn: e.n })),
    stations: (await store.checkIns.perStation(teamId, now - FIVE_MINUTES_MS)).map((s) => {
      const row = stations.get(s.stationId)!
      return { stationId: s.stationId, name: row.name, mode: row.mode, eventId: row.eventId, checkedIn: s.n, last5Minutes: s.recent }
    }),
  }
}

/** What the kiosk page needs of the configuration (config.kiosk). */
export function kioskSettings(config: Pick<Config, 'kiosk'>): KioskSettings {
  return {
    customerIdleMs: config.kiosk.customerIdleSeconds * 1000,
    customerWarnMs: config.kiosk.customerWarnSeconds * 1000,
    wifiName: config.kiosk.wifiName ?? null,
  }
}
