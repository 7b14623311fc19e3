import { afterEach, describe, expect, test } from 'vitest'
import { ALICE, type BackendGateway, BOB, call, CONTRACT, createBackendGateway, GUESTBOOK, metadata, queryRows, seedTeam, tapChip } from '../helpers/gateway.js'

let gw: BackendGateway
afterEach(async () => gw?.close())

const PUBLIC_ID = /^[A-Za-z0-9_-]{21}$/
const MINUTE = 60_000
const iso = (ms: number) => new Date(ms).toISOString()

const UID = {
  twoTap: '04C10000000001',
  direct: '04C10000000002',
  proof: '04C10000000003',
  guestbook: '04C10000000004',
  bare: '04C10000000005',
}

/**
 * Seeded at the gateway's initial clock; taps happen a minute later so event and OTP timestamps differ.
 * No chain keys: a 2-tap registration with an OTP (how these tests spend one) then moves nothing and
 * needs no read of the token's nonce (issue 24 §1); with a chain, test/tokens/tokenMoves.test.ts.
 */
async function setup() {
  gw = await createBackendGateway({ config: { chain: { embedded: false } } })
  const seededAt = gw.clock.now
  const a = await seedTeam(gw, {
    name: 'A',
    chips: Object.values(UID).map((uid) => ({ uid })),
    tokens: [
      { chainId: 31337, contractAddress: CONTRACT, tokenId: '7', chips: [UID.twoTap], metadata: metadata(), twoTapClaim: true },
      { chainId: 31337, contractAddress: CONTRACT, tokenId: '8', chips: [UID.direct], metadata: metadata(), twoTapClaim: false },
    ],
    proofEvents: [{ proofEventId: 601, name: 'Meetup', status: 'active', chips: [UID.proof] }],
    guestbookContracts: [
      {
        name: 'Guestbook',
        symbol: 'GB',
        chainId: 31337,
        address: GUESTBOOK,
        events: [{ name: 'Opening night', tokenId: '3', metadata: metadata(), chips: [UID.guestbook] }],
      },
    ],
  })
  const b = await seedTeam(gw, { name: 'B', chips: [{ uid: '04D10000000001' }] })
  gw.clock.now += MINUTE
  return { a, b, seededAt }
}

/** Taps a chip and returns the body of the ref's first (valid) query. */
async function firstQuery(uid: string) {
  const res = await call(gw, { url: `/refs/${await tapChip(gw, uid)}` })
  expect(res.status).toBe(200)
  expect(res.body.isValidRef).toBe(true)
  return res.body
}

const claimOtp = async () => (await firstQuery(UID.twoTap)).linkedToken.otp as string

const getOtp = (code: string) => call(gw, { url: `/otps/${code}` })

const pullable = (code: string | undefined, recipient: string = ALICE) =>
  call(gw, {
    method: 'POST',
    url: '/phygitals/claim-registration/pullable',
    headers: code === undefined ? {} : { 'x-service-code': code },
    payload: { recipient },
  })

const deleteOtp = (code: string, key?: string) =>
  call(gw, { method: 'DELETE', url: `/otps/${code}`, headers: key ? { 'x-service-api-key': key } : {} })

/** The stored row, read straight from SQLite. */
const stored = (code: string) => gw.store.otps.get(code)

describe('GET /otps/:id', () => {
  test('a PHYGITAL_CLAIM OTP for a linked token', async () => {
    await setup()
    const code = await claimOtp()
    const res = await getOtp(code)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      otp: code,
      isExpired: false,
      createdAt: iso(gw.clock.now),
      expiresAt: iso(gw.clock.now + 30 * MINUTE),
      type: 'PHYGITAL_CLAIM',
      linkedToken: { contractAddress: CONTRACT, chainId: 31337, tokenId: '7' },
    })
  })

  test('a PHYGITAL_CLAIM OTP of a chip with nothing linked has no target', async () => {
    await setup()
    const code = (await firstQuery(UID.bare)).otp as string
    expect(code).toMatch(PUBLIC_ID)
    const res = await getOtp(code)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      otp: code,
      isExpired: false,
      createdAt: iso(gw.clock.now),
      expiresAt: iso(gw.clock.now + 30 * MINUTE),
      type: 'PHYGITAL_CLAIM',
    })
  })

  test('a PROOF_EVENT OTP names its proof event', async () => {
    await setup()
    const ref = await firstQuery(UID.proof)
    const code = ref.proofEvents[0].otp as string
    const res = await getOtp(code)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      otp: code,
      isExpired: false,
      createdAt: iso(gw.clock.now),
      expiresAt: iso(gw.clock.now + 30 * MINUTE),
      type: 'PROOF_EVENT',
      proofEvent: { id: ref.proofEvents[0].id, proofEventId: 601, status: 'active' },
    })
  })

  test('a GUESTBOOK_EVENT OTP names its guestbook event, with the event’s own createdAt', async () => {
    const { seededAt } = await setup()
    const ref = await firstQuery(UID.guestbook)
    const code = ref.guestbookEvents[0].otp as string
    const res = await getOtp(code)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      otp: code,
      isExpired: false,
      createdAt: iso(gw.clock.now),
      expiresAt: iso(gw.clock.now + 30 * MINUTE),
      type: 'GUESTBOOK_EVENT',
      guestbookEvent: {
        id: ref.guestbookEvents[0].id,
        name: 'Opening night',
        contractAddress: GUESTBOOK,
        chainId: 31337,
        tokenId: '3',
        createdAt: iso(seededAt),
      },
    })
  })

  test('an unknown code is 404 otp_not_found', async () => {
    await setup()
    const res = await getOtp('V1StGXR8_Z5jdHi6B-myT')
    expect(res.status).toBe(404)
    expect(res.body).toMatchInlineSnapshot(`
      {
        "error": "otp_not_found",
        "message": "No OTP with this code",
        "success": false,
      }
    `)
  })

  test('isExpired turns true exactly at expiresAt', async () => {
    await setup()
    const code = await claimOtp()
    const expiresAt = Date.parse((await getOtp(code)).body.expiresAt)

    gw.clock.now = expiresAt - 1
    expect((await getOtp(code)).body.isExpired).toBe(false)
    gw.clock.now = expiresAt
    const res = await getOtp(code)
    expect(res.status).toBe(200)
    expect(res.body.isExpired).toBe(true)
    expect(res.body).not.toHaveProperty('usedAt')
  })

  test('a used OTP reads back as expired, with usedAt', async () => {
    await setup()
    const code = await claimOtp()
    gw.clock.now += 5_000
    const usedAt = gw.clock.now
    const spent = await pullable(code)
    expect(spent.status).toBe(200)

    gw.clock.now += 5_000
    const res = await getOtp(code)
    expect(res.status).toBe(200)
    expect(res.body.isExpired).toBe(true)
    expect(res.body.usedAt).toBe(iso(usedAt))
    // Still well inside its lifetime: expired because used.
    expect(Date.parse(res.body.expiresAt)).toBeGreaterThan(gw.clock.now)
  })
})

describe('DELETE /otps/:id', () => {
  test("the team's key deletes it; afterwards GET is 404 and the code no longer authorizes", async () => {
    const { a } = await setup()
    const code = await claimOtp()
    const res = await deleteOtp(code, a.apiKey)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true })

    const after = await getOtp(code)
    expect(after.status).toBe(404)
    expect(after.body).toMatchObject({ success: false, error: 'otp_not_found' })
    expect(await stored(code)).toBeUndefined()

    const use = await pullable(code)
    expect(use.status).toBe(401)
    expect(use.body).toMatchObject({ success: false, error: 'otp_invalid' })

    const again = await deleteOtp(code, a.apiKey)
    expect(again.status).toBe(404)
    expect(again.body).toMatchObject({ success: false, error: 'otp_not_found' })
  })

  test('without a key it is 401 api_key_missing and the OTP survives', async () => {
    await setup()
    const code = await claimOtp()
    const res = await deleteOtp(code)
    expect(res.status).toBe(401)
    expect(res.body).toMatchInlineSnapshot(`
      {
        "error": "api_key_missing",
        "message": "This endpoint needs an API key in the x-service-api-key header",
        "success": false,
      }
    `)
    expect((await getOtp(code)).status).toBe(200)
  })

  test('with an unknown key it is 401 invalid_api_key', async () => {
    await setup()
    const code = await claimOtp()
    const res = await deleteOtp(code, 'tg_not-a-real-key-at-all-000000')
    expect(res.status).toBe(401)
    expect(res.body).toMatchObject({ success: false, error: 'invalid_api_key' })
    expect((await getOtp(code)).status).toBe(200)
  })

  test("another team's key gets 404 and the OTP stays readable and usable", async () => {
    const { b } = await setup()
    const code = await claimOtp()
    const res = await deleteOtp(code, b.apiKey)
    expect(res.status).toBe(404)
    expect(res.body).toMatchObject({ success: false, error: 'otp_not_found' })

    const read = await getOtp(code)
    expect(read.status).toBe(200)
    expect(read.body.isExpired).toBe(false)
    expect((await pullable(code)).status).toBe(200)
  })

  test('an unknown code with a valid key is 404 otp_not_found', async () => {
    const { a } = await setup()
    const res = await deleteOtp('V1StGXR8_Z5jdHi6B-myT', a.apiKey)
    expect(res.status).toBe(404)
    expect(res.body).toMatchObject({ success: false, error: 'otp_not_found' })
  })
})

describe('spending an OTP (POST /phygitals/claim-registration/pullable)', () => {
  test('a PHYGITAL_CLAIM OTP registers the recipient and is marked used', async () => {
    await setup()
    const code = await claimOtp()
    const res = await pullable(code, ALICE.toLowerCase())
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      recipient: ALICE,
      linkedToken: { contractAddress: CONTRACT, tokenId: '7', chainId: '31337' },
      createdAt: iso(gw.clock.now),
      allowedAt: iso(gw.clock.now),
      expiresAt: iso(gw.clock.now + 24 * 60 * MINUTE),
    })
    expect(await stored(code)).toMatchObject({ usedAt: gw.clock.now, usedFor: 'claim-registration' })
  })

  test.each(['GUESTBOOK_EVENT', 'PROOF_EVENT'] as const)('a %s OTP is 403 otp_wrong_type and not consumed', async (type) => {
    await setup()
    const code: string =
      type === 'GUESTBOOK_EVENT' ? (await firstQuery(UID.guestbook)).guestbookEvents[0].otp : (await firstQuery(UID.proof)).proofEvents[0].otp
    const res = await pullable(code)
    expect(res.status).toBe(403)
    expect(res.body).toEqual({
      success: false,
      error: 'otp_wrong_type',
      message: `This endpoint needs a PHYGITAL_CLAIM OTP; this one is ${type}`,
    })
    expect((await stored(code))?.usedAt).toBeNull()
    const read = await getOtp(code)
    expect(read.body.isExpired).toBe(false)
    expect(read.body).not.toHaveProperty('usedAt')
    expect(await queryRows(gw.store, 'SELECT COUNT(*) AS n FROM claim_registrations')).toEqual([{ n: 0 }])
  })

  test('a second use is 409 otp_used', async () => {
    await setup()
    const code = await claimOtp()
    expect((await pullable(code)).status).toBe(200)
    const res = await pullable(code, BOB)
    expect(res.status).toBe(409)
    expect(res.body).toMatchInlineSnapshot(`
      {
        "error": "otp_used",
        "message": "This OTP has already been used",
        "success": false,
      }
    `)
    expect(await queryRows(gw.store, 'SELECT recipient FROM claim_registrations')).toEqual([{ recipient: ALICE }])
  })

  test('an expired OTP is 409 otp_expired and registers nothing', async () => {
    await setup()
    const code = await claimOtp()
    gw.clock.now += 30 * MINUTE
    const res = await pullable(code)
    expect(res.status).toBe(409)
    expect(res.body).toMatchObject({ success: false, error: 'otp_expired' })
    expect((await stored(code))?.usedAt).toBeNull()
    expect(await queryRows(gw.store, 'SELECT COUNT(*) AS n FROM claim_registrations')).toEqual([{ n: 0 }])
  })

  test('just before expiry the OTP still works', async () => {
    await setup()
    const code = await claimOtp()
    gw.clock.now += 30 * MINUTE - 1
    expect((await pullable(code)).status).toBe(200)
  })

  test('no x-service-code header is 401 otp_missing', async () => {
    await setup()
    const res = await pullable(undefined)
    expect(res.status).toBe(401)
    expect(res.body).toMatchObject({ success: false, error: 'otp_missing' })
  })

  test('an unknown code is 401 otp_invalid', async () => {
    await setup()
    const res = await pullable('V1StGXR8_Z5jdHi6B-myT')
    expect(res.status).toBe(401)
    expect(res.body).toMatchObject({ success: false, error: 'otp_invalid' })
  })

  test('a failed write (two_tap_claim_disabled) leaves the OTP unused', async () => {
    await setup()
    const code = (await firstQuery(UID.direct)).linkedToken.otp as string
    const res = await pullable(code)
    expect(res.status).toBe(409)
    expect(res.body).toMatchObject({ success: false, error: 'two_tap_claim_disabled' })
    expect((await stored(code))?.usedAt).toBeNull()
    const read = await getOtp(code)
    expect(read.body.isExpired).toBe(false)
    expect(read.body).not.toHaveProperty('usedAt')
  })

  test('a failed write (claim_registration_exists) leaves the OTP usable once the conflict is gone', async () => {
    const { a } = await setup()
    const key = { contractAddress: CONTRACT, chainId: 31337, tokenId: '7' }
    const open = await call(gw, {
      method: 'POST',
      url: '/phygitals/claim-registration',
      headers: { 'x-service-api-key': a.apiKey },
      payload: { ...key, recipient: BOB },
    })
    expect(open.status).toBe(200)

    const code = await claimOtp()
    const refused = await pullable(code)
    expect(refused.status).toBe(409)
    expect(refused.body).toMatchObject({ success: false, error: 'claim_registration_exists' })
    expect((await stored(code))?.usedAt).toBeNull()

    const removed = await call(gw, {
      method: 'DELETE',
      url: '/phygitals/claim-registration',
      headers: { 'x-service-api-key': a.apiKey },
      payload: { ...key, recipient: BOB },
    })
    expect(removed.status).toBe(200)
    const retry = await pullable(code)
    expect(retry.status).toBe(200)
    expect(retry.body.recipient).toBe(ALICE)
  })

  test('a chip-only OTP is 409 chip_not_linked and stays unused', async () => {
    await setup()
    const code = (await firstQuery(UID.bare)).otp as string
    const res = await pullable(code)
    expect(res.status).toBe(409)
    expect(res.body).toMatchObject({ success: false, error: 'chip_not_linked' })
    expect((await stored(code))?.usedAt).toBeNull()
  })

  test('bad input (invalid recipient, ENS offline, missing body) is refused before the OTP is spent', async () => {
    await setup()
    const code = await claimOtp()
    const invalid = await pullable(code, '0x1234')
    expect(invalid.status).toBe(400)
    expect(invalid.body).toMatchObject({ success: false, error: 'invalid_recipient' })
    const ens = await pullable(code, 'alice.eth')
    expect(ens.status).toBe(400)
    expect(ens.body).toMatchObject({ success: false, error: 'ens_unavailable' })
    const empty = await call(gw, { method: 'POST', url: '/phygitals/claim-registration/pullable', headers: { 'x-service-code': code }, payload: {} })
    expect(empty.status).toBe(400)
    expect(empty.body).toMatchObject({ success: false, error: 'validation_failed', errors: { recipient: 'Required' } })
    expect((await stored(code))?.usedAt).toBeNull()
    expect((await pullable(code)).status).toBe(200)
  })

  test('200 concurrent uses of one OTP: exactly one succeeds, 199 are 409 otp_used', async () => {
    await setup()
    const code = await claimOtp()
    const responses = await Promise.all(
      Array.from({ length: 200 }, () =>
        gw.app.inject({
          method: 'POST',
          url: '/phygitals/claim-registration/pullable',
          headers: { 'x-service-code': code },
          payload: { recipient: ALICE },
        }),
      ),
    )
    const statuses = responses.map((r) => r.statusCode)
    expect(statuses.filter((s) => s === 200)).toHaveLength(1)
    const refused = responses.filter((r) => r.statusCode !== 200)
    expect(refused).toHaveLength(199)
    for (const r of refused) {
      expect(r.statusCode).toBe(409)
      expect((JSON.parse(r.body) as { error: string }).error).toBe('otp_used')
    }
    expect(await queryRows(gw.store, 'SELECT COUNT(*) AS n FROM claim_registrations')).toEqual([{ n: 1 }])
    expect((await stored(code))?.usedAt).toBe(gw.clock.now)
  })
})

describe('OTP endpoints check the code before any work', () => {
  // Issue 9: the document declares the OTP as each endpoint's security requirement, so a request
  // without a known code is 401, never a 400 from resolving its recipient (an ENS lookup for anyone).
  const routes: [string, string][] = [
    ['POST', '/phygitals/transfer/pullable'],
    ['POST', '/phygitals/claim-registration/pullable'],
    ['POST', '/events/mint/self'],
    ['GET', '/phygitals/transfer-signature/pullable'],
  ]
  test('no code is 401 otp_missing and an unknown one 401 otp_invalid, even with an ENS recipient', async () => {
    gw = await createBackendGateway()
    for (const [method, url] of routes) {
      const request = (headers: Record<string, string>) =>
        method === 'GET'
          ? call(gw, { method, url: `${url}?recipient=vitalik.eth`, headers })
          : call(gw, { method: method as 'POST', url, headers, payload: { recipient: 'vitalik.eth' } })
      expect((await request({})).body, `${method} ${url}`).toMatchObject({ error: 'otp_missing' })
      expect((await request({ 'x-service-code': 'not-a-code' })).body, `${method} ${url}`).toMatchObject({ error: 'otp_invalid' })
    }
  })
})
