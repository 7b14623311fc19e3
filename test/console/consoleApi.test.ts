import type { InjectOptions } from 'fastify'
import { afterEach, describe, expect, test } from 'vitest'
import { authenticateApiKey } from '../../src/auth/apiKeys.js'
import { CONSOLE_LINK_MS, CONSOLE_SESSION_MS, createConsoleLink, revokeConsoleSessions } from '../../src/console/consoleSessions.js'
import { recordReaderStatus } from '../../src/feed/stationStatus.js'
import { authenticateKiosk, createKioskToken } from '../../src/kiosk/kioskTokens.js'
import { openStaffSession } from '../../src/kiosk/staffAuth.js'
import { authenticateStation, createStation, ensureInProcessStation } from '../../src/stations/stations.js'
import { type BackendGateway, call, createBackendGateway, metadata, queryRows, seedTeam } from '../helpers/gateway.js'
import { seedCheckInTeam, stationTap, STRANGER, UIDS } from '../kiosk-gateway/kioskFixture.js'
import { type ConsoleRequest, consoleRequest, cookieOf, signInConsole } from './consoleClient.js'

// Issue 28, the console's server half: /console/api/* (the contract in docs/decisions.md). A session
// comes from a one-time link and lives in an HttpOnly cookie; every change needs the gateway's own
// Origin; a session sees its own team only.

let gw: BackendGateway
afterEach(async () => gw?.close())

const EVIL = 'https://evil.example'
const T0 = Date.parse('2026-11-21T10:00:00.000Z')

const api = (method: InjectOptions['method'], url: string, opts: ConsoleRequest = {}) => consoleRequest(gw, method, url, opts)
const signIn = (teamId: number) => signInConsole(gw, teamId)

const count = async (table: string) => Number((await queryRows<{ n: number }>(gw.store, `SELECT count(*) AS n FROM ${table}`))[0]!.n)

/** Team A (the kiosk fixture: two check-in doors of its event, a kiosk token, SUN chips) and team B with a station, kiosk token and key. */
async function twoTeams() {
  const a = await seedCheckInTeam(gw)
  const b = await seedTeam(gw, { name: 'Team B', chips: [{ uid: '04B0B000000001' }], guestbookContracts: [{ name: 'B guests', symbol: 'BG', chainId: 31337, events: [{ name: 'B gala', tokenId: '1', metadata: metadata() }] }] })
  const bStation = await gw.store.tx((tx) => createStation(tx, { teamId: b.teamId, name: 'B door', now: gw.clock.now }))
  const bKiosk = (await createKioskToken(gw.store, { stationId: bStation.stationId, now: gw.clock.now })).token
  const bKeyPrefix = b.apiKey.slice(0, 10)
  return { a, b: { ...b, station: bStation, kiosk: bKiosk, keyPrefix: bKeyPrefix } }
}

describe('signing in', () => {
  test('a link signs in once: 200 with the team and the end, an HttpOnly SameSite=Strict cookie on /console (no Secure over http); GET session answers with it', async () => {
    gw = await createBackendGateway()
    const { teamId } = await seedTeam(gw, { name: 'Console team' })
    const { token } = await createConsoleLink(gw.store, { teamId, now: gw.clock.now })
    expect(token).toMatch(/^tgc_[0-9a-f]{32}$/)
    // Stored hashed, never in clear.
    expect(JSON.stringify(await queryRows(gw.store, 'SELECT * FROM console_links'))).not.toContain(token.slice(4))

    const res = await api('POST', '/console/api/session', { body: { link: token } })
    expect(res.status).toBe(200)
    const expiresAt = new Date(T0 + CONSOLE_SESSION_MS).toISOString()
    expect(res.body).toEqual({ success: true, team: { id: teamId, name: 'Console team' }, expiresAt })
    expect(res.headers['set-cookie']).toMatch(/^tapgate_console=[\w-]{43}; HttpOnly; SameSite=Strict; Path=\/console; Max-Age=43200$/)
    expect(res.headers['cache-control']).toBe('no-store')
    const cookie = cookieOf(res)
    expect(JSON.stringify(await queryRows(gw.store, 'SELECT * FROM console_sessions'))).not.toContain(cookie)

    expect(await api('GET', '/console/api/session', { cookie })).toMatchObject({ status: 200, body: { success: true, team: { id: teamId, name: 'Console team' }, expiresAt } })
    // The same link again: refused, with the one answer for unknown, used and expired.
    const again = await api('POST', '/console/api/session', { body: { link: token } })
    expect(again).toMatchObject({ status: 401, body: { success: false, error: 'console_link_invalid' } })
    expect(await api('POST', '/console/api/session', { body: { link: 'tgc_00000000000000000000000000000000' } })).toMatchObject({ status: 401, body: { error: 'console_link_invalid' } })
    expect(await count('console_sessions')).toBe(1)
  })

  test('an expired link (an hour later) is 401 console_link_invalid; a minute before, it signs in', async () => {
    gw = await createBackendGateway()
    const { teamId } = await seedTeam(gw, { name: 'Console team' })
    const late = await createConsoleLink(gw.store, { teamId, now: gw.clock.now })
    const early = await createConsoleLink(gw.store, { teamId, now: gw.clock.now })
    gw.clock.now = T0 + CONSOLE_LINK_MS - 60_000
    expect((await api('POST', '/console/api/session', { body: { link: early.token } })).status).toBe(200)
    gw.clock.now = T0 + CONSOLE_LINK_MS
    expect(await api('POST', '/console/api/session', { body: { link: late.token } })).toMatchObject({ status: 401, body: { error: 'console_link_invalid' } })
  })

  test('a session ends after 12 hours; a forged, a missing and a malformed cookie are 401 console_signed_out', async () => {
    gw = await createBackendGateway()
    const { teamId } = await seedTeam(gw, { name: 'Console team' })
    const cookie = await signIn(teamId)
    gw.clock.now = T0 + CONSOLE_SESSION_MS - 1
    expect((await api('GET', '/console/api/overview', { cookie })).status).toBe(200)
    gw.clock.now = T0 + CONSOLE_SESSION_MS
    for (const c of [cookie, 'forged-cookie-value', undefined, `${cookie.slice(0, -1)}A`])
      expect(await api('GET', '/console/api/overview', { cookie: c }), String(c)).toMatchObject({ status: 401, body: { success: false, error: 'console_signed_out' } })
    // Another cookie of the same name on the request does not sign in either.
    const other = await call(gw, { method: 'GET', url: '/console/api/session', headers: { cookie: 'other=1; tapgate_console=nope' } })
    expect(other.status).toBe(401)
  })

  test('DELETE /console/api/session revokes the session and clears the cookie; --revoke-sessions ends every session of the team, and only its', async () => {
    gw = await createBackendGateway()
    const a = await seedTeam(gw, { name: 'A' })
    const b = await seedTeam(gw, { name: 'B' })
    const first = await signIn(a.teamId)
    const out = await api('DELETE', '/console/api/session', { cookie: first })
    expect(out.status).toBe(204)
    expect(out.headers['set-cookie']).toMatch(/^tapgate_console=; HttpOnly; SameSite=Strict; Path=\/console; Max-Age=0$/)
    expect(await api('GET', '/console/api/session', { cookie: first })).toMatchObject({ status: 401, body: { error: 'console_signed_out' } })
    expect((await api('DELETE', '/console/api/session', { cookie: first })).status).toBe(401)

    const [one, two, theirs] = [await signIn(a.teamId), await signIn(a.teamId), await signIn(b.teamId)]
    expect(await revokeConsoleSessions(gw.store, { teamId: a.teamId, now: gw.clock.now })).toBe(2)
    for (const cookie of [one, two]) expect((await api('GET', '/console/api/stations', { cookie })).status).toBe(401)
    expect((await api('GET', '/console/api/stations', { cookie: theirs })).status).toBe(200)
  })

  test('over HTTPS (a trusted proxy says so) the cookie is Secure, and the Origin is the https one', async () => {
    gw = await createBackendGateway({ config: { trustProxy: true } })
    const { teamId } = await seedTeam(gw, { name: 'Console team' })
    const { token } = await createConsoleLink(gw.store, { teamId, now: gw.clock.now })
    const https = { 'x-forwarded-proto': 'https', host: 'gate.example' }
    const plain = await call(gw, { method: 'POST', url: '/console/api/session', headers: { ...https, origin: 'http://gate.example' }, payload: { link: token } })
    expect(plain).toMatchObject({ status: 403, body: { error: 'console_cross_site' } })
    const res = await call(gw, { method: 'POST', url: '/console/api/session', headers: { ...https, origin: 'https://gate.example' }, payload: { link: token } })
    expect(res.status).toBe(200)
    expect(res.headers['set-cookie']).toMatch(/; Path=\/console; Max-Age=43200; Secure$/)
  })

  test('with publicBaseUrl, the Origin must be its origin', async () => {
    gw = await createBackendGateway({ config: { publicBaseUrl: 'https://tapgate.example.org/' } })
    const { teamId } = await seedTeam(gw, { name: 'Console team' })
    const { token } = await createConsoleLink(gw.store, { teamId, now: gw.clock.now })
    expect((await api('POST', '/console/api/session', { body: { link: token } })).status).toBe(403)
    expect((await api('POST', '/console/api/session', { body: { link: token }, origin: 'https://tapgate.example.org' })).status).toBe(200)
  })
})

describe('cross-site requests', () => {
  test('a POST, PATCH, PUT or DELETE from another origin, or with no Origin, is 403 console_cross_site and changes nothing', async () => {
    gw = await createBackendGateway()
    const { a } = await twoTeams()
    const cookie = await signIn(a.teamId)
    const door = a.door.stationId
    const changes: Array<[InjectOptions['method'], string, unknown]> = [
      ['POST', '/console/api/stations', { name: 'Sneaky' }],
      ['PATCH', `/console/api/stations/${door}`, { name: 'Renamed', mode: 'closed' }],
      ['PUT', `/console/api/stations/${door}/staff-pin`, { pin: '123456' }],
      ['POST', `/console/api/stations/${door}/kiosk-url`, undefined],
      ['DELETE', `/console/api/stations/${door}/kiosk-tokens/${a.kiosk.slice(0, 10)}`, undefined],
      ['DELETE', `/console/api/stations/${door}`, undefined],
      ['POST', '/console/api/api-keys', { label: 'sneaky' }],
      ['DELETE', `/console/api/api-keys/${a.apiKey.slice(0, 10)}`, undefined],
      ['DELETE', '/console/api/session', undefined],
    ]
    const before = await Promise.all(['stations', 'kiosk_tokens', 'api_keys', 'staff_pins', 'console_sessions'].map(count))
    for (const origin of [EVIL, null, 'null', 'http://localhost:8080'])
      for (const [method, url, body] of changes)
        expect(await api(method, url, { cookie, body, origin }), `${method} ${url} from ${origin}`).toMatchObject({ status: 403, body: { success: false, error: 'console_cross_site' } })
    expect(await Promise.all(['stations', 'kiosk_tokens', 'api_keys', 'staff_pins', 'console_sessions'].map(count))).toEqual(before)
    const station = (await api('GET', '/console/api/stations', { cookie })).body.stations.find((s: { id: number }) => s.id === door)
    expect(station).toMatchObject({ name: 'Door A', mode: 'checkin', revokedAt: null })
    expect(await authenticateApiKey(gw.store, a.apiKey)).toMatchObject({ id: a.teamId })
    expect((await api('GET', '/console/api/session', { cookie })).status).toBe(200)
    // Signing in is a change too: a cross-site page cannot sign a browser in to its own team's console.
    const { token } = await createConsoleLink(gw.store, { teamId: a.teamId, now: gw.clock.now })
    expect((await api('POST', '/console/api/session', { body: { link: token }, origin: EVIL })).status).toBe(403)
    expect((await api('POST', '/console/api/session', { body: { link: token } })).status).toBe(200)
  })
})

describe('the routes', () => {
  test('overview and stations: mode, event, ticket types, reader, kiosks connected, last tap and taps today; revoked stations on the stations list only', async () => {
    gw = await createBackendGateway({ config: { rateLimit: { max: 100_000 } } })
    const { a } = await twoTeams()
    const cookie = await signIn(a.teamId)
    expect((await stationTap(gw, a.door.token, UIDS[0]!, 1)).status).toBe(200)
    gw.clock.now += 60_000
    expect((await stationTap(gw, a.door.token, UIDS[0]!, 1)).status).toBe(409)
    await recordReaderStatus(gw.store, { stationId: a.door.stationId, status: { readers: ['ACR122U'], cardPresent: false, pcscd: true }, now: gw.clock.now })
    const unsubscribe = await gw.app.services.feed.subscribe(a.door.stationId, 0, () => {})
    try {
      const overview = await api('GET', '/console/api/overview', { cookie })
      expect(overview.status).toBe(200)
      expect(overview.body.team).toEqual({ id: a.teamId, name: 'Kiosk team' })
      expect(overview.body.taps).toEqual({ today: 2, accepted: 1, refused: 1 })
      const [door, side] = overview.body.stations
      expect(door).toEqual({
        id: a.door.stationId,
        name: 'Door A',
        prefix: a.door.prefix,
        mode: 'checkin',
        eventId: a.eventId,
        eventName: 'Opening night',
        ticketTypes: null,
        revokedAt: null,
        createdAt: new Date(T0).toISOString(),
        reader: { readers: ['ACR122U'], cardPresent: false, pcsc: 'up', at: new Date(T0 + 60_000).toISOString() },
        kiosksConnected: 1,
        lastTapAt: new Date(T0 + 60_000).toISOString(),
        tapsToday: 2,
      })
      expect(side).toMatchObject({ id: a.side.stationId, name: 'Door B', reader: null, kiosksConnected: 0, lastTapAt: null, tapsToday: 0 })
    } finally {
      unsubscribe()
    }
    expect((await api('DELETE', `/console/api/stations/${a.side.stationId}`, { cookie })).status).toBe(204)
    expect((await api('GET', '/console/api/overview', { cookie })).body.stations.map((s: { id: number }) => s.id)).toEqual([a.door.stationId])
    const stations = (await api('GET', '/console/api/stations', { cookie })).body.stations
    expect(stations.map((s: { id: number; revokedAt: string | null }) => [s.id, s.revokedAt])).toEqual([
      [a.door.stationId, null],
      [a.side.stationId, new Date(gw.clock.now).toISOString()],
    ])
  })

  test('create, rename, set mode and event and ticket types, staff PIN, kiosk URL with QR, kiosk tokens, revoke: each as the CLI does it', async () => {
    gw = await createBackendGateway()
    const { a } = await twoTeams()
    const cookie = await signIn(a.teamId)

    const created = await api('POST', '/console/api/stations', { cookie, body: { name: '  Bar  ' } })
    expect(created.status).toBe(201)
    expect(created.body.token).toMatch(/^tgs_/)
    expect(created.body.station).toMatchObject({ name: 'Bar', mode: null, eventId: null, revokedAt: null, kiosksConnected: 0, tapsToday: 0, prefix: created.body.token.slice(0, 10) })
    const id = created.body.station.id as number
    expect(await authenticateStation(gw.store, created.body.token)).toMatchObject({ id, teamId: a.teamId })

    // setStationMode's own rules and errors: a door needs an event; the event must be the team's.
    expect(await api('PATCH', `/console/api/stations/${id}`, { cookie, body: { mode: 'checkin' } })).toMatchObject({ status: 400, body: { error: 'event_required' } })
    const renamed = await api('PATCH', `/console/api/stations/${id}`, { cookie, body: { name: 'Main bar' } })
    expect(renamed).toMatchObject({ status: 200, body: { success: true, station: { id, name: 'Main bar', mode: null } } })
    const door = await api('PATCH', `/console/api/stations/${id}`, { cookie, body: { mode: 'checkin', eventId: a.otherEventId, ticketTypes: ['VIP', 'Press', 'VIP'] } })
    expect(door).toMatchObject({ status: 200, body: { station: { mode: 'checkin', eventId: a.otherEventId, eventName: 'Afterparty', ticketTypes: ['VIP', 'Press'] } } })
    // Only the ticket types: the mode and event stay.
    expect((await api('PATCH', `/console/api/stations/${id}`, { cookie, body: { ticketTypes: null } })).body.station).toMatchObject({ mode: 'checkin', eventId: a.otherEventId, ticketTypes: null })
    expect((await api('PATCH', `/console/api/stations/${id}`, { cookie, body: { mode: null } })).body.station).toMatchObject({ mode: null, eventId: a.otherEventId })
    // The feed tells the kiosks, as `station set` does.
    const modeRows = await queryRows<{ n: number }>(gw.store, `SELECT count(*) AS n FROM station_events WHERE station_id = ${id} AND kind = 'mode'`)
    expect(Number(modeRows[0]!.n)).toBe(3)

    expect((await api('PUT', `/console/api/stations/${id}/staff-pin`, { cookie, body: { pin: '824613' } })).status).toBe(204)
    const station = (await gw.store.stations.get(id))!
    await expect(openStaffSession(gw.store, { station, pin: '824613', now: gw.clock.now })).resolves.toMatchObject({ session: expect.any(String) })

    const kiosk = await api('POST', `/console/api/stations/${id}/kiosk-url`, { cookie })
    expect(kiosk.status).toBe(201)
    // The base is the address this request reached (no publicBaseUrl here).
    const [base, token] = (kiosk.body.url as string).split('/kiosk#token=') as [string, string]
    expect(base).toMatch(/^http:\/\/localhost(:80)?$/)
    expect(token).toMatch(/^tgk_[\w-]{32}$/)
    expect(kiosk.body.staffUrl).toBe(`${base}/kiosk/staff#token=${token}`)
    expect(kiosk.body.qrSvg).toContain('<svg')
    expect(kiosk.body.qrSvg).toContain('</svg>')
    expect(await authenticateKiosk(gw.store, token)).toMatchObject({ id })

    const tokens = await api('GET', `/console/api/stations/${id}/kiosk-tokens`, { cookie })
    expect(tokens).toMatchObject({ status: 200, body: { tokens: [{ prefix: token.slice(0, 10), createdAt: new Date(T0).toISOString(), lastSeenAt: null, revokedAt: null }] } })
    expect((await api('DELETE', `/console/api/stations/${id}/kiosk-tokens/${token.slice(0, 10)}`, { cookie })).status).toBe(204)
    await expect(authenticateKiosk(gw.store, token)).rejects.toMatchObject({ code: 'invalid_kiosk_token' })
    expect((await api('GET', `/console/api/stations/${id}/kiosk-tokens`, { cookie })).body.tokens[0].revokedAt).toBe(new Date(T0).toISOString())
    expect(await api('DELETE', `/console/api/stations/${id}/kiosk-tokens/${token.slice(0, 10)}`, { cookie })).toMatchObject({ status: 404, body: { error: 'kiosk_token_not_found' } })

    expect((await api('DELETE', `/console/api/stations/${id}`, { cookie })).status).toBe(204)
    await expect(authenticateStation(gw.store, created.body.token)).rejects.toMatchObject({ code: 'invalid_station_token' })
    expect(await api('DELETE', `/console/api/stations/${id}`, { cookie })).toMatchObject({ status: 404, body: { error: 'station_not_found' } })
    // A revoked station takes no mode and no kiosk URL (the domain's "no active station").
    expect((await api('PATCH', `/console/api/stations/${id}`, { cookie, body: { mode: 'closed' } })).status).toBe(404)
    expect((await api('POST', `/console/api/stations/${id}/kiosk-url`, { cookie })).status).toBe(404)
  })

  test("the gateway's own readers' station cannot be revoked (its prefix is every team's)", async () => {
    gw = await createBackendGateway()
    const { teamId } = await seedTeam(gw, { name: 'Console team' })
    const own = await ensureInProcessStation(gw.store, { teamId, now: gw.clock.now })
    const cookie = await signIn(teamId)
    expect(await api('DELETE', `/console/api/stations/${own.id}`, { cookie })).toMatchObject({ status: 400, body: { error: 'station_in_process' } })
    expect((await gw.store.stations.get(own.id))!.revokedAt).toBeNull()
  })

  test('events, API keys (shown once, listed by prefix, revoked) and the tap log with its filters', async () => {
    gw = await createBackendGateway({ config: { rateLimit: { max: 100_000 } } })
    const { a } = await twoTeams()
    const cookie = await signIn(a.teamId)

    expect(await api('GET', '/console/api/events', { cookie })).toMatchObject({
      status: 200,
      body: { events: [{ id: a.eventId, name: 'Opening night' }, { id: a.otherEventId, name: 'Afterparty' }] },
    })

    const made = await api('POST', '/console/api/api-keys', { cookie, body: { label: 'shop' } })
    expect(made.status).toBe(201)
    expect(made.body).toEqual({ success: true, apiKey: expect.stringMatching(/^tg_[\w-]{32}$/), prefix: made.body.apiKey.slice(0, 10) })
    expect((await call(gw, { url: '/chip-groups', headers: { 'x-service-api-key': made.body.apiKey } })).status).toBe(200)
    const unlabelled = await api('POST', '/console/api/api-keys', { cookie, body: {} })
    expect(unlabelled.status).toBe(201)
    const keys = (await api('GET', '/console/api/api-keys', { cookie })).body.keys
    expect(keys).toEqual([
      { prefix: a.apiKey.slice(0, 10), label: 'test', createdAt: new Date(T0).toISOString(), revokedAt: null },
      { prefix: made.body.prefix, label: 'shop', createdAt: new Date(T0).toISOString(), revokedAt: null },
      { prefix: unlabelled.body.prefix, label: null, createdAt: new Date(T0).toISOString(), revokedAt: null },
    ])
    expect(JSON.stringify(keys)).not.toContain(made.body.apiKey)
    expect((await api('DELETE', `/console/api/api-keys/${made.body.prefix}`, { cookie })).status).toBe(204)
    expect((await call(gw, { url: '/chip-groups', headers: { 'x-service-api-key': made.body.apiKey } })).status).toBe(401)
    expect(await api('DELETE', `/console/api/api-keys/${made.body.prefix}`, { cookie })).toMatchObject({ status: 404, body: { error: 'api_key_not_found' } })

    // Taps: accepted at the door, a replay there, an unknown chip at the side door, one by phone (no station).
    expect((await stationTap(gw, a.door.token, UIDS[0]!, 1)).status).toBe(200)
    expect((await stationTap(gw, a.door.token, UIDS[0]!, 1)).status).toBe(409)
    expect((await stationTap(gw, a.side.token, STRANGER, 1)).status).toBe(404)
    const all = (await api('GET', '/console/api/taps', { cookie })).body.taps
    expect(all.map((t: { stationId: number; accepted: boolean; reason: string; uid: string }) => [t.stationId, t.accepted, t.reason, t.uid])).toEqual([
      [a.side.stationId, false, 'unknown_chip', STRANGER],
      [a.door.stationId, false, 'counter_replay', UIDS[0]],
      [a.door.stationId, true, 'accepted', UIDS[0]],
    ])
    expect(all[1]).toEqual({
      id: expect.any(Number),
      at: new Date(T0).toISOString(),
      source: 'station',
      uid: UIDS[0],
      stationId: a.door.stationId,
      accepted: false,
      reason: 'counter_replay',
      words: 'This link has already been used. Tap the chip again for a fresh one.',
      counter: 1,
      detail: expect.stringContaining('not above the last accepted counter 1'),
    })
    expect(all[2]).toMatchObject({ words: null, counter: 1 })
    expect(JSON.stringify(all)).not.toMatch(/refId|ref_id/)
    const only = async (query: string) => (await api('GET', `/console/api/taps?${query}`, { cookie })).body.taps.map((t: { reason: string }) => t.reason)
    expect(await only('verdict=refused')).toEqual(['unknown_chip', 'counter_replay'])
    expect(await only('verdict=accepted')).toEqual(['accepted'])
    expect(await only(`stationId=${a.door.stationId}`)).toEqual(['counter_replay', 'accepted'])
    expect(await only(`uid=${UIDS[0]!.toLowerCase()}`)).toEqual(['counter_replay', 'accepted'])
    expect(await only('limit=1')).toEqual(['unknown_chip'])
    // A form's blank filters are no filters.
    expect(await only('uid=&stationId=&verdict=&limit=')).toEqual(['unknown_chip', 'counter_replay', 'accepted'])
  })
})

describe('bad input', () => {
  test('400 validation_failed with `errors` keyed by the field, and nothing stored', async () => {
    gw = await createBackendGateway()
    const { a } = await twoTeams()
    const cookie = await signIn(a.teamId)
    const door = a.door.stationId
    const before = await Promise.all(['stations', 'kiosk_tokens', 'api_keys', 'staff_pins', 'station_events'].map(count))
    const cases: Array<[InjectOptions['method'], string, unknown, string]> = [
      ['POST', '/console/api/stations', {}, 'name'],
      ['POST', '/console/api/stations', { name: '   ' }, 'name'],
      ['POST', '/console/api/stations', { name: 'x'.repeat(101) }, 'name'],
      ['POST', '/console/api/stations', { name: 'Door', token: 'mine' }, 'body'],
      ['PATCH', `/console/api/stations/${door}`, { mode: 'dance' }, 'mode'],
      ['PATCH', `/console/api/stations/${door}`, { eventId: 'one' }, 'eventId'],
      ['PATCH', `/console/api/stations/${door}`, { ticketTypes: [] }, 'ticketTypes'],
      ['PATCH', `/console/api/stations/${door}`, { ticketTypes: ['VIP', ''] }, 'ticketTypes.1'],
      ['PATCH', `/console/api/stations/${door}`, { name: '' }, 'name'],
      ['PATCH', `/console/api/stations/${door}`, {}, 'body'],
      ['PATCH', '/console/api/stations/0', { name: 'x' }, 'id'],
      ['PUT', `/console/api/stations/${door}/staff-pin`, { pin: '12' }, 'pin'],
      ['PUT', `/console/api/stations/${door}/staff-pin`, { pin: '12ab56' }, 'pin'],
      ['PUT', `/console/api/stations/${door}/staff-pin`, {}, 'pin'],
      ['POST', '/console/api/api-keys', { label: '' }, 'label'],
      ['POST', '/console/api/api-keys', { label: 7 }, 'label'],
      ['DELETE', '/console/api/api-keys/short', undefined, 'prefix'],
      ['DELETE', `/console/api/stations/${door}/kiosk-tokens/tgk_`, undefined, 'prefix'],
      ['GET', '/console/api/taps?verdict=maybe', undefined, 'verdict'],
      ['GET', '/console/api/taps?limit=0', undefined, 'limit'],
      ['GET', '/console/api/taps?limit=1001', undefined, 'limit'],
      ['GET', '/console/api/taps?uid=04XYZ', undefined, 'uid'],
      ['GET', '/console/api/taps?stationId=-1', undefined, 'stationId'],
      ['POST', '/console/api/session', { link: '' }, 'link'],
      ['POST', '/console/api/session', {}, 'link'],
    ]
    for (const [method, url, body, field] of cases) {
      const res = await api(method, url, { cookie, body })
      expect(res.status, `${method} ${url} ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`).toBe(400)
      expect(res.body).toMatchObject({ success: false, error: 'validation_failed', errors: { [field]: expect.any(String) } })
    }
    expect(await Promise.all(['stations', 'kiosk_tokens', 'api_keys', 'staff_pins', 'station_events'].map(count))).toEqual(before)
    expect((await gw.store.stations.get(door))!.name).toBe('Door A')
  })
})

describe("one team's session and another team's things", () => {
  test("team A's session gets 404 on every route for team B's station, kiosk token and key, never sees B's data, and B's things stay as they were", async () => {
    gw = await createBackendGateway({ config: { rateLimit: { max: 100_000 } } })
    const { a, b } = await twoTeams()
    // B's station refuses A's chip (unknown there): a row of A's chip at B's station, and a tap of B's own.
    expect((await stationTap(gw, b.station.token, UIDS[1]!, 1)).status).toBe(404)
    const cookie = await signIn(a.teamId)
    const bId = b.station.stationId
    const bPrefix = b.kiosk.slice(0, 10)

    const notFound: Array<[InjectOptions['method'], string, unknown]> = [
      ['PATCH', `/console/api/stations/${bId}`, { name: 'Mine now' }],
      ['PATCH', `/console/api/stations/${bId}`, { mode: 'closed' }],
      ['PUT', `/console/api/stations/${bId}/staff-pin`, { pin: '123456' }],
      ['POST', `/console/api/stations/${bId}/kiosk-url`, undefined],
      ['GET', `/console/api/stations/${bId}/kiosk-tokens`, undefined],
      ['DELETE', `/console/api/stations/${bId}/kiosk-tokens/${bPrefix}`, undefined],
      // B's kiosk token under A's own station: not A's station's token.
      ['DELETE', `/console/api/stations/${a.door.stationId}/kiosk-tokens/${bPrefix}`, undefined],
      ['DELETE', `/console/api/stations/${bId}`, undefined],
      ['DELETE', `/console/api/api-keys/${b.keyPrefix}`, undefined],
      ['GET', `/console/api/taps?stationId=${bId}`, undefined],
      // An event of B's for A's door: setStationMode's "not the station's team's event".
      ['PATCH', `/console/api/stations/${a.door.stationId}`, { mode: 'checkin', eventId: (await gw.store.guestbook.listEvents(b.teamId))[0]!.id }],
    ]
    for (const [method, url, body] of notFound) {
      const res = await api(method, url, { cookie, body })
      expect(res.status, `${method} ${url}: ${JSON.stringify(res.body)}`).toBe(404)
      expect(res.body.success).toBe(false)
    }

    // The list routes: nothing of B's, by id, name or prefix.
    const lists = ['/console/api/session', '/console/api/overview', '/console/api/stations', '/console/api/events', '/console/api/api-keys', '/console/api/taps']
    for (const url of lists) {
      const res = await api('GET', url, { cookie })
      expect(res.status, url).toBe(200)
      const text = JSON.stringify(res.body)
      for (const secret of ['Team B', 'B door', 'B gala', b.station.prefix, bPrefix, b.keyPrefix, '04B0B000000001']) expect(text, `${url} shows ${secret}`).not.toContain(secret)
      expect(text, url).not.toContain(`"stationId":${bId}`)
      for (const station of res.body.stations ?? []) expect(station.id, url).not.toBe(bId)
    }
    // A's chip tapped at B's station is A's row, without naming B's station.
    expect((await api('GET', '/console/api/taps', { cookie })).body.taps).toEqual([expect.objectContaining({ uid: UIDS[1], stationId: null, reason: 'unknown_chip' })])

    // B's things as they were: station active and named, its kiosk and key working, no PIN set.
    expect(await gw.store.stations.get(bId)).toMatchObject({ name: 'B door', mode: null, revokedAt: null })
    expect(await authenticateKiosk(gw.store, b.kiosk)).toMatchObject({ id: bId })
    expect(await authenticateApiKey(gw.store, b.apiKey)).toMatchObject({ id: b.teamId })
    expect(await gw.store.staffAuth.getPin(bId)).toBeUndefined()
    expect((await gw.store.kioskTokens.listByStation(bId)).length).toBe(1)
    // And B's own session sees its station's tap of A's chip, with its station.
    const bCookie = await signIn(b.teamId)
    expect((await api('GET', '/console/api/taps', { cookie: bCookie })).body.taps).toEqual([expect.objectContaining({ uid: UIDS[1], stationId: bId })])
  })
})
