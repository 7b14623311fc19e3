import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, test } from 'vitest'
import { KIOSK_CLOSE } from '../../src/wire/feedProtocol.js'
import { listKioskTokens, revokeKioskToken } from '../../src/kiosk/kioskTokens.js'
import { setStaffPin } from '../../src/kiosk/staffAuth.js'
import { revokeStation } from '../../src/stations/stations.js'
import { type BackendGateway, createBackendGateway } from '../helpers/gateway.js'
import { openKiosk, secondGateway, seedCheckInTeam, stationTap, UIDS, type KioskClient } from './kioskFixture.js'

// Issue 10: GET /kiosk/ws follows a station's durable feed: resume by id, same events on every
// kiosk, counts from the database, the public projection for a kiosk and whole events for staff.

let gw: BackendGateway
const clients: KioskClient[] = []
afterEach(async () => {
  for (const c of clients.splice(0)) c.ws.terminate()
  await gw?.close()
})

async function listening() {
  gw = await createBackendGateway()
  await gw.app.listen({ host: '127.0.0.1', port: 0 })
  return `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`
}
async function kiosk(base: string, hello: Record<string, unknown> | null) {
  const client = await openKiosk(base, hello)
  clients.push(client)
  return client
}

describe('GET /kiosk/ws', () => {
  test('welcome with station, counts from the database and lastEventId; then live events with counts, without staff detail', async () => {
    const base = await listening()
    const s = await seedCheckInTeam(gw)
    await stationTap(gw, s.side.token, UIDS[1]!, 1) // counted for the event, at the other station
    const page = await kiosk(base, { token: s.kiosk })
    const welcome = await page.waitFor((m) => m.type === 'welcome')
    expect(welcome).toMatchObject({
      type: 'welcome',
      station: { id: s.door.stationId, name: 'Door A', mode: 'checkin', event: { id: s.eventId, name: 'Opening night' } },
      counts: { event: 1, station: 0, last5Minutes: 0 },
      reader: null,
      lastEventId: (await gw.store.stationEvents.last(s.door.stationId))!.id,
      staff: false,
    })
    await stationTap(gw, s.door.token, UIDS[0]!, 1)
    const tap = await page.waitFor((m) => m.type === 'event' && m.event.kind === 'tap')
    expect(tap).toMatchObject({ event: { kind: 'tap', data: { state: 'accepted', uid: null, checkIn: { stationName: 'Door A' } } }, counts: { event: 2, station: 1, last5Minutes: 1 } })
    // The public projection: no UID, counter or reader name.
    expect(JSON.stringify(tap)).not.toContain(UIDS[0])
    const tx = await page.waitFor((m) => m.type === 'event' && m.event.kind === 'tx')
    expect(tx).toMatchObject({ event: { data: { status: 'queued', hash: expect.stringMatching(/^0x/) } } })
  })

  test('a kiosk that reconnects with since gets the missed events exactly once; two kiosks get the same events', async () => {
    const base = await listening()
    const s = await seedCheckInTeam(gw)
    const steady = await kiosk(base, { token: s.kiosk })
    const first = await kiosk(base, { token: s.kiosk })
    await first.waitFor((m) => m.type === 'welcome')
    await stationTap(gw, s.door.token, UIDS[1]!, 1)
    const seen = await first.waitFor((m) => m.type === 'event' && m.event.kind === 'tap')
    const lastSeen = seen.type === 'event' ? seen.event.id : 0
    first.ws.close()
    await first.closed
    // Taps during the gap.
    await stationTap(gw, s.door.token, UIDS[2]!, 1)
    await stationTap(gw, s.door.token, UIDS[2]!, 1) // a replay
    await stationTap(gw, s.door.token, UIDS[3]!, 1)
    const again = await kiosk(base, { token: s.kiosk, since: lastSeen })
    await again.waitFor((m) => m.type === 'event' && m.event.kind === 'tap' && m.event.data.state === 'accepted' && m.counts.station === 3)
    await stationTap(gw, s.door.token, UIDS[0]!, 1)
    await again.waitFor((m) => m.type === 'event' && m.event.kind === 'tx')
    await steady.waitFor((m) => m.type === 'event' && m.event.kind === 'tx')
    const ids = again.events().map((m) => m.event.id)
    expect(ids.length).toBe(new Set(ids).size)
    expect(Math.min(...ids)).toBeGreaterThan(lastSeen)
    expect(again.events().map((m) => m.event.kind === 'tap' && m.event.data.state)).toEqual(['accepted', 'replay', 'accepted', 'accepted', false])
    // The steady kiosk saw everything, once, and the same rows as the reconnected one from there on.
    const steadyIds = steady.events().map((m) => m.event.id)
    expect(steadyIds.filter((id) => id > lastSeen)).toEqual(ids)
    expect(steady.events().at(-1)!.counts).toEqual(again.events().at(-1)!.counts)
    expect(again.events().at(-1)!.counts).toEqual({ event: 4, station: 4, last5Minutes: 4, claimed: 0 })
  })

  test('rows appended by another process (the CLI, a second gateway) arrive through the poll', async () => {
    const base = await listening()
    const s = await seedCheckInTeam(gw)
    const page = await kiosk(base, { token: s.kiosk })
    await page.waitFor((m) => m.type === 'welcome')
    const other = await secondGateway(gw)
    try {
      await stationTap(other, s.door.token, UIDS[0]!, 1)
      await page.waitFor((m) => m.type === 'event' && m.event.kind === 'tap' && m.counts.station === 1, 3000)
    } finally {
      await other.close()
    }
  })

  test('an unknown token gets an error and close 4401; no hello in 5 s closes 4408; ping gets pong', async () => {
    const base = await listening()
    await seedCheckInTeam(gw)
    const bad = await kiosk(base, { token: 'tgk_not-a-token' })
    expect(await bad.closed).toEqual({ code: KIOSK_CLOSE.unauthorized, reason: 'invalid_kiosk_token' })
    expect(bad.messages).toEqual([{ type: 'error', error: 'invalid_kiosk_token', message: expect.any(String) }])
    const quiet = await kiosk(base, null)
    quiet.ws.send(JSON.stringify({ type: 'ping' }))
    await quiet.waitFor((m) => m.type === 'pong')
    expect((await quiet.closed).code).toBe(KIOSK_CLOSE.helloTimeout)
  }, 10_000)

  test('revoking the station stops its kiosks: an open socket closes 4401, and its token opens no new one', async () => {
    const base = await listening()
    const s = await seedCheckInTeam(gw)
    const page = await kiosk(base, { token: s.kiosk })
    await page.waitFor((m) => m.type === 'welcome')
    expect(await revokeStation(gw.store, { tokenOrPrefix: s.door.token, now: gw.clock.now })).toBe(1)
    expect(await page.closed).toEqual({ code: KIOSK_CLOSE.unauthorized, reason: 'invalid_kiosk_token' })
    const again = await kiosk(base, { token: s.kiosk })
    expect(await again.closed).toEqual({ code: KIOSK_CLOSE.unauthorized, reason: 'invalid_kiosk_token' })
  })

  test('a staff session gets whole events; when the session ends the socket closes 4403', async () => {
    const base = await listening()
    const s = await seedCheckInTeam(gw)
    await setStaffPin(gw.store, { stationId: s.door.stationId, pin: '2468', now: gw.clock.now })
    const login = await gw.app.inject({ method: 'POST', url: '/kiosk/staff/session', headers: { 'x-kiosk-token': s.kiosk }, payload: { pin: '2468' } })
    const { session } = login.json() as { session: string }
    const staff = await kiosk(base, { token: s.kiosk, staffSession: session, since: 0 })
    await staff.waitFor((m) => m.type === 'welcome' && m.staff === true)
    // since 0: the backlog, staff rows included.
    await staff.waitFor((m) => m.type === 'event' && m.event.kind === 'staff' && m.event.data.action === 'login')
    await stationTap(gw, s.door.token, UIDS[0]!, 1, { readerName: 'Reader 1' })
    await staff.waitFor((m) => m.type === 'event' && m.event.kind === 'tap' && m.event.data.uid === UIDS[0] && m.event.data.readerName === 'Reader 1')
    gw.clock.now += 61_000
    expect((await staff.closed).code).toBe(KIOSK_CLOSE.staffSessionEnded)
    // A kiosk (not staff) never sees staff rows.
    const page = await kiosk(base, { token: s.kiosk, since: 0 })
    await page.waitFor((m) => m.type === 'event' && m.event.kind === 'tap')
    expect(page.events().some((m) => m.event.kind === 'staff')).toBe(false)
  })

  // Issue 24 point 3: 25 hellos sent before the first was answered made 11 welcomes and as many
  // subscriptions, whose token rechecks ran on after the close.
  test('hellos sent at once: one welcome, one subscription, the others answered hello_already_sent; at the close nothing of the socket runs on', async () => {
    const base = await listening()
    const s = await seedCheckInTeam(gw)
    const page = await kiosk(base, null)
    const hello = JSON.stringify({ type: 'hello', token: s.kiosk })
    for (let i = 0; i < 25; i++) page.ws.send(hello)
    await page.waitFor((m) => m.type === 'welcome')
    await expect.poll(() => page.messages.length).toBe(25)
    expect(page.messages.filter((m) => m.type === 'welcome')).toHaveLength(1)
    expect(page.messages.filter((m) => m.type === 'error' && m.error === 'hello_already_sent')).toHaveLength(24)
    expect(gw.app.services.feed.subscribers(s.door.stationId)).toBe(1)
    // One subscription: a tap reaches the page once.
    await stationTap(gw, s.door.token, UIDS[0]!, 1)
    await page.waitFor((m) => m.type === 'event' && m.event.kind === 'tx')
    expect(page.events().filter((m) => m.event.kind === 'tap')).toHaveLength(1)
    // The socket stays usable after the refused hellos.
    page.ws.send(JSON.stringify({ type: 'ping' }))
    await page.waitFor((m) => m.type === 'pong')

    page.ws.close()
    await page.closed
    await expect.poll(() => gw.app.services.feed.subscribers(s.door.stationId)).toBe(0)
    // A recheck that ran on would mark the token seen again once a minute has passed.
    const seenBefore = (await listKioskTokens(gw.store, { stationId: s.door.stationId }))[0]!.lastSeenAt
    gw.clock.now += 120_000
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    expect((await listKioskTokens(gw.store, { stationId: s.door.stationId }))[0]!.lastSeenAt).toBe(seenBefore)
  })

  test('an open socket still marks its token seen; revoking the token closes it 4401 with one error and drops its subscription', async () => {
    const base = await listening()
    const s = await seedCheckInTeam(gw)
    const page = await kiosk(base, { token: s.kiosk })
    await page.waitFor((m) => m.type === 'welcome')
    expect(gw.app.services.feed.subscribers(s.door.stationId)).toBe(1)
    // The recheck is alive while the socket is open (the test above shows it gone after the close).
    gw.clock.now += 120_000
    await expect.poll(async () => (await listKioskTokens(gw.store, { stationId: s.door.stationId }))[0]!.lastSeenAt).toBe(gw.clock.now)
    await revokeKioskToken(gw.store, { stationId: s.door.stationId, tokenOrPrefix: s.kiosk, now: gw.clock.now })
    expect(await page.closed).toEqual({ code: KIOSK_CLOSE.unauthorized, reason: 'invalid_kiosk_token' })
    expect(page.messages.filter((m) => m.type === 'error')).toEqual([{ type: 'error', error: 'invalid_kiosk_token', message: expect.any(String) }])
    expect(gw.app.services.feed.subscribers(s.door.stationId)).toBe(0)
  })
})
