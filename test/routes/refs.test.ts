import { afterEach, describe, expect, test } from 'vitest'
import { revokeApiKey } from '../../src/auth/apiKeys.js'
import { type BackendGateway, call, CONTRACT, createBackendGateway, GUESTBOOK, metadata, queryRows, seedTeam, tapChip } from '../helpers/gateway.js'

let gw: BackendGateway
afterEach(async () => gw?.close())

const PUBLIC_ID = /^[A-Za-z0-9_-]{21}$/

const UID = {
  token: '04A10000000001',
  proof: '04A10000000002',
  guestbook: '04A10000000003',
  bare: '04A10000000004',
  all: '04A10000000005',
  expiredOnly: '04A10000000006',
}

const TOKEN_METADATA = metadata({ name: 'Seven', external_url: 'https://example.com/7', extra_field: { kept: true } })

/** Team A owns one chip per situation the ref response distinguishes; team B owns one bare chip. */
async function seed(g: BackendGateway) {
  const a = await seedTeam(g, {
    name: 'A',
    chips: Object.values(UID).map((uid) => ({ uid })),
    tokens: [
      { chainId: 31337, contractAddress: CONTRACT, tokenId: '7', chips: [UID.token, UID.all], metadata: TOKEN_METADATA, twoTapClaim: true },
    ],
    proofEvents: [
      { proofEventId: 501, name: 'Active one', status: 'active', chips: [UID.proof, UID.all] },
      { proofEventId: 502, status: 'future', chips: [UID.proof] },
      { proofEventId: 503, status: 'active', chips: [UID.proof] },
      { proofEventId: 504, status: 'expired', chips: [UID.proof, UID.expiredOnly] },
      { proofEventId: 505, status: 'pending-approval', chips: [UID.proof] },
    ],
    guestbookContracts: [
      {
        name: 'Guestbook',
        symbol: 'GB',
        chainId: 31337,
        address: GUESTBOOK,
        events: [
          { name: 'Day 1', tokenId: '1', metadata: metadata(), chips: [UID.guestbook, UID.all] },
          { name: 'Day 2', tokenId: '2', metadata: metadata(), chips: [UID.guestbook] },
        ],
      },
    ],
  })
  const b = await seedTeam(g, { name: 'B', chips: [{ uid: '04B10000000001' }] })
  return { a, b }
}

/** Paths of every key named `otp`, however deep. */
function otpPaths(value: unknown, at = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => otpPaths(v, `${at}[${i}]`))
  if (typeof value !== 'object' || value === null) return []
  return Object.entries(value).flatMap(([k, v]) => [...(k === 'otp' ? [`${at}.${k}`] : []), ...otpPaths(v, `${at}.${k}`)])
}

const getRef = (ref: string, opts: { query?: string; key?: string } = {}) =>
  call(gw, {
    url: `/refs/${ref}${opts.query ? `?${opts.query}` : ''}`,
    headers: opts.key ? { 'x-service-api-key': opts.key } : {},
  })

const getOtp = (code: string) => call(gw, { url: `/otps/${code}` })

describe('GET /refs/:id — first query wins', () => {
  test('the first query is valid with OTPs; the second is not and carries no code anywhere', async () => {
    gw = await createBackendGateway()
    await seed(gw)
    const ref = await tapChip(gw, UID.all)

    const first = await getRef(ref)
    expect(first.status).toBe(200)
    expect(first.body.isValidRef).toBe(true)
    expect(first.body.uid).toBe(UID.all)
    expect(otpPaths(first.body).sort()).toEqual(['.guestbookEvents[0].otp', '.linkedToken.otp', '.proofEvents[0].otp'])

    const second = await getRef(ref)
    expect(second.status).toBe(200)
    expect(second.body.isValidRef).toBe(false)
    expect(otpPaths(second.body)).toEqual([])
    // Same chip information, minus the codes.
    expect(second.body).toEqual({
      uid: UID.all,
      isValidRef: false,
      linkedToken: { contractAddress: CONTRACT, chainId: 31337, tokenId: '7' },
      proofEvents: [{ id: first.body.proofEvents[0].id, proofEventId: 501, status: 'active' }],
      guestbookEvents: [
        { id: first.body.guestbookEvents[0].id, name: 'Day 1', contractAddress: GUESTBOOK, chainId: 31337, tokenId: '1' },
      ],
    })

    const third = await getRef(ref)
    expect(third.body.isValidRef).toBe(false)
    expect(otpPaths(third.body)).toEqual([])
    expect((await gw.store.refs.get(ref))?.consumedAt).toBe(gw.clock.now)
  })

  test('each tap is a separate ref, valid once', async () => {
    gw = await createBackendGateway()
    await seed(gw)
    const r1 = await tapChip(gw, UID.token)
    const r2 = await tapChip(gw, UID.token)
    expect(r1).not.toBe(r2)
    expect((await getRef(r1)).body.isValidRef).toBe(true)
    expect((await getRef(r2)).body.isValidRef).toBe(true)
    expect((await getRef(r1)).body.isValidRef).toBe(false)
    expect((await getRef(r2)).body.isValidRef).toBe(false)
  })
})

describe('GET /refs/:id — OTP kinds', () => {
  test('a linked token gets linkedToken.otp, a PHYGITAL_CLAIM for that token', async () => {
    gw = await createBackendGateway()
    await seed(gw)
    const res = await getRef(await tapChip(gw, UID.token))
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      uid: UID.token,
      isValidRef: true,
      linkedToken: { contractAddress: CONTRACT, chainId: 31337, tokenId: '7', otp: expect.stringMatching(PUBLIC_ID) },
      proofEvents: [],
      guestbookEvents: [],
    })
    expect(res.body).not.toHaveProperty('otp')

    const otp = await getOtp(res.body.linkedToken.otp)
    expect(otp.status).toBe(200)
    expect(otp.body.type).toBe('PHYGITAL_CLAIM')
    expect(otp.body.linkedToken).toEqual({ contractAddress: CONTRACT, chainId: 31337, tokenId: '7' })
    expect(otp.body).not.toHaveProperty('proofEvent')
    expect(otp.body).not.toHaveProperty('guestbookEvent')
  })

  test('every ACTIVE proof event gets its own PROOF_EVENT otp; the others are listed without one', async () => {
    gw = await createBackendGateway()
    await seed(gw)
    const res = await getRef(await tapChip(gw, UID.proof))
    expect(res.status).toBe(200)
    expect(res.body.isValidRef).toBe(true)
    expect(res.body).not.toHaveProperty('otp')
    expect(res.body).not.toHaveProperty('linkedToken')
    const events: { id: number; proofEventId: number; status: string; otp?: string }[] = res.body.proofEvents
    expect(events.map((e) => [e.proofEventId, e.status, 'otp' in e])).toEqual([
      [501, 'active', true],
      [502, 'future', false],
      [503, 'active', true],
      [504, 'expired', false],
      [505, 'pending-approval', false],
    ])
    const active = events.filter((e) => e.status === 'active')
    expect(new Set(active.map((e) => e.otp)).size).toBe(2)
    for (const event of active) {
      expect(event.otp).toMatch(PUBLIC_ID)
      const otp = await getOtp(event.otp!)
      expect(otp.status).toBe(200)
      expect(otp.body.type).toBe('PROOF_EVENT')
      expect(otp.body.proofEvent).toEqual({ id: event.id, proofEventId: event.proofEventId, status: 'active' })
      expect(otp.body).not.toHaveProperty('linkedToken')
    }
  })

  test('every assigned guestbook event gets a GUESTBOOK_EVENT otp in guestbookEvents', async () => {
    gw = await createBackendGateway()
    await seed(gw)
    const res = await getRef(await tapChip(gw, UID.guestbook))
    expect(res.status).toBe(200)
    expect(res.body.isValidRef).toBe(true)
    expect(res.body).not.toHaveProperty('otp')
    expect(res.body.proofEvents).toEqual([])
    const events: { id: number; name: string; otp: string }[] = res.body.guestbookEvents
    expect(events).toEqual([
      { id: expect.any(Number), name: 'Day 1', contractAddress: GUESTBOOK, chainId: 31337, tokenId: '1', otp: expect.stringMatching(PUBLIC_ID) },
      { id: expect.any(Number), name: 'Day 2', contractAddress: GUESTBOOK, chainId: 31337, tokenId: '2', otp: expect.stringMatching(PUBLIC_ID) },
    ])
    expect(events[0]!.otp).not.toBe(events[1]!.otp)
    for (const event of events) {
      const otp = await getOtp(event.otp)
      expect(otp.body.type).toBe('GUESTBOOK_EVENT')
      expect(otp.body.guestbookEvent).toMatchObject({ id: event.id, name: event.name, contractAddress: GUESTBOOK })
    }
  })

  test('a chip with nothing linked gets a top-level otp, bound to no token or event', async () => {
    gw = await createBackendGateway()
    await seed(gw)
    const ref = await tapChip(gw, UID.bare)
    const res = await getRef(ref)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ uid: UID.bare, isValidRef: true, otp: expect.stringMatching(PUBLIC_ID), proofEvents: [], guestbookEvents: [] })
    const otp = await getOtp(res.body.otp)
    expect(otp.status).toBe(200)
    expect(otp.body.type).toBe('PHYGITAL_CLAIM')
    expect(otp.body).not.toHaveProperty('linkedToken')
    expect(otp.body).not.toHaveProperty('proofEvent')
    expect(otp.body).not.toHaveProperty('guestbookEvent')

    // …and only on the first query.
    const again = await getRef(ref)
    expect(again.body).toEqual({ uid: UID.bare, isValidRef: false, proofEvents: [], guestbookEvents: [] })
  })

  test('no top-level otp when a token, a proof event or a guestbook event exists', async () => {
    gw = await createBackendGateway()
    await seed(gw)
    for (const uid of [UID.token, UID.proof, UID.guestbook, UID.all, UID.expiredOnly]) {
      const res = await getRef(await tapChip(gw, uid))
      expect(res.body.isValidRef, uid).toBe(true)
      expect(res.body, uid).not.toHaveProperty('otp')
    }
    // A chip whose only proof event is not active: listed, valid, but nothing to authorize.
    const expired = await getRef(await tapChip(gw, UID.expiredOnly))
    expect(expired.body.proofEvents).toEqual([{ id: expect.any(Number), proofEventId: 504, status: 'expired' }])
    expect(otpPaths(expired.body)).toEqual([])
  })

  test('ref ids and OTP codes are 21 URL-safe characters, all distinct', async () => {
    gw = await createBackendGateway()
    await seed(gw)
    const refs: string[] = []
    for (let i = 0; i < 20; i++) refs.push(await tapChip(gw, UID.all))
    const codes: string[] = []
    for (const ref of refs) {
      expect(ref).toMatch(PUBLIC_ID)
      const res = await getRef(ref)
      codes.push(res.body.linkedToken.otp, res.body.proofEvents[0].otp, res.body.guestbookEvents[0].otp)
    }
    for (const code of codes) expect(code).toMatch(PUBLIC_ID)
    expect(new Set([...refs, ...codes]).size).toBe(refs.length + codes.length)
  })
})

describe('GET /refs/:id — query options', () => {
  test('includeMetadata=true returns the stored metadata, unknown fields included', async () => {
    gw = await createBackendGateway()
    await seed(gw)
    const res = await getRef(await tapChip(gw, UID.token), { query: 'includeMetadata=true' })
    expect(res.status).toBe(200)
    expect(res.body.isValidRef).toBe(true)
    expect(res.body.linkedToken.metadata).toEqual(TOKEN_METADATA)
    expect(res.body.linkedToken.metadata.extra_field).toEqual({ kept: true })
  })

  test('includeMetadata=false or absent returns no metadata', async () => {
    gw = await createBackendGateway()
    await seed(gw)
    for (const query of ['includeMetadata=false', 'includeMetadata=0', undefined]) {
      const res = await getRef(await tapChip(gw, UID.token), { query })
      expect(res.status, String(query)).toBe(200)
      expect(res.body.isValidRef).toBe(true)
      expect(res.body.linkedToken, String(query)).not.toHaveProperty('metadata')
    }
  })

  test('includeOwner=true is 503 chain_unavailable and leaves the ref unconsumed', async () => {
    gw = await createBackendGateway()
    await seed(gw)
    const ref = await tapChip(gw, UID.token)
    const res = await getRef(ref, { query: 'includeOwner=true' })
    expect(res.status).toBe(503)
    expect(res.body).toMatchObject({ success: false, error: 'chain_unavailable' })
    expect((await gw.store.refs.get(ref))?.consumedAt).toBeNull()
    expect(await queryRows(gw.store, 'SELECT COUNT(*) AS n FROM otps')).toEqual([{ n: 0 }])

    const retry = await getRef(ref)
    expect(retry.status).toBe(200)
    expect(retry.body.isValidRef).toBe(true)
    expect(retry.body.linkedToken.otp).toMatch(PUBLIC_ID)
    expect(retry.body.linkedToken).not.toHaveProperty('ownerAddress')
  })

  test('includeMetadata=maybe is 400 validation_failed naming the parameter, ref untouched', async () => {
    gw = await createBackendGateway()
    await seed(gw)
    const ref = await tapChip(gw, UID.token)
    const res = await getRef(ref, { query: 'includeMetadata=maybe' })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ success: false, error: 'validation_failed' })
    expect(Object.keys(res.body.errors)).toEqual(['includeMetadata'])
    expect((await gw.store.refs.get(ref))?.consumedAt).toBeNull()
    expect((await getRef(ref)).body.isValidRef).toBe(true)
  })
})

describe('GET /refs/:id — Links Module refs', () => {
  test('without a key the ref reads as not valid and stays unconsumed', async () => {
    gw = await createBackendGateway()
    const { a } = await seed(gw)
    const ref = await tapChip(gw, UID.token, { linksModule: true })
    for (let i = 0; i < 2; i++) {
      const res = await getRef(ref)
      expect(res.status).toBe(200)
      expect(res.body.isValidRef).toBe(false)
      expect(res.body.linkedToken).toEqual({ contractAddress: CONTRACT, chainId: 31337, tokenId: '7' })
      expect(otpPaths(res.body)).toEqual([])
    }
    expect((await gw.store.refs.get(ref))?.consumedAt).toBeNull()
    expect((await getRef(ref, { key: a.apiKey })).body.isValidRef).toBe(true)
  })

  test("another team's key reads it as not valid and leaves it unconsumed", async () => {
    gw = await createBackendGateway()
    const { a, b } = await seed(gw)
    const ref = await tapChip(gw, UID.token, { linksModule: true })
    const res = await getRef(ref, { key: b.apiKey })
    expect(res.status).toBe(200)
    expect(res.body.isValidRef).toBe(false)
    expect(otpPaths(res.body)).toEqual([])
    expect((await gw.store.refs.get(ref))?.consumedAt).toBeNull()

    const owner = await getRef(ref, { key: a.apiKey })
    expect(owner.body.isValidRef).toBe(true)
    expect(owner.body.linkedToken.otp).toMatch(PUBLIC_ID)
  })

  test("the owning team's key validates it, once", async () => {
    gw = await createBackendGateway()
    const { a } = await seed(gw)
    const ref = await tapChip(gw, UID.all, { linksModule: true })
    const first = await getRef(ref, { key: a.apiKey })
    expect(first.status).toBe(200)
    expect(first.body.isValidRef).toBe(true)
    expect(otpPaths(first.body)).toHaveLength(3)
    const second = await getRef(ref, { key: a.apiKey })
    expect(second.body.isValidRef).toBe(false)
    expect(otpPaths(second.body)).toEqual([])
  })

  test('a plain (chip redirect) ref is valid with or without a key', async () => {
    gw = await createBackendGateway()
    const { b } = await seed(gw)
    // A key is optional on /refs; any valid key is accepted for a non-Links ref.
    const res = await getRef(await tapChip(gw, UID.token), { key: b.apiKey })
    expect(res.status).toBe(200)
    expect(res.body.isValidRef).toBe(true)
  })
})

describe('GET /refs/:id — errors', () => {
  test('an unknown ref is 404 ref_not_found', async () => {
    gw = await createBackendGateway()
    await seed(gw)
    const res = await getRef('V1StGXR8_Z5jdHi6B-myT')
    expect(res.status).toBe(404)
    expect(res.body).toMatchInlineSnapshot(`
      {
        "error": "ref_not_found",
        "message": "No ref with this id",
        "success": false,
      }
    `)
  })

  test('an unknown API key is 401 invalid_api_key and the ref stays unconsumed', async () => {
    gw = await createBackendGateway()
    await seed(gw)
    const ref = await tapChip(gw, UID.token)
    const res = await getRef(ref, { key: 'tg_not-a-real-key-at-all-000000' })
    expect(res.status).toBe(401)
    expect(res.body).toMatchObject({ success: false, error: 'invalid_api_key' })
    expect((await gw.store.refs.get(ref))?.consumedAt).toBeNull()
    expect((await getRef(ref)).body.isValidRef).toBe(true)
  })

  test('a revoked API key is 401 invalid_api_key', async () => {
    gw = await createBackendGateway()
    const { a } = await seed(gw)
    const ref = await tapChip(gw, UID.token, { linksModule: true })
    expect(await revokeApiKey(gw.store, { keyOrPrefix: a.apiKey, now: gw.clock.now })).toBe(1)
    const res = await getRef(ref, { key: a.apiKey })
    expect(res.status).toBe(401)
    expect(res.body).toMatchObject({ success: false, error: 'invalid_api_key' })
    expect((await gw.store.refs.get(ref))?.consumedAt).toBeNull()
  })
})

describe('OTP lifetime', () => {
  test('OTPs from a ref live otpTtlSeconds, 30 minutes by default', async () => {
    gw = await createBackendGateway()
    await seed(gw)
    const res = await getRef(await tapChip(gw, UID.all))
    const codes: string[] = [res.body.linkedToken.otp, res.body.proofEvents[0].otp, res.body.guestbookEvents[0].otp]
    for (const code of codes) expect(code).toMatch(PUBLIC_ID)
    for (const code of codes) {
      const otp = await getOtp(code)
      expect(otp.body.createdAt).toBe(new Date(gw.clock.now).toISOString())
      expect(Date.parse(otp.body.expiresAt) - Date.parse(otp.body.createdAt)).toBe(30 * 60 * 1000)
      expect(otp.body.isExpired).toBe(false)
    }
  })

  test('config otpTtlSeconds: 60 gives 60-second OTPs', async () => {
    gw = await createBackendGateway({ config: { otpTtlSeconds: 60 } })
    await seed(gw)
    const res = await getRef(await tapChip(gw, UID.bare))
    const otp = await getOtp(res.body.otp)
    expect(otp.status).toBe(200)
    expect(Date.parse(otp.body.expiresAt) - Date.parse(otp.body.createdAt)).toBe(60_000)
  })
})
