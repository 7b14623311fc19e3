import fs from 'node:fs'
import path from 'node:path'
import type { InjectOptions } from 'fastify'
import { afterEach, describe, expect, test, vi } from 'vitest'
import { queueGuestbookDeploy } from '../../src/guestbook/guestbookChain.js'
import { type BackendGateway, call, createBackendGateway, metadata, queryRows, seedTeam } from '../helpers/gateway.js'
import { addDoor, seedDoor, staffClient, tapper } from '../door/doorFixture.js'
import { UIDS } from '../kiosk-gateway/kioskFixture.js'
import { type ConsoleRequest, consoleRequest, signInConsole } from './consoleClient.js'

// Issue 28, part 2 (notes/console-contract-2.md): the console's events and guest lists. Each route is
// the API's or the CLI's own function under the session's team: the same import, list, export and
// door numbers, the same answers.

let gw: BackendGateway
afterEach(async () => {
  vi.unstubAllEnvs()
  await gw?.close()
})

const fixtures = path.join(import.meta.dirname, '../fixtures/attendees')
const eventbrite = fs.readFileSync(path.join(fixtures, 'eventbrite.csv'), 'utf8')
/** The same export with one bad email on line 3. */
const badEventbrite = eventbrite.replace('jane.doe@example.com', 'jane.doe')
const guestbook = (name: string) => [{ name, symbol: 'GST', chainId: 31337, events: [{ name: 'Opening', tokenId: '1', metadata: metadata() }] }]

const api = (method: InjectOptions['method'], url: string, opts: ConsoleRequest = {}) => consoleRequest(gw, method, url, opts)
const upload = (cookie: string, eventId: number, file: string, query = '') =>
  api('POST', `/console/api/events/${eventId}/guests${query}`, { cookie, body: file, contentType: 'text/csv' })
const apiKeyCall = (apiKey: string, method: InjectOptions['method'], url: string, extra: Partial<InjectOptions> = {}) =>
  call(gw, { method, url, headers: { 'x-service-api-key': apiKey, ...(extra.headers ?? {}) }, ...(extra.payload === undefined ? {} : { payload: extra.payload }) })
const count = async (sql: string) => Number((await queryRows<{ n: number }>(gw.store, sql))[0]!.n)

/** A team with a guestbook and its event "Opening" (token id 1), signed in to the console. */
async function venue(name = 'Venue') {
  const team = await seedTeam(gw, { name, guestbookContracts: guestbook(`${name} guests`) })
  const [event] = await gw.store.guestbook.listEvents(team.teamId)
  return { ...team, eventId: event!.id, contractId: event!.contractId, cookie: await signInConsole(gw, team.teamId) }
}

describe('events', () => {
  test("create: a guestbook event on the team's guestbook, the next token id, metadata from the name; listed with guests, checked in and door settings", async () => {
    gw = await createBackendGateway()
    const v = await venue()
    const made = await api('POST', '/console/api/events', { cookie: v.cookie, body: { name: '  Spring gala ' } })
    expect(made.status, JSON.stringify(made.body)).toBe(201)
    const gala = { id: expect.any(Number), name: 'Spring gala', guests: 0, checkedIn: 0, reentry: true, publicNames: 'first', admitUnpaid: false }
    expect(made.body).toEqual({ success: true, event: gala })
    const row = (await gw.store.guestbook.getEvent(made.body.event.id))!
    expect(row).toMatchObject({ teamId: v.teamId, contractId: v.contractId, tokenId: '2' })
    expect(JSON.parse(row.metadata)).toEqual({ name: 'Spring gala', collection: 'Venue guests', description: '', image: '', attributes: [] })
    // The API lists it as any other guestbook event.
    expect((await apiKeyCall(v.apiKey, 'GET', '/events')).body.map((e: { name: string; contract: { tokenId: string } }) => [e.name, e.contract.tokenId])).toEqual([
      ['Opening', '1'],
      ['Spring gala', '2'],
    ])

    expect((await api('POST', '/console/api/events', { cookie: v.cookie, body: { name: 'Afterparty' } })).body.event.name).toBe('Afterparty')
    expect((await gw.store.guestbook.listEvents(v.teamId)).map((e) => e.tokenId)).toEqual(['1', '2', '3'])
    expect(await api('GET', '/console/api/events', { cookie: v.cookie })).toMatchObject({
      status: 200,
      body: { success: true, events: [{ id: v.eventId, name: 'Opening', guests: 0, checkedIn: 0 }, gala, { name: 'Afterparty', guests: 0 }] },
    })

    // A name is required, 200 characters at most; nothing else is taken; nothing stored.
    expect(await api('POST', '/console/api/events', { cookie: v.cookie, body: { name: '   ' } })).toMatchObject({ status: 400, body: { error: 'validation_failed', errors: { name: 'An event needs a name' } } })
    expect((await api('POST', '/console/api/events', { cookie: v.cookie, body: { name: 'x'.repeat(201) } })).status).toBe(400)
    expect((await api('POST', '/console/api/events', { cookie: v.cookie, body: { name: 'X', tokenId: '9' } })).status).toBe(400)
    expect(await count('SELECT count(*) AS n FROM guestbook_events')).toBe(3)
  })

  test('a team with no guestbook gets "<team> guestbook" deployed (queued) on the default chain, once; the proof events\' guestbook is not one', async () => {
    vi.stubEnv('CONSOLE_TEST_RELAYER_KEY', `0x${'59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'}`)
    gw = await createBackendGateway({ config: { chains: { '84532': { rpcUrl: 'http://127.0.0.1:1', relayerKeyEnv: 'CONSOLE_TEST_RELAYER_KEY' } } } })
    const { teamId } = await seedTeam(gw, { name: 'Solo' })
    // The guestbook the gateway keeps for the team's proof events: its token ids are the proof events' ids.
    await gw.store.tx(async (tx) => {
      const signer = gw.app.services.chains.signer(84532)
      const { contractId } = await queueGuestbookDeploy(tx, signer, gw.config, { teamId, name: 'Proof events', symbol: 'PROOF', now: gw.clock.now })
      await tx.proofEvents.setContract(teamId, 84532, contractId)
    })
    const cookie = await signInConsole(gw, teamId)
    const first = await api('POST', '/console/api/events', { cookie, body: { name: 'Launch' } })
    expect(first.status, JSON.stringify(first.body)).toBe(201)
    const second = await api('POST', '/console/api/events', { cookie, body: { name: 'Launch, day 2' } })
    const contracts = await gw.store.guestbook.listContracts(teamId)
    expect(contracts.map((c) => [c.name, c.symbol, c.chainId, c.status])).toEqual([
      ['Proof events', 'PROOF', 84532, 'pending'],
      ['Solo guestbook', 'GUEST', 84532, 'pending'],
    ])
    const events = await gw.store.guestbook.listEvents(teamId)
    expect(events.map((e) => [e.id, e.contractId, e.tokenId])).toEqual([
      [first.body.event.id, contracts[1]!.id, '1'],
      [second.body.event.id, contracts[1]!.id, '2'],
    ])
    // Through POST /events/contracts's function: the deploy is in the outbox, as that route queues it.
    expect(await count("SELECT count(*) AS n FROM chain_txs WHERE kind = 'deploy_guestbook'")).toBe(2)
  })

  test('a team with no guestbook on a gateway with no chain: 400 chain_not_configured, nothing stored', async () => {
    gw = await createBackendGateway()
    const { teamId } = await seedTeam(gw, { name: 'Chainless' })
    const cookie = await signInConsole(gw, teamId)
    expect(await api('POST', '/console/api/events', { cookie, body: { name: 'Launch' } })).toMatchObject({ status: 400, body: { error: 'chain_not_configured' } })
    expect(await count('SELECT count(*) AS n FROM guestbook_contracts')).toBe(0)
  })

  test("door settings: PATCH sets what it is given (setEventDoorSettings), answers the event; an empty body is 400 nothing_to_set, an unknown field 400", async () => {
    gw = await createBackendGateway()
    const v = await venue()
    const patch = (body: unknown) => api('PATCH', `/console/api/events/${v.eventId}`, { cookie: v.cookie, body })
    expect(await patch({ reentry: false, publicNames: 'full' })).toMatchObject({
      status: 200,
      body: { success: true, event: { id: v.eventId, name: 'Opening', guests: 0, checkedIn: 0, reentry: false, publicNames: 'full', admitUnpaid: false } },
    })
    expect((await patch({ admitUnpaid: true })).body.event).toMatchObject({ reentry: false, publicNames: 'full', admitUnpaid: true })
    expect(await gw.store.guestbook.getEvent(v.eventId)).toMatchObject({ reentry: 0, publicNames: 'full', admitUnpaid: 1 })

    expect(await patch({})).toMatchObject({ status: 400, body: { success: false, error: 'nothing_to_set' } })
    expect(await patch({ reentry: 'no' })).toMatchObject({ status: 400, body: { error: 'validation_failed', errors: { reentry: expect.any(String) } } })
    expect(await patch({ name: 'Renamed' })).toMatchObject({ status: 400, body: { error: 'validation_failed' } })
    expect(await gw.store.guestbook.getEvent(v.eventId)).toMatchObject({ name: 'Opening', reentry: 0, publicNames: 'full', admitUnpaid: 1 })
    expect((await api('GET', '/console/api/events', { cookie: v.cookie })).body.events[0]).toMatchObject({ reentry: false, publicNames: 'full', admitUnpaid: true })
  })
})

describe('guest lists', () => {
  test('an upload with a bad row is 400 with the row\'s error (the API\'s own answer) and imports nothing; the fixed file imports, with its counts', async () => {
    gw = await createBackendGateway()
    const v = await venue()
    const bad = await upload(v.cookie, v.eventId, badEventbrite)
    expect(bad).toMatchObject({ status: 400, body: { success: false, error: 'csv_rows_invalid', errors: { 'line 3, Email': '"jane.doe" is not an email address' } } })
    expect((await api('GET', `/console/api/events/${v.eventId}/guests`, { cookie: v.cookie })).body).toEqual({ success: true, total: 0, attendees: [] })
    // The same file through the API: the same answer.
    const viaApi = await apiKeyCall(v.apiKey, 'POST', `/events/${v.eventId}/attendees/import`, { headers: { 'content-type': 'text/csv' }, payload: badEventbrite })
    expect(viaApi).toMatchObject({ status: 400, body: bad.body })
    expect(await gw.store.attendees.countEvent(v.eventId)).toBe(0)

    const good = await upload(v.cookie, v.eventId, eventbrite)
    expect(good.status, JSON.stringify(good.body)).toBe(200)
    expect(good.body).toEqual({
      success: true,
      report: expect.objectContaining({ success: true, eventId: v.eventId, format: 'eventbrite', fileType: 'csv', encoding: 'utf-8', inserted: expect.any(Number), updated: 0 }),
    })
    const { imported } = good.body.report
    expect(imported).toBeGreaterThan(0)
    expect(good.body.report.inserted).toBe(imported)
    // Again: each guest updated in place, none added.
    expect((await upload(v.cookie, v.eventId, eventbrite)).body.report).toMatchObject({ imported, inserted: 0, updated: imported })
    expect((await api('GET', '/console/api/events', { cookie: v.cookie })).body.events[0]).toMatchObject({ guests: imported, checkedIn: 0 })

    // ?map= as on the API; a body that is no guest list file is 415.
    const map = encodeURIComponent('name=Guest,email=Mail,ticket=Barcode,type=Pass')
    const custom = fs.readFileSync(path.join(fixtures, 'custom.csv'), 'utf8')
    expect((await upload(v.cookie, v.eventId, custom, `?map=${map}`)).body.report).toMatchObject({ format: 'map', imported: 3 })
    expect(await api('POST', `/console/api/events/${v.eventId}/guests`, { cookie: v.cookie, body: { guests: [] } })).toMatchObject({ status: 415, body: { error: 'unsupported_media_type' } })
    // A change: no Origin, no upload.
    expect((await api('POST', `/console/api/events/${v.eventId}/guests`, { cookie: v.cookie, body: eventbrite, contentType: 'text/csv', origin: null })).status).toBe(403)
  })

  test("search and export: the API's page and the API's download, the export an attachment", async () => {
    gw = await createBackendGateway()
    const v = await venue()
    expect((await upload(v.cookie, v.eventId, eventbrite)).status).toBe(200)

    const page = await api('GET', `/console/api/events/${v.eventId}/guests?q=jane&limit=50&offset=0`, { cookie: v.cookie })
    expect(page).toMatchObject({ status: 200, body: { success: true, total: 1, attendees: [{ name: 'Jane Doe', email: 'jane.doe@example.com', ticketType: 'VIP', paid: true }] } })
    expect(page.body).toEqual((await apiKeyCall(v.apiKey, 'GET', `/events/${v.eventId}/attendees?q=jane`)).body)
    // A blank search (the page's empty box) is the whole list; limit and offset page it.
    const all = await api('GET', `/console/api/events/${v.eventId}/guests?q=&limit=50&offset=0`, { cookie: v.cookie })
    expect(all.body.total).toBe(await gw.store.attendees.countEvent(v.eventId))
    const second = await api('GET', `/console/api/events/${v.eventId}/guests?q=&limit=1&offset=1`, { cookie: v.cookie })
    expect(second.body.attendees).toEqual([all.body.attendees[1]])
    expect((await api('GET', `/console/api/events/${v.eventId}/guests?limit=0`, { cookie: v.cookie })).status).toBe(400)

    const download = (url: string, headers: Record<string, string>) => gw.app.inject({ method: 'GET', url, headers })
    const csv = await download(`/console/api/events/${v.eventId}/guests/export?format=csv`, { cookie: `tapgate_console=${v.cookie}` })
    expect(csv.statusCode).toBe(200)
    expect(csv.headers['content-type']).toMatch(/^text\/csv/)
    expect(csv.headers['content-disposition']).toMatch(/^attachment; filename="[^"]+\.csv"$/)
    expect(csv.headers['cache-control']).toBe('no-store')
    expect(csv.body).toContain('Jane')
    const viaApi = await download(`/events/${v.eventId}/attendees/export`, { 'x-service-api-key': v.apiKey })
    expect(csv.body).toBe(viaApi.body)
    expect(csv.headers['content-disposition']).toBe(viaApi.headers['content-disposition'])
    const json = await download(`/console/api/events/${v.eventId}/guests/export?format=json`, { cookie: `tapgate_console=${v.cookie}` })
    expect(json.headers['content-type']).toMatch(/^application\/json/)
    expect(JSON.parse(json.body)).toMatchObject({ eventId: v.eventId, eventName: 'Opening', attendees: expect.any(Array) })
    // No session, no download.
    expect((await download(`/console/api/events/${v.eventId}/guests/export`, {})).statusCode).toBe(401)
  })
})

describe('numbers', () => {
  test("the event's door numbers: the staff view's stats, for the event itself (no station needed)", async () => {
    gw = await createBackendGateway()
    const s = await seedDoor(gw)
    const tap = tapper()
    await tap(gw, s.door.token, UIDS[1]!)
    await tap(gw, s.side.token, UIDS[2]!)
    await tap(gw, s.side.token, UIDS[0]!) // not on the list
    gw.clock.now += 12 * 60_000
    const cookie = await signInConsole(gw, s.teamId)
    const numbers = await api('GET', `/console/api/events/${s.eventId}/numbers`, { cookie })
    expect(numbers.status).toBe(200)
    expect(numbers.body.stats).toMatchObject({ eventId: s.eventId, expected: 3, checkedIn: 2, percent: 66.7, inside: 2, refused: { notAllowed: 0, noReentry: 0, notOnList: 1, notPaid: 0 } })
    expect(numbers.body.stats.perType).toEqual([{ ticketType: 'GA', expected: 2, checkedIn: 1 }, { ticketType: 'VIP', expected: 1, checkedIn: 1 }])
    expect(numbers.body.stats.arrivals.length).toBeGreaterThanOrEqual(3)
    // Exactly what a door's staff view answers.
    expect(numbers.body).toEqual((await (await staffClient(gw, s.kiosk)).get('/kiosk/staff/stats')).body)
    expect((await api('GET', '/console/api/events', { cookie })).body.events).toEqual([
      { id: s.eventId, name: 'Opening night', guests: 3, checkedIn: 2, reentry: true, publicNames: 'first', admitUnpaid: false },
      { id: s.otherEventId, name: 'Afterparty', guests: 0, checkedIn: 0, reentry: true, publicNames: 'first', admitUnpaid: false },
    ])

    // An event without a guest list counts its chips' check-ins, as the door does; no station has to be on it.
    const after = await addDoor(gw, { teamId: s.teamId, eventId: s.otherEventId }, 'checkin', 'Afterparty door')
    await tap(gw, after.token, UIDS[0]!)
    expect((await api('GET', `/console/api/events/${s.otherEventId}/numbers`, { cookie })).body.stats).toMatchObject({ expected: null, checkedIn: 1, percent: null })
    expect((await api('GET', '/console/api/events', { cookie })).body.events[1]).toMatchObject({ guests: 0, checkedIn: 1 })
  })
})

describe("one team's session and another team's event", () => {
  test("team B's session gets 404 event_not_found on every new route for team A's event, and A's event stays as it was", async () => {
    gw = await createBackendGateway()
    const a = await venue('Team A')
    const b = await venue('Team B')
    expect((await upload(a.cookie, a.eventId, eventbrite)).status).toBe(200)
    const guestsBefore = await gw.store.attendees.countEvent(a.eventId)
    const eventBefore = await gw.store.guestbook.getEvent(a.eventId)

    const url = `/console/api/events/${a.eventId}`
    const tries: Array<[InjectOptions['method'], string, ConsoleRequest]> = [
      ['PATCH', url, { body: { reentry: false } }],
      // An empty body is 404 too: the event is looked up before the settings.
      ['PATCH', url, { body: {} }],
      ['POST', `${url}/guests`, { body: eventbrite, contentType: 'text/csv' }],
      ['POST', `${url}/guests`, { body: { not: 'a file' } }],
      ['GET', `${url}/guests`, {}],
      ['GET', `${url}/guests?q=jane&limit=50&offset=0`, {}],
      ['GET', `${url}/guests/export?format=csv`, {}],
      ['GET', `${url}/guests/export?format=json`, {}],
      ['GET', `${url}/numbers`, {}],
    ]
    for (const [method, path, opts] of tries) {
      const res = await api(method, path, { ...opts, cookie: b.cookie })
      expect(res, `${method} ${path}`).toMatchObject({ status: 404, body: { success: false, error: 'event_not_found' } })
    }
    // An event nobody has: the same 404.
    expect((await api('GET', '/console/api/events/999999/numbers', { cookie: b.cookie })).status).toBe(404)
    expect((await api('GET', '/console/api/events', { cookie: b.cookie })).body.events.map((e: { id: number }) => e.id)).toEqual([b.eventId])

    expect(await gw.store.attendees.countEvent(a.eventId)).toBe(guestsBefore)
    expect(await gw.store.guestbook.getEvent(a.eventId)).toEqual(eventBefore)
    expect(await gw.store.attendees.countEvent(b.eventId)).toBe(0)
  })
})
