import { afterEach, describe, expect, test } from 'vitest'
import { type BackendGateway, call, createBackendGateway, GUESTBOOK, metadata, seedTeam, tapChip } from '../helpers/gateway.js'

let gw: BackendGateway
afterEach(async () => gw?.close())

const CHAIN = 31337
const UID_A = '04AABBCCDDEE01'
const UID_B = '04AABBCCDDEE02'
const UID_FOREIGN = '04AABBCCDDEEF1'
const B_GUESTBOOK = '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0'

/** Guestbook event metadata: media_gallery omitted, as the spec allows. */
const eventMetadata = (overrides: Record<string, unknown> = {}) => {
  const { media_gallery: _mg, ...rest } = metadata({ name: 'Event', ...overrides })
  return 'media_gallery' in overrides ? { ...rest, media_gallery: overrides.media_gallery } : rest
}

type Setup = {
  headers: { 'x-service-api-key': string }
  foreignHeaders: { 'x-service-api-key': string }
  /** Team A's confirmed contract (imported with a lower-case address) and its pending one. */
  confirmed: number
  pending: number
  /** Team B's contract. */
  foreignContract: number
  /** Team A's event imported with tokenId 1 in the confirmed contract. */
  eventId: number
}

async function setup(): Promise<Setup> {
  gw = await createBackendGateway()
  const a = await seedTeam(gw, {
    name: 'A',
    chips: [{ uid: UID_A }, { uid: UID_B }],
    guestbookContracts: [
      { name: 'Guests', symbol: 'GST', chainId: CHAIN, address: GUESTBOOK.toLowerCase(), events: [{ name: 'Opening', tokenId: '1', metadata: eventMetadata() }] },
      { name: 'Later', symbol: 'LTR', chainId: CHAIN },
    ],
  })
  gw.clock.now += 1000
  const b = await seedTeam(gw, {
    name: 'B',
    chips: [{ uid: UID_FOREIGN }],
    guestbookContracts: [{ name: 'Theirs', symbol: 'THR', chainId: CHAIN, address: B_GUESTBOOK, events: [{ name: 'B event', tokenId: '1', metadata: eventMetadata() }] }],
  })
  const [confirmed, pending] = await gw.store.guestbook.listContracts(a.teamId)
  const [foreignContract] = await gw.store.guestbook.listContracts(b.teamId)
  const [event] = await gw.store.guestbook.listEvents(a.teamId)
  return {
    headers: { 'x-service-api-key': a.apiKey },
    foreignHeaders: { 'x-service-api-key': b.apiKey },
    confirmed: confirmed!.id,
    pending: pending!.id,
    foreignContract: foreignContract!.id,
    eventId: event!.id,
  }
}

const storedMetadata = async (eventId: number): Promise<unknown> => JSON.parse((await gw.store.guestbook.getEvent(eventId))!.metadata)

describe('GET /events/contracts', () => {
  test("lists the team's contracts only, checksummed, pending without an address", async () => {
    const s = await setup()
    const res = await call(gw, { url: '/events/contracts', headers: s.headers })
    expect(res.status).toBe(200)
    const createdAt = new Date(gw.clock.now - 1000).toISOString()
    expect(res.body).toEqual([
      { id: s.confirmed, name: 'Guests', symbol: 'GST', address: GUESTBOOK, chainId: CHAIN, createdAt, status: 'confirmed' },
      { id: s.pending, name: 'Later', symbol: 'LTR', address: null, chainId: CHAIN, createdAt, status: 'pending' },
    ])
    const b = await call(gw, { url: '/events/contracts', headers: s.foreignHeaders })
    expect(b.body.map((c: { id: number }) => c.id)).toEqual([s.foreignContract])
  })

  test('401 without a key', async () => {
    await setup()
    const res = await call(gw, { url: '/events/contracts' })
    expect(res.status).toBe(401)
    expect(res.body).toMatchObject({ success: false, error: 'api_key_missing' })
  })
})

describe('POST /events', () => {
  const create = (headers: Setup['headers'], body: Record<string, unknown>) => call(gw, { method: 'POST', url: '/events', headers, payload: body })

  test('contractId as a number or a digit string; metadata may omit media_gallery and carry a version', async () => {
    const s = await setup()
    const meta = eventMetadata({ service_metadata_version: '2', extra: { nested: [1, 2] } })
    const asNumber = await create(s.headers, { name: 'Two', tokenId: '2', contractId: s.confirmed, metadata: JSON.stringify(meta) })
    expect(asNumber.status).toBe(200)
    expect(asNumber.body).toEqual({ success: true, id: expect.any(Number) })
    expect(await storedMetadata(asNumber.body.id)).toEqual(meta)

    const withGallery = eventMetadata({ media_gallery: [{ media: 'https://example.com/v.mp4', type: 'video/mp4' }], service_metadata_version: 3 })
    const asString = await create(s.headers, { name: 'Three', tokenId: '3', contractId: String(s.pending), metadata: JSON.stringify(withGallery) })
    expect(asString.status).toBe(200)
    expect(asString.body.id).not.toBe(asNumber.body.id)
    expect(await storedMetadata(asString.body.id)).toEqual(withGallery)

    const list = await call(gw, { url: '/events', headers: s.headers })
    expect(list.body.map((e: { name: string }) => e.name)).toEqual(['Opening', 'Two', 'Three'])
  })

  test('invalid metadata is 400 naming the fields', async () => {
    const s = await setup()
    const { name: _name, ...noName } = eventMetadata()
    const res = await create(s.headers, { name: 'X', tokenId: '2', contractId: s.confirmed, metadata: JSON.stringify(noName) })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ success: false, error: 'validation_failed', errors: { 'metadata.name': 'Required' } })

    const badGallery = await create(s.headers, {
      name: 'X',
      tokenId: '2',
      contractId: s.confirmed,
      metadata: JSON.stringify(eventMetadata({ media_gallery: [{ media: 'https://example.com/x.png' }] })),
    })
    expect(badGallery.status).toBe(400)
    expect(Object.keys(badGallery.body.errors)).toEqual(['metadata.media_gallery.0.type'])

    const badVersion = await create(s.headers, {
      name: 'X',
      tokenId: '2',
      contractId: s.confirmed,
      metadata: JSON.stringify(eventMetadata({ service_metadata_version: { v: 1 } })),
    })
    expect(badVersion.status).toBe(400)
    expect(Object.keys(badVersion.body.errors)).toEqual(['metadata.service_metadata_version'])

    const notJson = await create(s.headers, { name: 'X', tokenId: '2', contractId: s.confirmed, metadata: 'nope' })
    expect(notJson.status).toBe(400)
    expect(notJson.body.errors.metadata).toMatch(/^Invalid JSON/)

    expect(await gw.store.guestbook.listEvents((await gw.store.guestbook.getContract(s.confirmed))!.teamId)).toHaveLength(1)
  })

  test('bad body fields are 400 validation_failed', async () => {
    const s = await setup()
    const meta = JSON.stringify(eventMetadata())
    const cases: [Record<string, unknown>, string][] = [
      [{ tokenId: '2', contractId: s.confirmed, metadata: meta }, 'name'],
      [{ name: 'X', tokenId: 'abc', contractId: s.confirmed, metadata: meta }, 'tokenId'],
      [{ name: 'X', tokenId: '2', contractId: 'abc', metadata: meta }, 'contractId'],
      [{ name: 'X', tokenId: '2', contractId: 0, metadata: meta }, 'contractId'],
      [{ name: 'X', tokenId: '2', contractId: s.confirmed }, 'metadata'],
    ]
    for (const [body, field] of cases) {
      const res = await create(s.headers, body)
      expect(res.status, field).toBe(400)
      expect(res.body.error).toBe('validation_failed')
      expect(Object.keys(res.body.errors)).toEqual([field])
    }
  })

  test("unknown or another team's contractId is 404 contract_not_found", async () => {
    const s = await setup()
    const meta = JSON.stringify(eventMetadata())
    for (const contractId of [9999, s.foreignContract]) {
      const res = await create(s.headers, { name: 'X', tokenId: '2', contractId, metadata: meta })
      expect(res.status).toBe(404)
      expect(res.body).toMatchObject({ success: false, error: 'contract_not_found' })
    }
  })

  test('tokenId is canonical ("007" is 400, as the document says); 7 and "7" are one token: a duplicate is 409 event_exists', async () => {
    const s = await setup()
    const meta = JSON.stringify(eventMetadata())
    const padded = await create(s.headers, { name: 'Seven', tokenId: '007', contractId: s.confirmed, metadata: meta })
    expect(padded).toMatchObject({ status: 400, body: { error: 'validation_failed', errors: { tokenId: expect.any(String) } } })
    const first = await create(s.headers, { name: 'Seven', tokenId: 7, contractId: s.confirmed, metadata: meta })
    expect(first.status).toBe(200)
    const list = await call(gw, { url: `/events?contractId=${s.confirmed}`, headers: s.headers })
    expect(list.body.find((e: { id: number }) => e.id === first.body.id).contract.tokenId).toBe('7')

    for (const tokenId of ['7', 7]) {
      const dup = await create(s.headers, { name: 'Again', tokenId, contractId: s.confirmed, metadata: meta })
      expect(dup.status).toBe(409)
      expect(dup.body).toMatchObject({ success: false, error: 'event_exists' })
    }
    // The same tokenId in another contract is a different event.
    const other = await create(s.headers, { name: 'Seven too', tokenId: '7', contractId: s.pending, metadata: meta })
    expect(other.status).toBe(200)
  })
})

describe('GET /events', () => {
  test("lists the team's events, filtered by contractId", async () => {
    const s = await setup()
    const meta = JSON.stringify(eventMetadata())
    const made = await call(gw, { method: 'POST', url: '/events', headers: s.headers, payload: { name: 'Pending one', tokenId: '5', contractId: s.pending, metadata: meta } })
    const createdAt = new Date(gw.clock.now).toISOString()
    const opening = {
      id: s.eventId,
      name: 'Opening',
      contract: { id: s.confirmed, chainId: CHAIN, tokenId: '1', address: GUESTBOOK, contractAddress: GUESTBOOK },
      createdAt: new Date(gw.clock.now - 1000).toISOString(),
    }
    const pendingOne = {
      id: made.body.id,
      name: 'Pending one',
      contract: { id: s.pending, chainId: CHAIN, tokenId: '5', address: null, contractAddress: null },
      createdAt,
    }

    const all = await call(gw, { url: '/events', headers: s.headers })
    expect(all.status).toBe(200)
    expect(all.body).toEqual([opening, pendingOne])

    const confirmedOnly = await call(gw, { url: `/events?contractId=${s.confirmed}`, headers: s.headers })
    expect(confirmedOnly.body).toEqual([opening])
    const pendingOnly = await call(gw, { url: `/events?contractId=${s.pending}`, headers: s.headers })
    expect(pendingOnly.body).toEqual([pendingOne])
  })

  test('an unknown or foreign contractId is 404, a non-number 400', async () => {
    const s = await setup()
    for (const id of [9999, s.foreignContract]) {
      const res = await call(gw, { url: `/events?contractId=${id}`, headers: s.headers })
      expect(res.status).toBe(404)
      expect(res.body).toMatchObject({ success: false, error: 'contract_not_found' })
    }
    const bad = await call(gw, { url: '/events?contractId=abc', headers: s.headers })
    expect(bad.status).toBe(400)
    expect(bad.body).toMatchObject({ success: false, error: 'validation_failed' })
    expect(Object.keys(bad.body.errors)).toEqual(['contractId'])
  })
})

describe('PATCH /events/metadata', () => {
  const patch = (headers: Setup['headers'], body: Record<string, unknown>) =>
    call(gw, { method: 'PATCH', url: '/events/metadata', headers, payload: body })

  test('by eventId (number or string) and by tokenId + contractAddress + chainId', async () => {
    const s = await setup()
    const first = eventMetadata({ name: 'By id', service_metadata_version: 2 })
    const byId = await patch(s.headers, { eventId: s.eventId, metadata: JSON.stringify(first) })
    expect(byId.status).toBe(200)
    expect(byId.body).toEqual({ success: true })
    expect(await storedMetadata(s.eventId)).toEqual(first)

    const second = eventMetadata({ name: 'By token', kept: { a: 1 } })
    const byToken = await patch(s.headers, {
      tokenId: '1',
      contractAddress: GUESTBOOK.toLowerCase(),
      chainId: String(CHAIN),
      metadata: JSON.stringify(second),
    })
    expect(byToken.status).toBe(200)
    expect(await storedMetadata(s.eventId)).toEqual(second)

    const third = eventMetadata({ name: 'By string id' })
    expect((await patch(s.headers, { eventId: String(s.eventId), metadata: JSON.stringify(third) })).status).toBe(200)
    expect(await storedMetadata(s.eventId)).toEqual(third)
  })

  test('neither eventId nor the full token key is 400 with errors.eventId', async () => {
    const s = await setup()
    const meta = JSON.stringify(eventMetadata({ name: 'nope' }))
    for (const body of [{ metadata: meta }, { tokenId: '1', contractAddress: GUESTBOOK, metadata: meta }]) {
      const res = await patch(s.headers, body)
      expect(res.status).toBe(400)
      expect(res.body).toMatchObject({ success: false, error: 'validation_failed' })
      expect(res.body.errors.eventId).toBeTruthy()
    }
    expect(await storedMetadata(s.eventId)).toEqual(eventMetadata())
  })

  test("an unknown or another team's event is 404 event_not_found", async () => {
    const s = await setup()
    const meta = JSON.stringify(eventMetadata({ name: 'nope' }))
    const foreignEvent = (await gw.store.guestbook.listEvents((await gw.store.guestbook.getContract(s.foreignContract))!.teamId))[0]!
    const bodies = [
      { eventId: 9999, metadata: meta },
      { eventId: foreignEvent.id, metadata: meta },
      { tokenId: '2', contractAddress: GUESTBOOK, chainId: CHAIN, metadata: meta },
      { tokenId: '1', contractAddress: GUESTBOOK, chainId: 1, metadata: meta },
      { tokenId: '1', contractAddress: B_GUESTBOOK, chainId: CHAIN, metadata: meta },
    ]
    for (const body of bodies) {
      const res = await patch(s.headers, body)
      expect(res.status).toBe(404)
      expect(res.body).toMatchObject({ success: false, error: 'event_not_found' })
    }
    expect(await storedMetadata(foreignEvent.id)).toEqual(eventMetadata())
  })

  test('invalid metadata is 400 and the stored metadata is unchanged', async () => {
    const s = await setup()
    const { image: _image, ...noImage } = eventMetadata()
    const missing = await patch(s.headers, { eventId: s.eventId, metadata: JSON.stringify(noImage) })
    expect(missing.status).toBe(400)
    expect(missing.body).toMatchObject({ error: 'validation_failed', errors: { 'metadata.image': 'Required' } })

    const notObject = await patch(s.headers, { eventId: s.eventId, metadata: '"just a string"' })
    expect(notObject.status).toBe(400)
    expect(notObject.body.errors.metadata).toBeTruthy()

    // Validation comes first: invalid metadata for an unknown event is still 400.
    const unknown = await patch(s.headers, { eventId: 9999, metadata: '{' })
    expect(unknown.status).toBe(400)
    expect(unknown.body.errors.metadata).toMatch(/^Invalid JSON/)

    expect(await storedMetadata(s.eventId)).toEqual(eventMetadata())
  })
})

describe('POST /events/assign/legacy', () => {
  const assign = (headers: Setup['headers'], body: Record<string, unknown>) =>
    call(gw, { method: 'POST', url: '/events/assign/legacy', headers, payload: body })
  const guestbookEventsOf = async (uid: string) => (await call(gw, { url: `/refs/${await tapChip(gw, uid)}` })).body.guestbookEvents

  test('assigned chips get a GUESTBOOK_EVENT OTP on their next tap', async () => {
    const s = await setup()
    expect(await guestbookEventsOf(UID_A)).toEqual([])

    const res = await assign(s.headers, { tagUIDs: ['04:aa:bb:cc:dd:ee:01', UID_B.toLowerCase()], guestbookEventId: s.eventId })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true })

    for (const uid of [UID_A, UID_B]) {
      const events = await guestbookEventsOf(uid)
      expect(events).toEqual([
        { id: s.eventId, name: 'Opening', contractAddress: GUESTBOOK, chainId: CHAIN, tokenId: '1', otp: expect.stringMatching(/^[\w-]{21}$/) },
      ])
      const otp = await call(gw, { url: `/otps/${events[0].otp}` })
      expect(otp.status).toBe(200)
      expect(otp.body).toMatchObject({
        type: 'GUESTBOOK_EVENT',
        isExpired: false,
        guestbookEvent: { id: s.eventId, name: 'Opening', contractAddress: GUESTBOOK, chainId: CHAIN, tokenId: '1' },
      })
    }
  })

  test('re-assigning is idempotent; guestbookEventId may be a digit string', async () => {
    const s = await setup()
    for (const guestbookEventId of [s.eventId, String(s.eventId)]) {
      const res = await assign(s.headers, { tagUIDs: [UID_A, UID_A], guestbookEventId })
      expect(res.status).toBe(200)
    }
    expect(await guestbookEventsOf(UID_A)).toHaveLength(1)
  })

  test('one unknown or foreign UID fails the whole request and assigns nothing', async () => {
    const s = await setup()
    const unknown = await assign(s.headers, { tagUIDs: [UID_A, '04AABBCCDDEE99', UID_B], guestbookEventId: s.eventId })
    expect(unknown.status).toBe(404)
    expect(unknown.body).toMatchObject({ success: false, error: 'chip_not_found' })
    expect(unknown.body.message).toContain('04AABBCCDDEE99')
    expect(unknown.body.message).not.toContain(UID_A)

    const foreign = await assign(s.headers, { tagUIDs: [UID_A, UID_FOREIGN.toLowerCase()], guestbookEventId: s.eventId })
    expect(foreign.status).toBe(404)
    expect(foreign.body.error).toBe('chip_not_found')
    expect(foreign.body.message).toContain(UID_FOREIGN)

    expect(await guestbookEventsOf(UID_A)).toEqual([])
    expect(await guestbookEventsOf(UID_B)).toEqual([])
  })

  test("an unknown or another team's event is 404 event_not_found", async () => {
    const s = await setup()
    const foreignEvent = (await gw.store.guestbook.listEvents((await gw.store.guestbook.getContract(s.foreignContract))!.teamId))[0]!
    for (const guestbookEventId of [9999, foreignEvent.id]) {
      const res = await assign(s.headers, { tagUIDs: [UID_A], guestbookEventId })
      expect(res.status).toBe(404)
      expect(res.body).toMatchObject({ success: false, error: 'event_not_found' })
    }
    expect(await guestbookEventsOf(UID_A)).toEqual([])
  })

  test('empty or malformed tagUIDs are 400', async () => {
    const s = await setup()
    const empty = await assign(s.headers, { tagUIDs: [], guestbookEventId: s.eventId })
    expect(empty.status).toBe(400)
    expect(empty.body).toMatchObject({ success: false, error: 'validation_failed' })
    expect(Object.keys(empty.body.errors)).toEqual(['tagUIDs'])

    const bad = await assign(s.headers, { tagUIDs: ['XYZ'], guestbookEventId: s.eventId })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toBe('validation_failed')
    expect(bad.body.errors['tagUIDs.0']).toMatch(/14 hex digits/)

    const secondBad = await assign(s.headers, { tagUIDs: [UID_A, '04AABBCCDDEE0'], guestbookEventId: s.eventId })
    expect(secondBad.status).toBe(400)
    expect(Object.keys(secondBad.body.errors)).toEqual(['tagUIDs.1'])

    const noEvent = await assign(s.headers, { tagUIDs: [UID_A] })
    expect(noEvent.status).toBe(400)
    expect(Object.keys(noEvent.body.errors)).toEqual(['guestbookEventId'])

    expect(await guestbookEventsOf(UID_A)).toEqual([])
  })

  test('401 without a key', async () => {
    const s = await setup()
    const res = await call(gw, { method: 'POST', url: '/events/assign/legacy', payload: { tagUIDs: [UID_A], guestbookEventId: s.eventId } })
    expect(res.status).toBe(401)
    expect(res.body.error).toBe('api_key_missing')
    expect(await guestbookEventsOf(UID_A)).toEqual([])
  })
})
