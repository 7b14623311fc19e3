import encodeQR from 'qr'
import type { StationRow } from '../db/stations.js'
import type { Store, Repositories } from '../db/store.js'
import { doorTicketTypes } from '../door/doorGuest.js'
import { BadRequestError, NotFoundError } from '../errors.js'
import type { FeedHub } from '../feed/feedHub.js'
import { createKioskToken, listKioskTokens, revokeKioskToken } from '../kiosk/kioskTokens.js'
import { setStaffPin } from '../kiosk/staffAuth.js'
import { setStationMode } from '../kiosk/stationModes.js'
import { createStation, listStations, renameStation, revokeStation } from '../stations/stations.js'
import type { StationMode } from '../wire/feedProtocol.js'
import { startOfDay } from './consoleDay.js'

/** What the console's station views read beyond the store: the kiosk sockets open on this gateway. */
export type ConsoleDeps = { store: Store; feed: Pick<FeedHub, 'subscribers'>; now: () => number }

export type ConsoleStation = {
  id: number
  name: string
  prefix: string
  mode: StationMode | null
  eventId: number | null
  eventName: string | null
  ticketTypes: string[] | null
  revokedAt: string | null
  createdAt: string
  reader: { readers: string[]; cardPresent: boolean; pcsc: 'up' | 'down' | null; at: string } | null
  kiosksConnected: number
  lastTapAt: string | null
  tapsToday: number
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

/**
 * A station of the session's team; another team's is as unknown as a missing one.
 *
 * @throws NotFoundError station_not_found
 */
export async function teamStation(store: Repositories, p: { teamId: number; stationId: number }): Promise<StationRow> {
  const station = await store.stations.get(p.stationId)
  if (!station || station.teamId !== p.teamId) throw new NotFoundError('station_not_found', `No station with id ${p.stationId}`)
  return station
}

/**
 * The console's view of a team's stations: the row, its event's name, its reader as its last
 * `reader` feed row says, the kiosk sockets open now on this gateway (the feed hub's subscribers:
 * kiosks on another gateway of a PostgreSQL deployment are not counted), and its taps.
 */
export async function stationViews(deps: ConsoleDeps, stations: StationRow[]): Promise<ConsoleStation[]> {
  const { store } = deps
  if (stations.length === 0) return []
  const summaries = new Map((await store.tapLog.stationSummaries(stations[0]!.teamId, startOfDay(deps.now()))).map((s) => [s.stationId, s]))
  return Promise.all(
    stations.map(async (s): Promise<ConsoleStation> => {
      const event = s.eventId === null ? undefined : await store.guestbook.getEvent(s.eventId)
      const reader = await store.stationEvents.lastOfKind(s.id, 'reader')
      const taps = summaries.get(s.id)
      return {
        id: s.id,
        name: s.name,
        prefix: s.prefix,
        mode: s.mode,
        eventId: s.eventId,
        eventName: event?.name ?? null,
        ticketTypes: doorTicketTypes(s),
        revokedAt: iso(s.revokedAt),
        createdAt: new Date(s.createdAt).toISOString(),
        reader: reader ? { readers: reader.data.readers, cardPresent: reader.data.cardPresent, pcsc: reader.data.pcscd ? 'up' : 'down', at: reader.at } : null,
        kiosksConnected: deps.feed.subscribers(s.id),
        lastTapAt: taps ? new Date(taps.lastTapAt).toISOString() : null,
        tapsToday: taps?.tapsSince ?? 0,
      }
    }),
  )
}

const oneView = async (deps: ConsoleDeps, station: StationRow) => (await stationViews(deps, [station]))[0]!

/** A team's stations, revoked ones included (`station list`'s function). */
export async function consoleStations(deps: ConsoleDeps, p: { teamId: number }): Promise<ConsoleStation[]> {
  return stationViews(deps, await listStations(deps.store, p))
}

/** `station create`: the token is in the answer, once. */
export async function createConsoleStation(deps: ConsoleDeps, p: { teamId: number; name: string }): Promise<{ station: ConsoleStation; token: string }> {
  const { stationId, token } = await createStation(deps.store, { teamId: p.teamId, name: p.name, now: deps.now() })
  return { station: await oneView(deps, (await deps.store.stations.get(stationId))!), token }
}

export type StationChanges = { name?: string; mode?: StationMode | null; eventId?: number | null; ticketTypes?: string[] | null }

/**
 * Renames a station and/or sets its mode, event and ticket types. The mode part is `station set`'s
 * own function (setStationMode: its rules, its errors); a change that names no mode keeps the
 * station's. The mode goes first: a refused mode leaves the name as it was.
 *
 * @throws NotFoundError station_not_found / event_not_found; BadRequestError event_required
 */
export async function updateConsoleStation(deps: ConsoleDeps, p: { teamId: number; stationId: number; changes: StationChanges }): Promise<ConsoleStation> {
  const { store } = deps
  const { name, mode, eventId, ticketTypes } = p.changes
  let station = await teamStation(store, p)
  if (mode !== undefined || eventId !== undefined || ticketTypes !== undefined)
    station = await setStationMode(store, {
      stationId: station.id,
      mode: mode === undefined ? station.mode : mode,
      ...(eventId === undefined ? {} : { eventId }),
      ...(ticketTypes === undefined ? {} : { ticketTypes }),
      now: deps.now(),
    })
  if (name !== undefined) station = await renameStation(store, { stationId: station.id, name })
  return oneView(deps, station)
}

/** `station staff-pin`: a new PIN, which also clears wrong tries and a lock. */
export async function setConsoleStaffPin(deps: ConsoleDeps, p: { teamId: number; stationId: number; pin: string }): Promise<void> {
  const station = await teamStation(deps.store, p)
  await setStaffPin(deps.store, { stationId: station.id, pin: p.pin, now: deps.now() })
}

/**
 * `station kiosk-url`: a new kiosk token, as the kiosk's URL, the staff view's, and the kiosk
 * URL's QR code (an SVG) for a tablet's camera.
 */
export async function createConsoleKioskUrl(deps: ConsoleDeps, p: { teamId: number; stationId: number; base: string }): Promise<{ url: string; staffUrl: string; qrSvg: string }> {
  const station = await teamStation(deps.store, p)
  const { token } = await createKioskToken(deps.store, { stationId: station.id, now: deps.now() })
  const base = p.base.replace(/\/+$/, '')
  // The token in the fragment, as `station kiosk-url` prints it: a browser never sends it to a server.
  const url = `${base}/kiosk#token=${token}`
  // A quiet zone of 4 modules, as the QR standard asks (and as the claim link's code has).
  return { url, staffUrl: `${base}/kiosk/staff#token=${token}`, qrSvg: encodeQR(url, 'svg', { border: 4 }) }
}

/** `station kiosk-tokens`: prefixes and times, never a token. */
export async function consoleKioskTokens(deps: ConsoleDeps, p: { teamId: number; stationId: number }) {
  const station = await teamStation(deps.store, p)
  return (await listKioskTokens(deps.store, { stationId: station.id })).map((k) => ({
    prefix: k.prefix,
    createdAt: new Date(k.createdAt).toISOString(),
    lastSeenAt: iso(k.lastSeenAt),
    revokedAt: iso(k.revokedAt),
  }))
}

/**
 * `station kiosk-tokens --revoke`: one kiosk token, by its prefix as listed.
 *
 * @throws NotFoundError station_not_found / kiosk_token_not_found; BadRequestError kiosk_token_prefix_ambiguous
 */
export async function revokeConsoleKioskToken(deps: ConsoleDeps, p: { teamId: number; stationId: number; prefix: string }): Promise<void> {
  const station = await teamStation(deps.store, p)
  await revokeKioskToken(deps.store, { stationId: station.id, tokenOrPrefix: p.prefix, now: deps.now() })
}

/**
 * `station revoke`, by the station's own prefix: its token stops, and its kiosks with it. The
 * gateway's own readers' station has no token anyone holds, and its prefix is the same in every
 * team, so it is refused: closing it is `mode: closed`.
 *
 * @throws NotFoundError station_not_found (another team's, or revoked already); BadRequestError station_in_process
 */
export async function revokeConsoleStation(deps: ConsoleDeps, p: { teamId: number; stationId: number }): Promise<void> {
  const station = await teamStation(deps.store, p)
  if (station.inProcess === 1) throw new BadRequestError('station_in_process', "This station is the gateway's own readers: it has no token to revoke (set its mode to closed to stop it)")
  if (station.revokedAt !== null || (await revokeStation(deps.store, { tokenOrPrefix: station.prefix, now: deps.now() })) === 0)
    throw new NotFoundError('station_not_found', `No active station with id ${station.id}`)
}
