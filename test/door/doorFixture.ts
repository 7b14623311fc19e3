import { setStaffPin } from '../../src/kiosk/staffAuth.js'
import { setStationMode } from '../../src/kiosk/stationModes.js'
import { createKioskToken } from '../../src/kiosk/kioskTokens.js'
import { createStation } from '../../src/stations/stations.js'
import { type BackendGateway, call } from '../helpers/gateway.js'
import { seedCheckInTeam, stationTap, UIDS } from '../kiosk-gateway/kioskFixture.js'

export const PIN = '482913'
/** Ada's own wallet on the guest list (anvil's account 2): her check-in mints to it, not to a chip's. */
export const ADA_WALLET = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC'

/**
 * seedCheckInTeam plus a guest list for its event: Ada Lovelace (VIP, her own wallet, chip UIDS[1]
 * imported), Bob Byte (GA, chip UIDS[2]) and Cleo Park (GA, needs attention, chip UIDS[3]); UIDS[0] is
 * on nobody's ticket. A staff PIN on Door A, whose kiosk token is `kiosk`.
 */
export async function seedDoor(gw: BackendGateway) {
  const s = await seedCheckInTeam(gw)
  const now = gw.clock.now
  await gw.store.attendees.upsertMany(s.eventId, [
    { name: 'Ada Lovelace', email: 'ada@example.org', ticketType: 'VIP', ticketCode: 'T-ADA', wallet: ADA_WALLET, note: 'speaker', needsAttention: null },
    { name: 'Bob Byte', email: 'bob@example.org', ticketType: 'GA', ticketCode: 'T-BOB', wallet: null, note: null, needsAttention: null },
    { name: 'Cleo Park', email: null, ticketType: 'GA', ticketCode: 'T-CLEO', wallet: null, note: 'check ID', needsAttention: true },
  ], now)
  const guest = async (code: string) => (await gw.store.attendees.findByCode(s.eventId, code))!
  const ada = await guest('T-ADA')
  const bob = await guest('T-BOB')
  const cleo = await guest('T-CLEO')
  for (const [attendee, uid] of [[ada, UIDS[1]!], [bob, UIDS[2]!], [cleo, UIDS[3]!]] as const)
    await gw.store.attendeeChips.bind({ eventId: s.eventId, attendeeId: attendee.id, chipUid: uid, stationId: null, now })
  await setStaffPin(gw.store, { stationId: s.door.stationId, pin: PIN, now })
  return { ...s, ada, bob, cleo }
}

/** A new station of the team as a door of the event (bind, exit, or a check-in door for some ticket types), with a kiosk token and a PIN. */
export async function addDoor(gw: BackendGateway, s: { teamId: number; eventId: number }, mode: 'checkin' | 'bind' | 'exit', name: string, ticketTypes?: string[]) {
  const station = await gw.store.tx((tx) => createStation(tx, { teamId: s.teamId, name, now: gw.clock.now }))
  await setStationMode(gw.store, { stationId: station.stationId, mode, eventId: s.eventId, ticketTypes, now: gw.clock.now })
  const kiosk = (await createKioskToken(gw.store, { stationId: station.stationId, now: gw.clock.now })).token
  await setStaffPin(gw.store, { stationId: station.stationId, pin: PIN, now: gw.clock.now })
  return { ...station, kiosk }
}

/** Taps with each chip's counter one above its last. */
export function tapper() {
  const counters = new Map<string, number>()
  return (gw: Parameters<typeof stationTap>[0], token: string, uid: string) => {
    const counter = (counters.get(uid) ?? 0) + 1
    counters.set(uid, counter)
    return stationTap(gw, token, uid, counter)
  }
}

/** A staff client of one kiosk token: logs in once, then calls the staff API. */
export async function staffClient(gw: BackendGateway, kiosk: string) {
  const send = (session: string | null, method: 'GET' | 'POST', url: string, payload?: object) =>
    call(gw, { method, url, headers: { 'x-kiosk-token': kiosk, ...(session ? { 'x-staff-session': session } : {}) }, ...(payload ? { payload } : {}) })
  const login = await send(null, 'POST', '/kiosk/staff/session', { pin: PIN })
  if (login.status !== 200) throw new Error(`staff login: ${JSON.stringify(login.body)}`)
  const session = login.body.session as string
  return {
    get: (url: string) => send(session, 'GET', url),
    post: (url: string, payload?: object) => send(session, 'POST', url, payload),
  }
}
