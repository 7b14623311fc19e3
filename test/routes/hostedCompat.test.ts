import AjvDraft04 from 'ajv-draft-04'
import addFormats from 'ajv-formats'
import { afterEach, describe, expect, test } from 'vitest'
import { createStation } from '../../src/stations/stations.js'
import type { ConfigInput } from '../../src/config.js'
import { type BackendGateway, call, CONTRACT, createBackendGateway, GUESTBOOK, metadata, queryRows, seedSunChip, seedSunProfile, seedTeam, sunTapUrl, tapChip } from '../helpers/gateway.js'

// Issue 26: requests sent exactly as apps written for the hosted API send them (x-iyk-* headers,
// decimal UIDs), read back with compat=iyk and, where it matters, without it.
let gw: BackendGateway
afterEach(async () => gw?.close())

// The issue's own example: 7 bytes read as one big-endian number.
const HEX = '04A893CAAA1190'
const DECIMAL = '1311252620644752'
const OTHER = '04A10000000002'
const META = '5ACE7E50AB65D5D51FD5BF5A16B8205B'
const FILE = '97D1F3FCC8A6B3A4F1AE6F1E3B4BD5A0'

async function setup(config: ConfigInput = {}) {
  gw = await createBackendGateway({ config: { rateLimit: { max: 100_000 }, ...config } })
  const team = await seedTeam(gw, {
    name: 'A',
    chips: [{ uid: HEX, redirectUrl: 'https://app.example/claim?x=1' }, { uid: OTHER }],
    tokens: [{ chainId: 31337, contractAddress: CONTRACT, tokenId: '7', chips: [HEX], metadata: metadata() }],
    proofEvents: [{ proofEventId: 501, name: 'Launch', status: 'active', chips: [HEX] }],
    guestbookContracts: [
      {
        name: 'Guestbook',
        symbol: 'GB',
        chainId: 31337,
        address: GUESTBOOK,
        events: [
          { name: 'Day 1', tokenId: '1', metadata: metadata(), chips: [HEX] },
          { name: 'Day 2', tokenId: '2', metadata: metadata(), chips: [] },
        ],
      },
    ],
  })
  return team
}

type Doc = { paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: object }> }> }>>; components: object }

/** Asserts a compat answer validates against what the gateway's own OpenAPI document says of it. */
async function expectDocumented(method: string, path: string, res: { status: number; body: unknown }) {
  const doc = JSON.parse((await gw.app.inject({ url: '/openapi.json' })).body) as Doc
  const schema = doc.paths[path]![method]!.responses[String(res.status)]!.content['application/json']!.schema
  const ajv = new AjvDraft04.default({ strict: false })
  addFormats.default(ajv)
  const validate = ajv.compile({ ...schema, components: doc.components })
  expect(validate(res.body), `${method} ${path} ${res.status}: ${JSON.stringify(validate.errors)}`).toBe(true)
}

const day2Id = async () => (await queryRows<{ id: number }>(gw.store, "SELECT id FROM guestbook_events WHERE name = 'Day 2'"))[0]!.id
const assignedTo = async (eventId: number) =>
  (await queryRows<{ uid: string }>(gw.store, `SELECT chip_uid AS uid FROM guestbook_event_chips WHERE event_id = ${Number(eventId)} ORDER BY chip_uid`)).map((r) => r.uid)

describe('compat=iyk: what hosted-API apps read back', () => {
  test('GET /refs/:id with x-iyk-api-key and the includes: decimal uid, poapEvents[0].{poapEventId, otp, status}, linkedToken.otp, guestbookEvents[0]', async () => {
    const { apiKey } = await setup({ compat: 'iyk' })
    const ref = await tapChip(gw, HEX)
    const res = await call(gw, { url: `/refs/${ref}?includeOwner=false&includeMetadata=true`, headers: { 'x-iyk-api-key': apiKey } })
    expect(res.status).toBe(200)
    expect(res.body.uid).toBe(DECIMAL)
    expect(res.body.isValidRef).toBe(true)
    expect(res.body.linkedToken.otp).toMatch(/\S/)
    expect(res.body.poapEvents).toHaveLength(1)
    expect(res.body.poapEvents[0]).toMatchObject({ poapEventId: 501, status: 'active', otp: res.body.proofEvents[0].otp })
    expect(res.body.poapEvents[0].proofEventId).toBeUndefined()
    expect(res.body.proofEvents[0]).toMatchObject({ proofEventId: 501 })
    expect(res.body.guestbookEvents[0]).toMatchObject({ contractAddress: GUESTBOOK, tokenId: '1', chainId: 31337 })
    expect(res.body.guestbookEvents[0].otp).toMatch(/\S/)

    // GET /otps/:id of the proof event's code: poapEvent beside proofEvent.
    const otp = await call(gw, { url: `/otps/${res.body.poapEvents[0].otp}`, headers: { 'x-iyk-api-key': apiKey } })
    expect(otp.status).toBe(200)
    expect(otp.body.poapEvent).toMatchObject({ poapEventId: 501, status: 'active' })
    expect(otp.body.proofEvent).toMatchObject({ proofEventId: 501 })
    await expectDocumented('get', '/refs/{id}', res)
    await expectDocumented('get', '/otps/{id}', otp)
  })

  test('errors: {statusCode, error: reason phrase, message} with our code under code', async () => {
    const { apiKey } = await setup({ compat: 'iyk' })
    const missing = await call(gw, { url: '/refs/NoSuchRefAtAll' })
    expect(missing.status).toBe(404)
    expect(missing.body).toMatchObject({ statusCode: 404, error: 'Not Found', success: false })
    expect(missing.body.message).toMatch(/\S/)
    expect(missing.body.code).toMatch(/^[a-z_]+$/)
    await expectDocumented('get', '/refs/{id}', missing)

    const bad = await call(gw, { method: 'POST', url: '/events/assign/legacy', headers: { 'x-iyk-api-key': apiKey }, payload: { guestbookEventId: await day2Id(), tagUIDs: ['131125262064475x'] } })
    expect(bad.status).toBe(400)
    expect(bad.body).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'validation_failed' })
    expect(bad.body.errors['tagUIDs.0']).toMatch(/decimal form/)
    await expectDocumented('post', '/events/assign/legacy', bad)

    const noKey = await call(gw, { method: 'POST', url: '/events/assign/legacy', headers: { 'x-iyk-api-key': 'wrong' }, payload: { guestbookEventId: 1, tagUIDs: [DECIMAL] } })
    expect(noKey.status).toBe(401)
    expect(noKey.body).toMatchObject({ statusCode: 401, error: 'Unauthorized', code: 'invalid_api_key' })
    await expectDocumented('post', '/events/assign/legacy', noKey)

    const noRoute = await call(gw, { url: '/nowhere' })
    expect(noRoute.body).toEqual({ statusCode: 404, error: 'Not Found', success: false, code: 'route_not_found', message: 'No route GET /nowhere' })
  })

  test('a chip redirect carries iykRef (and serviceRef) with the ref id; without the setting serviceRef only', async () => {
    for (const compat of ['iyk', undefined] as const) {
      const { teamId } = await setup(compat ? { compat } : {})
      await seedSunProfile(gw, { teamId, name: 'aes', metaKey: META, fileKey: FILE })
      await seedSunChip(gw, { teamId, uid: HEX, profileName: 'aes' })
      const res = await gw.app.inject({ url: sunTapUrl({ metaKey: META, fileKey: FILE, uid: HEX, counter: 3 }) })
      expect(res.statusCode).toBe(302)
      const refId = (await gw.store.tapLog.recent(1))[0]!.refId!
      const location = new URL(res.headers.location as string)
      expect(location.searchParams.get('x')).toBe('1')
      expect(location.searchParams.get('serviceRef')).toBe(refId)
      expect(location.searchParams.get('iykRef')).toBe(compat ? refId : null)
      // The ref the app reads answers with the chip's uid in the mode's form.
      const ref = await call(gw, { url: `/refs/${location.searchParams.get(compat ? 'iykRef' : 'serviceRef')}` })
      expect(ref.body.uid).toBe(compat ? DECIMAL : HEX)
      await gw.close()
    }
  })
})

test("compat=iyk leaves our own clients' routes alone: a station tap's answer keeps the hex uid the station reads", async () => {
  const { teamId } = await setup({ compat: 'iyk' })
  await seedSunProfile(gw, { teamId, name: 'aes', metaKey: META, fileKey: FILE })
  await seedSunChip(gw, { teamId, uid: HEX, profileName: 'aes' })
  const { token } = await gw.store.tx((tx) => createStation(tx, { teamId, name: 'desk', now: gw.clock.now }))
  const url = `https://tap.example${sunTapUrl({ metaKey: META, fileKey: FILE, uid: HEX, counter: 4 })}`
  const res = await call(gw, { method: 'POST', url: '/station/taps', headers: { 'x-station-token': token }, payload: { rfUid: HEX, url } })
  expect(res.status).toBe(200)
  expect(res.body.uid).toBe(HEX)
})

describe('always on: x-iyk-* headers and decimal UIDs on input', () => {
  for (const compat of ['iyk', undefined] as const) {
    test(`${compat ?? 'no setting'}: tagUIDs in decimal with x-iyk-api-key assign the chip stored in hex`, async () => {
      const { apiKey } = await setup(compat ? { compat } : {})
      const eventId = await day2Id()
      const res = await call(gw, { method: 'POST', url: '/events/assign/legacy', headers: { 'x-iyk-api-key': apiKey }, payload: { guestbookEventId: eventId, tagUIDs: [DECIMAL, '04:a1:00:00:00:00:02'] } })
      expect(res.status).toBe(200)
      expect(await assignedTo(eventId)).toEqual([HEX, OTHER].sort())
      // The spec's header still works, and the answer keeps the spec's shape without the setting.
      const ref = await call(gw, { url: `/refs/${await tapChip(gw, OTHER)}`, headers: { 'x-service-api-key': apiKey } })
      expect(ref.body.uid).toBe(compat ? BigInt(`0x${OTHER}`).toString() : OTHER)
      expect(ref.body.guestbookEvents.map((e: { tokenId: string }) => e.tokenId)).toEqual(['2'])
      if (!compat) {
        expect(ref.body).not.toHaveProperty('poapEvents')
        const missing = await call(gw, { url: '/refs/NoSuchRefAtAll' })
        expect(missing.body).not.toHaveProperty('statusCode')
        expect(missing.body.success).toBe(false)
        expect(missing.body.error).toMatch(/^[a-z_]+$/)
      }
    })
  }

  test('self-service transfer: tagUID in decimal is the chip in hex (same answer as the hex form); a bad one is a 400', async () => {
    const { apiKey } = await setup()
    const unknown = '04D0A0C0B0A001'
    const send = (tagUID: string) =>
      call(gw, { method: 'POST', url: '/phygitals/transfer/self-service', headers: { 'x-iyk-api-key': apiKey }, payload: { tagUID, recipient: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' } })
    const byHex = await send(unknown)
    const byDecimal = await send(BigInt(`0x${unknown}`).toString())
    expect(byHex.status).toBe(404)
    expect(byDecimal.status).toBe(byHex.status)
    expect(byDecimal.body).toEqual(byHex.body)
    expect(byDecimal.body.message).toContain(unknown)
    const bad = await send('1311252620644752x')
    expect(bad.status).toBe(400)
    expect(bad.body.errors.tagUID).toMatch(/decimal form/)
  })

  test('x-iyk-code is read as the OTP header: an unknown code is otp_invalid (not otp_missing)', async () => {
    await setup()
    const body = { recipient: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' }
    const none = await call(gw, { method: 'POST', url: '/phygitals/claim-registration/pullable', payload: body })
    expect(none.status).toBe(401)
    expect(none.body.error).toBe('otp_missing')
    const wrong = await call(gw, { method: 'POST', url: '/phygitals/claim-registration/pullable', headers: { 'x-iyk-code': 'not-a-code' }, payload: body })
    expect(wrong.status).toBe(401)
    expect(wrong.body.error).toBe('otp_invalid')
    // A real code through x-iyk-code passes the OTP check and reaches the domain rule (a chip with no token).
    const code: string = (await call(gw, { url: `/refs/${await tapChip(gw, OTHER)}` })).body.otp
    const real = await call(gw, { method: 'POST', url: '/phygitals/claim-registration/pullable', headers: { 'x-iyk-code': code }, payload: body })
    expect(real).toMatchObject({ status: 409, body: { error: 'chip_not_linked' } })
  })

  test('compat=iyk: a domain refusal reached through x-iyk-code is a hosted-shaped 409', async () => {
    await setup({ compat: 'iyk' })
    const code: string = (await call(gw, { url: `/refs/${await tapChip(gw, OTHER)}` })).body.otp
    const res = await call(gw, { method: 'POST', url: '/phygitals/claim-registration/pullable', headers: { 'x-iyk-code': code }, payload: { recipient: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' } })
    expect(res.status).toBe(409)
    expect(res.body).toMatchObject({ statusCode: 409, error: 'Conflict', code: 'chip_not_linked', success: false })
    expect(res.body.message).toMatch(/\S/)
  })

  test('UID boundary cases are a 400 naming the forms, and nothing is assigned', async () => {
    const { apiKey } = await setup()
    const eventId = await day2Id()
    const refused = [
      '04A893CAAA119', // 13 hex digits
      '04A893CAAA11901', // 15 characters with hex letters
      '01311252620644752', // decimal with a leading zero
      '72057594037927936', // 2^56: more than 7 bytes
      '720575940379279350', // 18 digits
      '-1311252620644752', // negative
      '1311252620644752.0', // not digits
      ' 1311252620644752', // spaces
      '', // empty
    ]
    for (const uid of refused) {
      const res = await call(gw, { method: 'POST', url: '/events/assign/legacy', headers: { 'x-iyk-api-key': apiKey }, payload: { guestbookEventId: eventId, tagUIDs: [uid] } })
      expect(res.status, uid).toBe(400)
      expect(res.body.errors['tagUIDs.0'], uid).toMatch(/14 hex digits .* or its decimal form/)
    }
    const number = await call(gw, { method: 'POST', url: '/events/assign/legacy', headers: { 'x-iyk-api-key': apiKey }, payload: { guestbookEventId: eventId, tagUIDs: [1311252620644752] } })
    expect(number.status).toBe(400)
    expect(await assignedTo(eventId)).toEqual([])
  })

  test('decimal boundaries read back: 2^56-1 is FFFFFFFFFFFFFF, 15 digits is a UID starting 00, 14 digits is always hex', async () => {
    const { apiKey } = await setup()
    const cases: Array<[string, string]> = [
      ['72057594037927935', 'FFFFFFFFFFFFFF'],
      ['100000000000000', '005AF3107A4000'],
      ['13112526206447', '13112526206447'],
    ]
    for (const [input, hex] of cases) {
      // Unknown to the team: the 404 names the chip in its canonical hex form.
      const res = await call(gw, { method: 'POST', url: '/events/assign/legacy', headers: { 'x-iyk-api-key': apiKey }, payload: { guestbookEventId: await day2Id(), tagUIDs: [input] } })
      expect(res.status, input).toBe(404)
      expect(res.body.message, input).toContain(hex)
    }
  })
})
