import { afterEach, describe, expect, test } from 'vitest'
import {
  ALICE,
  type BackendGateway,
  BOB,
  call,
  CONTRACT,
  createBackendGateway,
  metadata,
  seedTeam,
  tapChip,
  type TeamSeed,
} from '../helpers/gateway.js'

let gw: BackendGateway
afterEach(async () => gw?.close())

const CHAIN = 31337
const UID_A = '04AABBCCDDEE01'
const UID_B = '04AABBCCDDEE02'
const UID_C = '04AABBCCDDEE03'
const LONE = '04AABBCCDDEE0F'
const OTHER_CONTRACT = '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0'

const key = (tokenId: string, contractAddress = CONTRACT) => ({ contractAddress, chainId: CHAIN, tokenId })
const qs = (params: Record<string, string | number>) =>
  new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString()
const iso = (ms: number) => new Date(ms).toISOString()

/**
 * Team A: token 1 with two chips (2-tap 60 s / 600 s), token 2 with no chip,
 * token 3 without 2-tap, token 4 with the default 2-tap, plus a lone chip.
 */
function seedA(extra: Partial<TeamSeed> = {}): Promise<{ apiKey: string }> {
  return seedTeam(gw, {
    name: 'A',
    chips: [{ uid: UID_A }, { uid: UID_B }, { uid: UID_C }, { uid: LONE }],
    tokens: [
      { ...key('1'), chips: [UID_A, UID_B], metadata: metadata(), twoTapClaim: { delaySeconds: 60, windowSeconds: 600 } },
      { ...key('2'), chips: [], metadata: metadata(), twoTapClaim: { delaySeconds: 60, windowSeconds: 600 } },
      { ...key('3'), chips: [UID_C], metadata: metadata() },
      { ...key('4'), twoTapClaim: true, metadata: metadata() },
    ],
    ...extra,
  })
}

describe('GET /phygitals/chip', () => {
  test('lists the linked chips in uppercase, uid being the first linked', async () => {
    gw = await createBackendGateway()
    // UID_B is linked first, UID_A a second later: order follows linking, not the UID.
    await seedTeam(gw, { name: 'A', chips: [{ uid: UID_B.toLowerCase() }], tokens: [{ ...key('1'), chips: [UID_B] }] })
    gw.clock.now += 1000
    const { apiKey } = await seedTeam(gw, {
      name: 'A',
      chips: [{ uid: 'aa:bb:cc:dd:ee:ff:01' }, { uid: UID_B }],
      tokens: [{ ...key('1'), chips: ['aabbccddeeff01', UID_B] }],
    })
    const res = await call(gw, { url: `/phygitals/chip?${qs(key('1'))}`, headers: { 'x-service-api-key': apiKey } })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ uid: UID_B, uids: [UID_B, 'AABBCCDDEEFF01'] })
  })

  test('accepts a lower-case contractAddress and a token with one chip', async () => {
    gw = await createBackendGateway()
    const { apiKey } = await seedA()
    const res = await call(gw, {
      url: `/phygitals/chip?${qs(key('3', CONTRACT.toLowerCase()))}`,
      headers: { 'x-service-api-key': apiKey },
    })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ uid: UID_C, uids: [UID_C] })
  })

  test('404 chip_not_found for a token with no chips, token_not_found for an unknown or foreign token', async () => {
    gw = await createBackendGateway()
    const { apiKey } = await seedA()
    const b = await seedTeam(gw, { name: 'B' })
    const headers = { 'x-service-api-key': apiKey }

    const none = await call(gw, { url: `/phygitals/chip?${qs(key('2'))}`, headers })
    expect(none.status).toBe(404)
    expect(none.body).toMatchObject({ success: false, error: 'chip_not_found' })

    const unknown = await call(gw, { url: `/phygitals/chip?${qs(key('99'))}`, headers })
    expect(unknown.status).toBe(404)
    expect(unknown.body).toMatchObject({ success: false, error: 'token_not_found' })

    const otherChain = await call(gw, { url: `/phygitals/chip?${qs({ ...key('1'), chainId: 1 })}`, headers })
    expect(otherChain.status).toBe(404)
    expect(otherChain.body.error).toBe('token_not_found')

    const foreign = await call(gw, { url: `/phygitals/chip?${qs(key('1'))}`, headers: { 'x-service-api-key': b.apiKey } })
    expect(foreign.status).toBe(404)
    expect(foreign.body).toEqual(unknown.body)
  })

  test('401 api_key_missing without a key, invalid_api_key with a wrong one', async () => {
    gw = await createBackendGateway()
    await seedA()
    const missing = await call(gw, { url: `/phygitals/chip?${qs(key('1'))}` })
    expect(missing.status).toBe(401)
    expect(missing.body).toMatchObject({ success: false, error: 'api_key_missing' })
    const wrong = await call(gw, { url: `/phygitals/chip?${qs(key('1'))}`, headers: { 'x-service-api-key': 'tg_nope' } })
    expect(wrong.status).toBe(401)
    expect(wrong.body.error).toBe('invalid_api_key')
  })

  test('400 validation_failed naming each bad or missing query field', async () => {
    gw = await createBackendGateway()
    const { apiKey } = await seedA()
    const headers = { 'x-service-api-key': apiKey }

    const missing = await call(gw, { url: `/phygitals/chip?${qs({ contractAddress: CONTRACT, chainId: CHAIN })}`, headers })
    expect(missing.status).toBe(400)
    expect(missing.body).toMatchObject({ success: false, error: 'validation_failed' })
    expect(Object.keys(missing.body.errors)).toEqual(['tokenId'])

    const badAddress = await call(gw, { url: `/phygitals/chip?${qs(key('1', '0x1234'))}`, headers })
    expect(badAddress.status).toBe(400)
    expect(badAddress.body.error).toBe('validation_failed')
    expect(badAddress.body.errors.contractAddress).toMatch(/address/)

    const badTokenId = await call(gw, { url: `/phygitals/chip?${qs(key('abc'))}`, headers })
    expect(badTokenId.status).toBe(400)
    expect(badTokenId.body.error).toBe('validation_failed')
    expect(badTokenId.body.errors.tokenId).toBeTruthy()

    const badChain = await call(gw, { url: `/phygitals/chip?${qs({ ...key('1'), chainId: 'main' })}`, headers })
    expect(badChain.status).toBe(400)
    expect(badChain.body.errors.chainId).toBeTruthy()
  })
})

describe('claim registrations', () => {
  const statusUrl = (tokenId: string, recipient: string) => `/phygitals/claim-registration?${qs({ ...key(tokenId), recipient })}`

  test('lifecycle: delay, window, one open registration per token, then a new one after expiry', async () => {
    gw = await createBackendGateway()
    const { apiKey } = await seedA()
    const headers = { 'x-service-api-key': apiKey }
    const linkedToken = { contractAddress: CONTRACT, tokenId: '1', chainId: String(CHAIN) }

    const before = await call(gw, { url: statusUrl('1', ALICE.toLowerCase()) })
    expect(before.status).toBe(200)
    expect(before.body).toEqual({
      recipient: ALICE,
      linkedToken,
      isRequired: true,
      isValid: false,
      allowedAt: null,
      expiresAt: null,
      createdAt: null,
    })

    const createdAt = gw.clock.now
    const created = await call(gw, {
      method: 'POST',
      url: '/phygitals/claim-registration',
      headers,
      payload: { ...key('1'), recipient: ALICE.toLowerCase() },
    })
    expect(created.status).toBe(200)
    expect(created.body).toEqual({
      recipient: ALICE,
      linkedToken,
      createdAt: iso(createdAt),
      allowedAt: iso(createdAt + 60_000),
      expiresAt: iso(createdAt + 60_000 + 600_000),
    })

    const during = await call(gw, { url: statusUrl('1', ALICE) })
    expect(during.body).toEqual({ ...created.body, isRequired: true, isValid: false })

    gw.clock.now = createdAt + 61_000
    expect((await call(gw, { url: statusUrl('1', ALICE) })).body.isValid).toBe(true)
    // Another recipient has no registration of its own.
    const bob = await call(gw, { url: statusUrl('1', BOB) })
    expect(bob.body).toMatchObject({ recipient: BOB, isRequired: true, isValid: false, createdAt: null })

    for (const recipient of [ALICE, BOB]) {
      const again = await call(gw, { method: 'POST', url: '/phygitals/claim-registration', headers, payload: { ...key('1'), recipient } })
      expect(again.status).toBe(409)
      expect(again.body).toMatchObject({ success: false, error: 'claim_registration_exists' })
    }

    gw.clock.now = createdAt + 660_000 // exactly expiresAt: no longer valid
    const expired = await call(gw, { url: statusUrl('1', ALICE) })
    expect(expired.body).toMatchObject({ isRequired: true, isValid: false, expiresAt: iso(createdAt + 660_000) })

    const renewed = await call(gw, { method: 'POST', url: '/phygitals/claim-registration', headers, payload: { ...key('1'), recipient: BOB } })
    expect(renewed.status).toBe(200)
    expect(renewed.body).toMatchObject({ recipient: BOB, createdAt: iso(gw.clock.now), allowedAt: iso(gw.clock.now + 60_000) })
  })

  test('a token without 2-tap: POST 409 two_tap_claim_disabled, GET isRequired false', async () => {
    gw = await createBackendGateway()
    const { apiKey } = await seedA()
    const post = await call(gw, {
      method: 'POST',
      url: '/phygitals/claim-registration',
      headers: { 'x-service-api-key': apiKey },
      payload: { ...key('3'), recipient: ALICE },
    })
    expect(post.status).toBe(409)
    expect(post.body).toMatchObject({ success: false, error: 'two_tap_claim_disabled' })

    const get = await call(gw, { url: statusUrl('3', ALICE) })
    expect(get.status).toBe(200)
    expect(get.body).toMatchObject({ isRequired: false, isValid: false, createdAt: null })
  })

  test('twoTapClaim: true uses config.claim (no delay, a 24 h window)', async () => {
    gw = await createBackendGateway()
    expect(gw.config.claim).toEqual({ delaySeconds: 0, windowSeconds: 86_400 })
    const { apiKey } = await seedA()
    const res = await call(gw, {
      method: 'POST',
      url: '/phygitals/claim-registration',
      headers: { 'x-service-api-key': apiKey },
      payload: { ...key('4'), recipient: ALICE },
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      createdAt: iso(gw.clock.now),
      allowedAt: iso(gw.clock.now),
      expiresAt: iso(gw.clock.now + 86_400_000),
    })
    expect((await call(gw, { url: statusUrl('4', ALICE) })).body.isValid).toBe(true)
  })

  test('the configured claim defaults apply to twoTapClaim: true', async () => {
    gw = await createBackendGateway({ config: { claim: { delaySeconds: 5, windowSeconds: 50 } } })
    const { apiKey } = await seedA()
    const res = await call(gw, {
      method: 'POST',
      url: '/phygitals/claim-registration',
      headers: { 'x-service-api-key': apiKey },
      payload: { ...key('4'), recipient: ALICE },
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ allowedAt: iso(gw.clock.now + 5_000), expiresAt: iso(gw.clock.now + 55_000) })
  })

  test('POST needs the key of the owning team', async () => {
    gw = await createBackendGateway()
    await seedA()
    const b = await seedTeam(gw, { name: 'B' })
    const payload = { ...key('1'), recipient: ALICE }
    const missing = await call(gw, { method: 'POST', url: '/phygitals/claim-registration', payload })
    expect(missing.status).toBe(401)
    expect(missing.body.error).toBe('api_key_missing')
    const foreign = await call(gw, { method: 'POST', url: '/phygitals/claim-registration', headers: { 'x-service-api-key': b.apiKey }, payload })
    expect(foreign.status).toBe(404)
    expect(foreign.body.error).toBe('token_not_found')
    expect((await call(gw, { url: statusUrl('1', ALICE) })).body.createdAt).toBeNull()
  })

  test('DELETE removes the registration; a second DELETE is 404', async () => {
    gw = await createBackendGateway()
    const { apiKey } = await seedA()
    const headers = { 'x-service-api-key': apiKey }
    const payload = { ...key('1'), recipient: ALICE }
    expect((await call(gw, { method: 'POST', url: '/phygitals/claim-registration', headers, payload })).status).toBe(200)

    const del = await call(gw, { method: 'DELETE', url: '/phygitals/claim-registration', headers, payload: { ...payload, recipient: ALICE.toLowerCase() } })
    expect(del.status).toBe(200)
    expect(del.body).toEqual({ success: true })

    const get = await call(gw, { url: statusUrl('1', ALICE) })
    expect(get.body).toMatchObject({ isRequired: true, isValid: false, allowedAt: null, expiresAt: null, createdAt: null })

    const again = await call(gw, { method: 'DELETE', url: '/phygitals/claim-registration', headers, payload })
    expect(again.status).toBe(404)
    expect(again.body).toMatchObject({ success: false, error: 'claim_registration_not_found' })

    // The token is free again.
    expect((await call(gw, { method: 'POST', url: '/phygitals/claim-registration', headers, payload: { ...payload, recipient: BOB } })).status).toBe(200)
  })

  test('pullable: without the chain (this gateway runs no embedded chain) the token\'s moves are unknown: 503 chain_state_unknown, the OTP unspent', async () => {
    // Issue 24 §1: the registration follows the OTP's view of the token, which needs the token's nonce.
    // With the chain, the OTP registers and is spent: test/tokens/tokenMoves.test.ts.
    gw = await createBackendGateway()
    await seedA()
    const ref = await call(gw, { url: `/refs/${await tapChip(gw, UID_B)}` })
    const otp: string = ref.body.linkedToken.otp
    const refused = await call(gw, { method: 'POST', url: '/phygitals/claim-registration/pullable', headers: { 'x-service-code': otp }, payload: { recipient: BOB } })
    expect(refused).toMatchObject({ status: 503, body: { error: 'chain_state_unknown' }, headers: { 'retry-after': '5' } })
    expect((await call(gw, { url: `/otps/${otp}` })).body).toMatchObject({ isExpired: false })
    expect((await call(gw, { method: 'GET', url: `/phygitals/claim-registration?contractAddress=${CONTRACT}&chainId=${CHAIN}&tokenId=1&recipient=${BOB}` })).body).toMatchObject({ isValid: false, createdAt: null })
  })

  test('pullable: a chip with no linked token is 409 chip_not_linked and its OTP stays unused', async () => {
    gw = await createBackendGateway()
    await seedA()
    const ref = await call(gw, { url: `/refs/${await tapChip(gw, LONE)}` })
    expect(ref.body.linkedToken).toBeUndefined()
    const otp: string = ref.body.otp
    expect(otp).toMatch(/^[\w-]{21}$/)

    const res = await call(gw, {
      method: 'POST',
      url: '/phygitals/claim-registration/pullable',
      headers: { 'x-service-code': otp },
      payload: { recipient: ALICE },
    })
    expect(res.status).toBe(409)
    expect(res.body).toMatchObject({ success: false, error: 'chip_not_linked' })
    const read = await call(gw, { url: `/otps/${otp}` })
    expect(read.status).toBe(200)
    expect(read.body.isExpired).toBe(false)
    expect(read.body.usedAt).toBeUndefined()
  })

  test('pullable without an OTP is 401 otp_missing', async () => {
    gw = await createBackendGateway()
    await seedA()
    const res = await call(gw, { method: 'POST', url: '/phygitals/claim-registration/pullable', payload: { recipient: ALICE } })
    expect(res.status).toBe(401)
    expect(res.body.error).toBe('otp_missing')
  })

  describe('recipients that are not addresses', () => {
    const cases = [
      { recipient: 'alice.eth', error: 'ens_unavailable' },
      { recipient: 'not an address', error: 'invalid_recipient' },
      { recipient: '0x123', error: 'invalid_recipient' },
    ] as const

    test.each(cases)('$recipient → 400 $error on GET, POST, DELETE and pullable', async ({ recipient, error }) => {
      gw = await createBackendGateway()
      const { apiKey } = await seedA()
      const headers = { 'x-service-api-key': apiKey }
      const ref = await call(gw, { url: `/refs/${await tapChip(gw, UID_A)}` })
      const otp: string = ref.body.linkedToken.otp

      const responses = [
        await call(gw, { url: statusUrl('1', recipient) }),
        await call(gw, { method: 'POST', url: '/phygitals/claim-registration', headers, payload: { ...key('1'), recipient } }),
        await call(gw, { method: 'DELETE', url: '/phygitals/claim-registration', headers, payload: { ...key('1'), recipient } }),
        await call(gw, {
          method: 'POST',
          url: '/phygitals/claim-registration/pullable',
          headers: { 'x-service-code': otp },
          payload: { recipient },
        }),
      ]
      for (const res of responses) {
        expect(res.status).toBe(400)
        expect(res.body).toMatchObject({ success: false, error })
        if (error === 'ens_unavailable') expect(res.body.message).toMatch(/mainnet RPC/)
      }
      // Nothing was registered and the OTP was not spent.
      expect((await call(gw, { url: statusUrl('1', ALICE) })).body.createdAt).toBeNull()
      expect((await call(gw, { url: `/otps/${otp}` })).body.isExpired).toBe(false)
    })

    test('with a mainnet RPC configured but unreachable, an ENS name is 503 ens_unreachable and nothing is written', async () => {
      // Port 9 (discard) on loopback: nothing listens, so viem's ENS lookup fails at once.
      gw = await createBackendGateway({ config: { chain: { ensRpcUrl: 'http://127.0.0.1:9' } } })
      const { apiKey } = await seedA()
      const res = await call(gw, {
        method: 'POST',
        url: '/phygitals/claim-registration',
        headers: { 'x-service-api-key': apiKey },
        payload: { ...key('1'), recipient: 'alice.eth' },
      })
      expect(res.status).toBe(503)
      expect(res.body).toMatchObject({ success: false, error: 'ens_unreachable' })
      expect((await call(gw, { url: statusUrl('1', ALICE) })).body.createdAt).toBeNull()
    })
  })
})

describe('PATCH /phygitals/metadata', () => {
  /** Team A with token 1; returns a ref of its chip for reading the metadata back. */
  async function setup() {
    gw = await createBackendGateway()
    const a = await seedA()
    const b = await seedTeam(gw, { name: 'B' })
    const refId = await tapChip(gw, UID_A)
    return { headers: { 'x-service-api-key': a.apiKey }, foreignHeaders: { 'x-service-api-key': b.apiKey }, refId }
  }
  const stored = async (refId: string): Promise<unknown> =>
    (await call(gw, { url: `/refs/${refId}?includeMetadata=true` })).body.linkedToken.metadata
  const patch = (headers: Record<string, string>, meta: unknown, tokenId = '1') =>
    call(gw, {
      method: 'PATCH',
      url: '/phygitals/metadata',
      headers,
      payload: { ...key(tokenId), metadata: typeof meta === 'string' ? meta : JSON.stringify(meta) },
    })

  test('replaces the metadata and keeps extra fields', async () => {
    const { headers, refId } = await setup()
    expect(await stored(refId)).toEqual(metadata())
    const next = metadata({
      name: 'Renamed',
      animation_url: 'https://example.com/a.mp4',
      properties: { size: { w: 1, h: [2, 3] }, tags: ['x'] },
      attributes: [{ trait_type: 'Level', value: 3, display_type: 'number', rarity: 'rare' }],
      media_gallery: [{ media: 'https://example.com/b.png', type: 'image/png', caption: 'back' }],
    })
    const res = await patch(headers, next)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true })
    expect(await stored(refId)).toEqual(next)
  })

  test('empty strings and empty arrays are accepted', async () => {
    const { headers, refId } = await setup()
    const next = metadata({ name: '', collection: '', description: '', image: '', attributes: [], media_gallery: [] })
    const res = await patch(headers, next)
    expect(res.status).toBe(200)
    expect(await stored(refId)).toEqual(next)
  })

  test('a missing image is 400 with errors["metadata.image"]', async () => {
    const { headers, refId } = await setup()
    const { image: _image, ...noImage } = metadata()
    const res = await patch(headers, noImage)
    expect(res.status).toBe(400)
    expect(res.body).toMatchInlineSnapshot(`
      {
        "error": "validation_failed",
        "errors": {
          "metadata.image": "Required",
        },
        "message": "metadata failed validation",
        "success": false,
      }
    `)
    expect(await stored(refId)).toEqual(metadata())
  })

  test('every invalid field is listed, and nothing is stored', async () => {
    const { headers, refId } = await setup()
    const cases: { meta: unknown; paths: string[] }[] = [
      { meta: { image: 'https://example.com/x.png' }, paths: ['metadata.name', 'metadata.collection', 'metadata.description', 'metadata.attributes', 'metadata.media_gallery'] },
      { meta: metadata({ media_gallery: [{ media: 'https://example.com/x.png' }] }), paths: ['metadata.media_gallery.0.type'] },
      { meta: metadata({ media_gallery: [{ media: 'not a url', type: 'image/png' }] }), paths: ['metadata.media_gallery.0.media'] },
      { meta: metadata({ attributes: [{ value: 1 }] }), paths: ['metadata.attributes.0.trait_type'] },
      { meta: metadata({ image: 'not a url', name: 7 }), paths: ['metadata.name', 'metadata.image'] },
    ]
    for (const { meta, paths } of cases) {
      const res = await patch(headers, meta)
      expect(res.status).toBe(400)
      expect(res.body.error).toBe('validation_failed')
      expect(Object.keys(res.body.errors).sort()).toEqual([...paths].sort())
    }
    expect(await stored(refId)).toEqual(metadata())
  })

  test('metadata that is not a JSON object is 400', async () => {
    const { headers, refId } = await setup()
    const notJson = await patch(headers, '{"name": ')
    expect(notJson.status).toBe(400)
    expect(notJson.body).toMatchObject({ success: false, error: 'validation_failed' })
    expect(notJson.body.errors.metadata).toMatch(/^Invalid JSON/)

    const array = await patch(headers, [metadata()])
    expect(array.status).toBe(400)
    expect(array.body.error).toBe('validation_failed')
    expect(Object.keys(array.body.errors)).toEqual(['metadata'])

    const notString = await call(gw, { method: 'PATCH', url: '/phygitals/metadata', headers, payload: { ...key('1'), metadata: metadata() } })
    expect(notString.status).toBe(400)
    expect(notString.body.error).toBe('validation_failed')
    expect(notString.body.errors.metadata).toBeTruthy()

    expect(await stored(refId)).toEqual(metadata())
  })

  test('an unknown or foreign token is 404; no key is 401', async () => {
    const { headers, foreignHeaders, refId } = await setup()
    const unknown = await patch(headers, metadata({ name: 'x' }), '99')
    expect(unknown.status).toBe(404)
    expect(unknown.body.error).toBe('token_not_found')
    const foreign = await patch(foreignHeaders, metadata({ name: 'x' }))
    expect(foreign.status).toBe(404)
    expect(foreign.body.error).toBe('token_not_found')
    const anonymous = await patch({}, metadata({ name: 'x' }))
    expect(anonymous.status).toBe(401)
    expect(anonymous.body.error).toBe('api_key_missing')
    expect(await stored(refId)).toEqual(metadata())
  })
})

test('the contract address is part of the token key', async () => {
  gw = await createBackendGateway()
  const { apiKey } = await seedA({
    tokens: [{ ...key('1', OTHER_CONTRACT), chips: [UID_A] }],
  })
  const res = await call(gw, { url: `/phygitals/chip?${qs(key('1', OTHER_CONTRACT))}`, headers: { 'x-service-api-key': apiKey } })
  expect(res.body).toEqual({ uid: UID_A, uids: [UID_A] })
  const none = await call(gw, { url: `/phygitals/chip?${qs(key('1'))}`, headers: { 'x-service-api-key': apiKey } })
  expect(none.status).toBe(404)
  expect(none.body.error).toBe('token_not_found')
})
