import type { FastifyInstance } from 'fastify'
import WebSocket from 'ws'
import type { Store } from '../../src/db/store.js'
import { createKioskToken } from '../../src/kiosk/kioskTokens.js'
import type { ReaderEventData } from '../../src/wire/feedProtocol.js'
import { setStaffPin } from '../../src/kiosk/staffAuth.js'
import { setStationMode } from '../../src/kiosk/stationModes.js'
import { createStation } from '../../src/stations/stations.js'
import { STATION_SOCKET_PATH } from '../../station/link/protocol.js'
import { metadata, seedSunChip, seedSunProfile, sunTapUrl } from '../helpers/gateway.js'

export const META = '5ACE7E50AB65D5D51FD5BF5A16B8205B'
export const FILE = '97D1F3FCC8A6B3A4F1AE6F1E3B4BD5A0'
export const PIN = '2468'
export const STATION_NAME = 'Door A'
export const EVENT_NAME = 'Opening night'

/** Registered badges 04C1…01 to 04C1…18 (24), and one UID nobody registered. */
export const BADGES = Array.from({ length: 24 }, (_, i) => `04C10000000${(i + 1).toString(16).toUpperCase().padStart(3, '0')}`)
export const UNREGISTERED = '04C100000000FF'

export const eventMetadata = () => {
  const { media_gallery: _mg, ...rest } = metadata({ name: EVENT_NAME })
  return rest
}

type Gateway = { app: FastifyInstance; store: Store }

export type Kiosk = {
  origin: string
  teamId: number
  stationId: number
  eventId: number
  stationToken: string
  kioskToken: string
  kioskUrl: string
  staffUrl: string
  /** A badge tap through the real station path (POST /station/taps), with a SUN URL the chip would write. */
  tap(uid: string, counter: number): Promise<{ status: number; body: Record<string, unknown>; url: string }>
  /** Submits a URL exactly as given (a replayed one). */
  submit(uid: string, url: string): Promise<{ status: number; body: Record<string, unknown> }>
  /** Staff dismiss the screen's alert through the staff API (a PIN session, then POST /kiosk/staff/dismiss). */
  dismissAlert(): Promise<number>
  /** The station's link (GET /station/ws), for reader status and pulled cards as a real station sends them. */
  stationLink(): Promise<{ status(s: ReaderEventData): void; pulled(readerName: string): void; close(): void }>
}

/**
 * A team with SUN badges and a guestbook event, a station "Door A" in check-in mode for it, a kiosk
 * token and a staff PIN, on a gateway listening on 127.0.0.1 (the browser needs a real socket).
 * `seed` imports the team (the caller's gateway decides the guestbook: a fixed address, or deployed).
 */
export async function setUpKiosk(gw: Gateway, p: { now: () => number; teamId: number }): Promise<Kiosk> {
  const { store, app } = gw
  const teamId = p.teamId
  const at = { app, store, clock: { now: p.now() } }
  await seedSunProfile(at, { teamId, name: 'badges', metaKey: META, fileKey: FILE })
  for (const uid of BADGES) await seedSunChip(at, { teamId, uid, profileName: 'badges' })
  const [event] = await store.guestbook.listEvents(teamId)
  const station = await createStation(store, { teamId, name: STATION_NAME, now: p.now() })
  await setStationMode(store, { stationId: station.stationId, mode: 'checkin', eventId: event!.id, now: p.now() })
  const { token: kioskToken } = await createKioskToken(store, { stationId: station.stationId, now: p.now() })
  await setStaffPin(store, { stationId: station.stationId, pin: PIN, now: p.now() })
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const origin = new URL(address).origin

  const submit = async (uid: string, url: string) => {
    const res = await app.inject({ method: 'POST', url: '/station/taps', headers: { 'x-station-token': station.token }, payload: { rfUid: uid, url, readerName: 'ACS ACR1252 PICC' } })
    return { status: res.statusCode, body: JSON.parse(res.body) as Record<string, unknown> }
  }
  return {
    origin,
    teamId,
    stationId: station.stationId,
    eventId: event!.id,
    stationToken: station.token,
    kioskToken,
    kioskUrl: `${origin}/kiosk#token=${kioskToken}`,
    staffUrl: `${origin}/kiosk/staff#token=${kioskToken}`,
    async tap(uid, counter) {
      const url = sunTapUrl({ metaKey: META, fileKey: FILE, uid, counter, base: `${origin}/tap` })
      return { ...(await submit(uid, url)), url }
    },
    submit,
    async dismissAlert() {
      const headers = { 'x-kiosk-token': kioskToken }
      const login = await app.inject({ method: 'POST', url: '/kiosk/staff/session', headers, payload: { pin: PIN } })
      const { session } = JSON.parse(login.body) as { session: string }
      const res = await app.inject({ method: 'POST', url: '/kiosk/staff/dismiss', headers: { ...headers, 'x-staff-session': session } })
      return res.statusCode
    },
    async stationLink() {
      const ws = new WebSocket(`${origin.replace('http', 'ws')}${STATION_SOCKET_PATH}`, { headers: { 'x-station-token': station.token } })
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve())
        ws.once('error', reject)
      })
      return {
        status: (status) => ws.send(JSON.stringify({ status })),
        pulled: (readerName) => ws.send(JSON.stringify({ pulled: { readerName, at: new Date().toISOString() } })),
        close: () => ws.close(),
      }
    },
  }
}

/** The team of the kiosk tests, for seedTeam / importData. `guestbook`: a fixed address, or none (the relayer deploys it). */
export function kioskTeam(opts: { guestbookAddress?: string; chainId?: number } = {}) {
  return {
    name: 'Kiosk team',
    chips: BADGES.map((uid) => ({ uid })),
    guestbookContracts: [
      {
        name: 'Guests',
        symbol: 'GST',
        chainId: opts.chainId ?? 31337,
        ...(opts.guestbookAddress ? { address: opts.guestbookAddress } : {}),
        events: [{ name: EVENT_NAME, tokenId: '1', metadata: eventMetadata() }],
      },
    ],
  }
}
