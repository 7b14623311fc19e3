import { afterEach, describe, expect, test } from 'vitest'
import { setStaffPin } from '../../src/kiosk/staffAuth.js'
import { setStationMode } from '../../src/kiosk/stationModes.js'
import { type BackendGateway, call, createBackendGateway, queryRows } from '../helpers/gateway.js'
import { seedCheckInTeam, stationTap, UIDS } from './kioskFixture.js'

// Issue 10: the staff view's API. Every request carries the kiosk token; actions a staff session
// that ends after a minute idle; the PIN locks for 5 minutes after 5 wrong tries; each action is
// logged to the station's feed.

let gw: BackendGateway
afterEach(async () => gw?.close())

const PIN = '482913'

async function setup() {
  gw = await createBackendGateway()
  const s = await seedCheckInTeam(gw)
  await setStaffPin(gw.store, { stationId: s.door.stationId, pin: PIN, now: gw.clock.now })
  return s
}
const staff = (kiosk: string, session: string | null, method: 'GET' | 'POST', url: string, payload?: object) =>
  call(gw, { method, url, headers: { 'x-kiosk-token': kiosk, ...(session ? { 'x-staff-session': session } : {}) }, ...(payload ? { payload } : {}) })
async function login(kiosk: string) {
  const res = await staff(kiosk, null, 'POST', '/kiosk/staff/session', { pin: PIN })
  expect(res.status).toBe(200)
  return res.body.session as string
}
const staffRows = async (stationId: number) =>
  (await gw.store.stationEvents.after(stationId, 0)).flatMap((e) => (e.kind === 'staff' ? [e.data.action] : []))

describe('staff PIN and session', () => {
  test('wrong PINs count down; the fifth locks for 5 minutes, the right PIN included; then it opens again', async () => {
    const s = await setup()
    for (let i = 1; i <= 4; i++) {
      const res = await staff(s.kiosk, null, 'POST', '/kiosk/staff/session', { pin: '0000' })
      expect(res).toMatchObject({ status: 401, body: { success: false, error: 'invalid_pin', triesLeft: 5 - i } })
    }
    const fifth = await staff(s.kiosk, null, 'POST', '/kiosk/staff/session', { pin: '0000' })
    expect(fifth).toMatchObject({ status: 423, body: { success: false, error: 'pin_locked', lockedUntil: new Date(gw.clock.now + 5 * 60_000).toISOString() } })
    expect((await staff(s.kiosk, null, 'POST', '/kiosk/staff/session', { pin: PIN })).status).toBe(423)
    gw.clock.now += 5 * 60_000 + 1
    const session = await login(s.kiosk)
    expect(session).toMatch(/^tgss_[\w-]{32}$/)
    expect(await staffRows(s.door.stationId)).toEqual(['login_failed', 'login_failed', 'login_failed', 'login_failed', 'locked', 'login'])
    // Only a hash of the session is stored.
    expect(JSON.stringify(await queryRows(gw.store, 'SELECT * FROM staff_sessions'))).not.toContain(session)
  })

  test('no PIN set is 409 pin_not_set; no or a wrong kiosk token is 401', async () => {
    gw = await createBackendGateway()
    const s = await seedCheckInTeam(gw)
    expect(await staff(s.kiosk, null, 'POST', '/kiosk/staff/session', { pin: '1234' })).toMatchObject({ status: 409, body: { error: 'pin_not_set' } })
    expect(await call(gw, { method: 'POST', url: '/kiosk/staff/session', payload: { pin: '1234' } })).toMatchObject({ status: 401, body: { error: 'kiosk_token_missing' } })
    expect(await staff('tgk_nope', null, 'POST', '/kiosk/staff/session', { pin: '1234' })).toMatchObject({ status: 401, body: { error: 'invalid_kiosk_token' } })
    // A station's kiosk token is no station token.
    expect((await call(gw, { method: 'POST', url: '/station/taps', headers: { 'x-station-token': s.kiosk }, payload: { rfUid: UIDS[0], url: 'x' } })).status).toBe(401)
  })

  test('a session ends after 60 s without use; each request keeps it open; end ends it', async () => {
    const s = await setup()
    const session = await login(s.kiosk)
    gw.clock.now += 50_000
    expect((await staff(s.kiosk, session, 'GET', '/kiosk/staff/state')).status).toBe(200)
    gw.clock.now += 50_000
    expect((await staff(s.kiosk, session, 'GET', '/kiosk/staff/state')).status).toBe(200)
    gw.clock.now += 60_001
    expect(await staff(s.kiosk, session, 'GET', '/kiosk/staff/state')).toMatchObject({ status: 401, body: { error: 'staff_session_ended' } })
    const next = await login(s.kiosk)
    expect((await staff(s.kiosk, next, 'POST', '/kiosk/staff/end')).status).toBe(200)
    expect(await staff(s.kiosk, next, 'GET', '/kiosk/staff/state')).toMatchObject({ status: 401, body: { error: 'staff_session_ended' } })
    expect(await staff(s.kiosk, null, 'GET', '/kiosk/staff/state')).toMatchObject({ status: 401, body: { error: 'staff_session_missing' } })
    // Another station's kiosk token does not carry this station's session.
    const { createKioskToken } = await import('../../src/kiosk/kioskTokens.js')
    const other = (await createKioskToken(gw.store, { stationId: s.side.stationId, now: gw.clock.now })).token
    const fresh = await login(s.kiosk)
    expect(await staff(other, fresh, 'GET', '/kiosk/staff/state')).toMatchObject({ status: 401, body: { error: 'staff_session_ended' } })
  })
})

describe('staff actions', () => {
  test('undo the last check-in within 2 minutes (the token stays when minted), not after', async () => {
    const s = await setup()
    const session = await login(s.kiosk)
    const first = await stationTap(gw, s.door.token, UIDS[0]!, 1) // with a wallet: a mint is queued
    const undo = await staff(s.kiosk, session, 'POST', '/kiosk/staff/undo')
    expect(undo).toMatchObject({ status: 200, body: { success: true, tokenStays: true } })
    expect((await staff(s.kiosk, session, 'GET', '/kiosk/staff/state')).body.counts).toEqual({ event: 0, station: 0, last5Minutes: 0, claimed: 0 })
    // The chip may check in again; its token is not minted twice.
    const again = await stationTap(gw, s.door.token, UIDS[0]!, 2)
    expect(again.body.checkIn).toMatchObject({ state: 'accepted', checkIn: { tx: { id: first.body.checkIn.checkIn.tx.id } } })
    expect(again.body.checkIn.checkIn.id).not.toBe(undo.body.checkInId)
    expect(await queryRows(gw.store, 'SELECT count(*) AS n FROM guestbook_mints')).toEqual([{ n: 1 }])

    await stationTap(gw, s.door.token, UIDS[1]!, 1) // no wallet
    gw.clock.now += 60_000
    const noToken = await staff(s.kiosk, session, 'POST', '/kiosk/staff/undo')
    expect(noToken.body).toMatchObject({ success: true, tokenStays: false })
    gw.clock.now += 61_000
    // The check-in before it was made 2 min 1 s ago: too late (and the idle session ended: a new one).
    expect(await staff(s.kiosk, await login(s.kiosk), 'POST', '/kiosk/staff/undo')).toMatchObject({ status: 409, body: { error: 'undo_window_passed' } })
    const feed = await gw.store.stationEvents.after(s.door.stationId, 0)
    expect(feed.filter((e) => e.kind === 'undo').map((e) => e.data)).toEqual([
      { checkInId: undo.body.checkInId, tokenStays: true },
      { checkInId: noToken.body.checkInId, tokenStays: false },
    ])
    expect(await staffRows(s.door.stationId)).toEqual(['login', 'undo', 'undo', 'login'])
  })

  test('manual check-in by UID is marked manual, counts once, and is logged', async () => {
    const s = await setup()
    const session = await login(s.kiosk)
    const res = await staff(s.kiosk, session, 'POST', '/kiosk/staff/check-in', { uid: UIDS[2]!.toLowerCase() })
    expect(res).toMatchObject({ status: 200, body: { success: true, state: 'accepted', checkIn: { manual: true, stationName: 'Door A', tx: null } } })
    expect(await staff(s.kiosk, session, 'POST', '/kiosk/staff/check-in', { uid: UIDS[2] })).toMatchObject({ status: 200, body: { state: 'already', checkIn: { id: res.body.checkIn.id } } })
    expect(await staff(s.kiosk, session, 'POST', '/kiosk/staff/check-in', { uid: '04FFFFFFFFFFFF' })).toMatchObject({ status: 404, body: { error: 'chip_not_found' } })
    // 0/1 on both engines (a boolean column on PostgreSQL).
    expect(await queryRows(gw.store, 'SELECT CAST(manual AS INTEGER) AS manual FROM check_ins')).toEqual([{ manual: 1 }])
    expect(await staffRows(s.door.stationId)).toEqual(['login', 'manual_check_in', 'manual_check_in'])
    const state = await staff(s.kiosk, session, 'GET', '/kiosk/staff/state')
    expect(state.body).toMatchObject({
      counts: { event: 1, station: 1, last5Minutes: 1 },
      team: { events: [{ eventId: s.eventId, checkedIn: 1 }, { eventId: s.otherEventId, checkedIn: 0 }] },
      health: { reader: null, outboxPending: expect.any(Number), kiosksConnected: 0 },
    })
    expect(state.body.team.stations).toEqual([
      expect.objectContaining({ stationId: s.door.stationId, checkedIn: 1 }),
      expect.objectContaining({ stationId: s.side.stationId, checkedIn: 0 }),
    ])
    expect(state.body.recent.at(-1)).toMatchObject({ kind: 'staff', data: { action: 'manual_check_in' } })
  })

  test('mode: close, claim, reopen; each logged with a mode row', async () => {
    const s = await setup()
    const session = await login(s.kiosk)
    // The station's own event may be named: what the staff page sent before issue 24.
    expect(await staff(s.kiosk, session, 'POST', '/kiosk/staff/mode', { mode: 'bind', eventId: s.eventId })).toMatchObject({
      status: 200,
      body: { station: { mode: 'bind', event: { id: s.eventId, name: 'Opening night' } } },
    })
    expect((await staff(s.kiosk, session, 'POST', '/kiosk/staff/mode', { mode: 'closed' })).body.station).toMatchObject({ mode: 'closed' })
    expect((await stationTap(gw, s.door.token, UIDS[0]!, 1)).body.error).toBe('station_closed')
    expect(await staff(s.kiosk, session, 'POST', '/kiosk/staff/mode', { mode: 'claim' })).toMatchObject({ status: 200, body: { station: { mode: 'claim' } } })
    await staff(s.kiosk, session, 'POST', '/kiosk/staff/mode', { mode: 'checkin' })
    expect((await stationTap(gw, s.door.token, UIDS[0]!, 2)).body.checkIn.checkIn).toMatchObject({ eventId: s.eventId })
    const modes = (await gw.store.stationEvents.after(s.door.stationId, 0)).filter((e) => e.kind === 'mode').map((e) => e.data)
    expect(modes.slice(1)).toEqual([
      { mode: 'bind', eventId: s.eventId, eventName: 'Opening night' },
      { mode: 'closed', eventId: s.eventId, eventName: 'Opening night' },
      { mode: 'claim', eventId: s.eventId, eventName: 'Opening night' },
      { mode: 'checkin', eventId: s.eventId, eventName: 'Opening night' },
    ])
    expect(await staffRows(s.door.stationId)).toEqual(['login', 'mode', 'mode', 'mode', 'mode'])
  })

  // Issue 24 point 9: the staff view searches and exports the guests of the station's event, so a
  // PIN that could pick the event could read every guest list of the team.
  test("a staff PIN never switches the station's event (403 staff_event_locked), so it reads no other event's guests; the operator's switch still works", async () => {
    const s = await setup()
    const session = await login(s.kiosk)
    await gw.store.attendees.upsertMany(s.otherEventId, [{ name: 'Zelda Other', email: 'zelda@example.org', ticketType: 'GA', ticketCode: 'T-ZEL', wallet: null, note: null, needsAttention: null }], gw.clock.now)
    const before = await gw.store.stationEvents.after(s.door.stationId, 0)
    for (const eventId of [s.otherEventId, 99])
      expect(await staff(s.kiosk, session, 'POST', '/kiosk/staff/mode', { mode: 'checkin', eventId })).toMatchObject({
        status: 403,
        body: { error: 'staff_event_locked', message: expect.stringContaining('tapgate station set') },
      })
    // Nothing changed or logged; the guests of the station's event only.
    expect(await gw.store.stations.get(s.door.stationId)).toMatchObject({ mode: 'checkin', eventId: s.eventId })
    expect(await gw.store.stationEvents.after(s.door.stationId, 0)).toEqual(before)
    expect((await staff(s.kiosk, session, 'GET', '/kiosk/staff/attendees?q=zelda')).body).toEqual({ success: true, attendees: [] })
    const exported = await call(gw, { url: '/kiosk/staff/attendees/export?format=json', headers: { 'x-kiosk-token': s.kiosk, 'x-staff-session': session } })
    expect(exported).toMatchObject({ status: 200, body: { eventId: s.eventId } })
    expect(JSON.stringify(exported.body)).not.toContain('Zelda')
    // The operator (the CLI's `station set`, no PIN) moves the station; then its staff see that event's guests.
    await setStationMode(gw.store, { stationId: s.door.stationId, mode: 'checkin', eventId: s.otherEventId, now: gw.clock.now })
    expect((await staff(s.kiosk, session, 'GET', '/kiosk/staff/attendees?q=zelda')).body.attendees).toEqual([expect.objectContaining({ name: 'Zelda Other' })])
    // A station without an event stays without one for its staff.
    await gw.store.stations.setMode(s.door.stationId, 'closed', null)
    expect(await staff(s.kiosk, session, 'POST', '/kiosk/staff/mode', { mode: 'checkin' })).toMatchObject({ status: 400, body: { error: 'event_required', message: expect.stringContaining('operator') } })
    expect(await staff(s.kiosk, session, 'POST', '/kiosk/staff/mode', { mode: 'checkin', eventId: s.eventId })).toMatchObject({ status: 403, body: { error: 'staff_event_locked' } })
  })

  test('test-chip: taps until then do not count; retry refuses a transaction that has not failed', async () => {
    const s = await setup()
    const session = await login(s.kiosk)
    const res = await staff(s.kiosk, session, 'POST', '/kiosk/staff/test-chip', { seconds: 20 })
    expect(res.body).toEqual({ success: true, testUntil: new Date(gw.clock.now + 20_000).toISOString() })
    expect((await stationTap(gw, s.door.token, UIDS[0]!, 1)).body.checkIn).toMatchObject({ test: true })
    expect(await queryRows(gw.store, 'SELECT count(*) AS n FROM check_ins')).toEqual([{ n: 0 }])
    gw.clock.now += 20_001
    const tap = await stationTap(gw, s.door.token, UIDS[0]!, 2)
    const txId = tap.body.checkIn.checkIn.tx.id
    expect(await staff(s.kiosk, session, 'POST', '/kiosk/staff/retry', { txId })).toMatchObject({ status: 409, body: { error: 'tx_not_failed' } })
    expect(await staff(s.kiosk, session, 'POST', '/kiosk/staff/retry', { txId: 9999 })).toMatchObject({ status: 404, body: { error: 'tx_not_found' } })
    expect(await staff(s.kiosk, session, 'POST', '/kiosk/staff/test-chip', { seconds: 0 })).toMatchObject({ status: 400, body: { error: 'validation_failed' } })
  })

  test('the staff routes are in the OpenAPI document with their credentials', async () => {
    gw = await createBackendGateway()
    const doc = (await call(gw, { url: '/openapi.json' })).body
    for (const path of ['/kiosk/staff/session', '/kiosk/staff/state', '/kiosk/staff/mode', '/kiosk/staff/check-in', '/kiosk/staff/undo', '/kiosk/staff/retry', '/kiosk/staff/test-chip', '/kiosk/staff/end'])
      expect(Object.keys(doc.paths)).toContain(path)
    expect(doc.paths['/kiosk/staff/session'].post.security).toEqual([{ kiosk: [] }])
    expect(doc.paths['/kiosk/staff/undo'].post.security).toEqual([{ kiosk: [], staffSession: [] }])
    expect(Object.keys(doc.paths['/kiosk/staff/session'].post.responses)).toEqual(expect.arrayContaining(['200', '401', '409', '423']))
  })
})
