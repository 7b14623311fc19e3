import { Writable } from 'node:stream'
import type { InjectOptions } from 'fastify'
import { afterEach, describe, expect, test } from 'vitest'
import { redactUrl } from '../src/logger.js'
import { ALICE, type BackendGateway, call, CONTRACT, createBackendGateway, createTestGateway, GUESTBOOK, metadata, seedTeam, tapChip, type TestGateway } from './helpers/gateway.js'
import { seedDoor, staffClient } from './door/doorFixture.js'

let gw: TestGateway | BackendGateway
afterEach(async () => gw?.close())

const UID = { token: '04AB0000000001', guestbook: '04AB0000000002', bare: '04AB0000000003' }

function seed(g: TestGateway) {
  return seedTeam(g, {
    name: 'A',
    chips: Object.values(UID).map((uid) => ({ uid })),
    tokens: [{ chainId: 31337, contractAddress: CONTRACT, tokenId: '7', chips: [UID.token], metadata: metadata(), twoTapClaim: true }],
    guestbookContracts: [
      { name: 'GB', symbol: 'GB', chainId: 31337, address: GUESTBOOK, events: [{ name: 'E', tokenId: '1', metadata: metadata(), chips: [UID.guestbook] }] },
    ],
  })
}

/** A stream that keeps every log line pino writes to it. */
function logCapture() {
  const chunks: string[] = []
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      chunks.push(chunk.toString())
      callback()
    },
  })
  return { stream, text: () => chunks.join('') }
}

describe('logs', () => {
  test('never contain API keys, OTP codes or ref ids, even on error paths', async () => {
    const log = logCapture()
    // No chain keys: a 2-tap registration with an OTP then needs no nonce read (issue 24 §1), so the OTP's success path is logged too.
    gw = await createTestGateway({ config: { logLevel: 'info', chain: { embedded: false } }, logStream: log.stream })
    const { apiKey } = await seed(gw)
    const bogusKey = 'tg_bogus-key-that-must-not-be-logged'

    const secrets: string[] = [apiKey, bogusKey]
    const statuses: number[] = []
    const send = async (options: InjectOptions) => {
      const res = await call(gw, options)
      statuses.push(res.status)
      return res
    }

    // Refs: valid, then used, with and without a key and options.
    const tokenRef = await tapChip(gw, UID.token)
    const gbRef = await tapChip(gw, UID.guestbook)
    const bareRef = await tapChip(gw, UID.bare)
    const linksRef = await tapChip(gw, UID.token, { linksModule: true })
    const unknownRef = 'V1StGXR8_Z5jdHi6B-myT'
    secrets.push(tokenRef, gbRef, bareRef, linksRef, unknownRef)

    const valid = await send({ url: `/refs/${tokenRef}?includeMetadata=true` })
    expect(valid.body.isValidRef).toBe(true)
    const claimCode: string = valid.body.linkedToken.otp
    expect((await send({ url: `/refs/${tokenRef}` })).body.isValidRef).toBe(false)
    const guestbookCode: string = (await send({ url: `/refs/${gbRef}`, headers: { 'x-service-api-key': apiKey } })).body.guestbookEvents[0].otp
    const bareCode: string = (await send({ url: `/refs/${bareRef}` })).body.otp
    const linksCode: string = (await send({ url: `/refs/${linksRef}`, headers: { 'x-service-api-key': apiKey } })).body.linkedToken.otp
    const unknownCode = 'Uakgb_J5m9g-0JDMbcJqL'
    secrets.push(claimCode, guestbookCode, bareCode, linksCode, unknownCode)
    for (const code of [claimCode, guestbookCode, bareCode, linksCode]) expect(code).toMatch(/^[\w-]{21}$/)

    // OTP reads and a delete with the key.
    expect((await send({ url: `/otps/${claimCode}` })).status).toBe(200)
    expect((await send({ method: 'DELETE', url: `/otps/${bareCode}`, headers: { 'x-service-api-key': apiKey } })).status).toBe(200)

    // x-service-code on success and on each refusal.
    const spend = (code: string) =>
      send({ method: 'POST', url: '/phygitals/claim-registration/pullable', headers: { 'x-service-code': code }, payload: { recipient: ALICE } })
    expect((await spend(claimCode)).status).toBe(200)
    expect((await spend(claimCode)).body.error).toBe('otp_used')
    expect((await spend(guestbookCode)).body.error).toBe('otp_wrong_type')
    expect((await spend(unknownCode)).body.error).toBe('otp_invalid')

    // Error paths that are not 500s, each with a secret in the URL or a header.
    expect((await send({ url: `/refs/${unknownRef}` })).body.error).toBe('ref_not_found')
    expect((await send({ url: `/refs/${linksRef}`, headers: { 'x-service-api-key': bogusKey } })).body.error).toBe('invalid_api_key')
    expect((await send({ url: `/refs/${gbRef}?includeMetadata=maybe` })).body.error).toBe('validation_failed')
    expect((await send({ url: `/refs/${tokenRef}?includeOwner=true` })).body.error).toBe('chain_not_configured')
    expect((await send({ url: `/otps/${unknownCode}` })).body.error).toBe('otp_not_found')
    expect((await send({ url: `/otps/${bareCode}` })).body.error).toBe('otp_not_found')
    expect((await send({ method: 'DELETE', url: `/otps/${linksCode}`, headers: { 'x-service-api-key': bogusKey } })).body.error).toBe(
      'invalid_api_key',
    )
    expect((await send({ url: `/otps/${linksCode}/extra` })).body.error).toBe('route_not_found')
    // A percent-encoded or differently cased path must not slip past the redaction.
    expect((await send({ url: `/ref%73/${unknownRef}` })).body.error).toBe('ref_not_found')
    expect((await send({ url: `/%6Ftps/${linksCode}` })).status).toBe(200)
    expect((await send({ url: `/REFS/${gbRef}` })).body.error).toBe('route_not_found')
    expect((await send({ url: `/chip-groups`, headers: { 'x-service-api-key': bogusKey } })).body.error).toBe('invalid_api_key')
    expect(
      (
        await send({
          method: 'PATCH',
          url: '/phygitals/metadata',
          headers: { 'x-service-api-key': apiKey, 'x-service-code': linksCode },
          payload: { contractAddress: CONTRACT, chainId: 31337, tokenId: '7', metadata: '{"name":' },
        })
      ).body.error,
    ).toBe('validation_failed')

    // The hosted API's header names (issue 26) are credentials too.
    expect((await send({ url: '/chip-groups', headers: { 'x-iyk-api-key': apiKey } })).status).toBe(200)
    expect((await send({ method: 'POST', url: '/phygitals/claim-registration/pullable', headers: { 'x-iyk-code': linksCode }, payload: {} })).status).toBe(400)

    // Without chain keys nothing here answers 5xx (includeOwner is 400 chain_not_configured); nothing may have crashed.
    expect(statuses.filter((s) => s >= 500)).toEqual([])

    // Every request has been logged (bounded wait for the last onResponse line).
    const completed = () => log.text().split('\n').filter((line) => line.includes('"request completed"')).length
    for (let i = 0; i < 50 && completed() < statuses.length; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(completed()).toBe(statuses.length)

    const text = log.text()
    for (const secret of secrets) expect(text, 'a secret leaked into the logs').not.toContain(secret)
    expect(text).toContain('/refs/[redacted]')
    expect(text).toContain('/otps/[redacted]')
    expect(text).toContain('/otps/[redacted]/extra')
    expect(text).toContain('/phygitals/claim-registration/pullable')
    expect(text).not.toContain('unhandled error')
  })
})

// Issue 24 point 5: a guest search's term is a name, an email or a ticket code someone typed.
describe('logs of guest searches', () => {
  test('never contain the search term (q) of the API key\'s or the staff view\'s attendee search, however the name is spelled', async () => {
    const log = logCapture()
    const door = await createBackendGateway({ config: { logLevel: 'info' }, logStream: log.stream })
    gw = door
    const s = await seedDoor(door)
    const staff = await staffClient(door, s.kiosk)
    const terms = ['Lovelace', 'ada@example.org', 'T-ADA', 'Byte', 'bob@example.org', 'Cleo Park']
    const found = async (url: string, expected: number) => {
      const res = await staff.get(url)
      expect(res.status, url).toBe(expected)
      return res
    }
    expect((await found('/kiosk/staff/attendees?q=Lovelace', 200)).body.attendees).toHaveLength(1)
    expect((await found(`/kiosk/staff/attendees?q=${encodeURIComponent('ada@example.org')}`, 200)).body.attendees).toHaveLength(1)
    await found('/kiosk/staff/attendees?%71=T-ADA', 200)
    await found('/kiosk/staff/attendees?q=Cleo+Park', 200)
    // Refused ones too: a term too short, and two terms.
    await found('/kiosk/staff/attendees?q=B', 400)
    await found('/kiosk/staff/attendees?q=Byte&q=Lovelace', 400)
    const byKey = await call(door, { url: `/events/${s.eventId}/attendees?limit=5&q=${encodeURIComponent('bob@example.org')}`, headers: { 'x-service-api-key': s.apiKey } })
    expect(byKey.body).toMatchObject({ total: 1 })

    const completed = () => log.text().split('\n').filter((line) => line.includes('"request completed"')).length
    await expect.poll(completed).toBeGreaterThanOrEqual(8)
    const text = log.text()
    for (const term of terms) {
      expect(text, 'a search term leaked into the logs').not.toContain(term)
      expect(text, 'a search term leaked into the logs').not.toContain(encodeURIComponent(term))
    }
    expect(text).toContain('/kiosk/staff/attendees?q=[redacted]')
    expect(text).toContain('/kiosk/staff/attendees?q=[redacted]&q=[redacted]')
    expect(text).toContain(`/events/${s.eventId}/attendees?limit=5&q=[redacted]`)
  })
})

describe('logs under path tricks', () => {
  test('double slashes, encoded slashes, dot segments, trailing dots and case never put an OTP code, ref id or tap URL in the log', async () => {
    const log = logCapture()
    // No chain keys: a 2-tap registration with an OTP then needs no nonce read (issue 24 §1), so the OTP's success path is logged too.
    gw = await createTestGateway({ config: { logLevel: 'info', chain: { embedded: false } }, logStream: log.stream })
    // One made-up secret per trick, so a leak names the trick that let it through.
    const secret = (i: number) => `S3cr3t${String(i).padStart(2, '0')}xxxxxxxxxxxxx`
    const tricks = [
      (s: string) => `/otps//${s}`,
      (s: string) => `/refs//${s}?includeMetadata=true`,
      (s: string) => `//otps/${s}`,
      (s: string) => `/otps///${s}/`,
      (s: string) => `/otps%2F${s}`,
      (s: string) => `/refs%2f${s}`,
      (s: string) => `/otps/%2F${s}`,
      (s: string) => `/otps%252F${s}`,
      (s: string) => `/otps%5C${s}`,
      (s: string) => `/otps./${s}`,
      (s: string) => `/otps.../${s}`,
      (s: string) => `/otps/./${s}`,
      (s: string) => `/refs/x/../${s}`,
      (s: string) => `/x/../otps/${s}`,
      (s: string) => `/OTPS//${s}`,
      (s: string) => `/Refs%2F${s}`,
      (s: string) => `/%6f%74%70%73//${s}`,
      (s: string) => `/otps;x/${s}`,
      (s: string) => `//tap?e=${s}&c=94EED9EE65337086`,
      (s: string) => `/./tap?e=${s}`,
      (s: string) => `/TAP?e=${s}`,
      (s: string) => `/tap%3Fe=${s}`,
    ]
    const secrets = tricks.map((_, i) => secret(i))
    for (const [i, trick] of tricks.entries()) {
      const res = await gw.app.inject({ url: trick(secrets[i]!) })
      expect(res.statusCode, trick(secrets[i]!)).toBeLessThan(500)
    }
    const incoming = () => log.text().split('\n').filter((line) => line.includes('"incoming request"'))
    for (let i = 0; i < 50 && incoming().length < tricks.length; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(incoming()).toHaveLength(tricks.length)
    for (const [i, line] of incoming().entries()) {
      expect(line, `${tricks[i]!('…')} leaked into the log`).not.toContain(secrets[i])
      expect(line).toContain('[redacted]')
    }
    // The secrets appear nowhere else either (error lines, completion lines).
    for (const s of secrets) expect(log.text()).not.toContain(s)
  })
})

describe('rate limits (per client)', () => {
  const limited = { config: { logLevel: 'silent' as const, rateLimit: { max: 3, windowMs: 60_000 } } }

  test('the 4th GET /otps/:id in the window is 429 rate_limited', async () => {
    gw = await createTestGateway(limited)
    await seed(gw)
    const code: string = (await call(gw, { url: `/refs/${await tapChip(gw, UID.token)}` })).body.linkedToken.otp

    for (let i = 0; i < 3; i++) expect((await call(gw, { url: `/otps/${code}` })).status).toBe(200)
    const res = await call(gw, { url: `/otps/${code}` })
    expect(res.status).toBe(429)
    expect(res.body).toEqual({ success: false, error: 'rate_limited', message: expect.stringMatching(/^Too many requests/) })
    expect(res.headers['retry-after']).toBeDefined()

    // Another client is not affected.
    const other = await call(gw, { url: `/otps/${code}`, remoteAddress: '127.0.0.2' })
    expect(other.status).toBe(200)
  })

  test('the 4th GET /refs/:id in the window is 429 rate_limited and does not touch the ref', async () => {
    gw = await createTestGateway(limited)
    await seed(gw)
    const used = await tapChip(gw, UID.token)
    const statuses: number[] = []
    for (let i = 0; i < 3; i++) statuses.push((await call(gw, { url: `/refs/${used}` })).status)
    expect(statuses).toEqual([200, 200, 200])

    const fresh = await tapChip(gw, UID.token)
    const res = await call(gw, { url: `/refs/${fresh}` })
    expect(res.status).toBe(429)
    expect(res.body).toMatchObject({ success: false, error: 'rate_limited' })
    expect((await gw.store.refs.get(fresh))?.consumedAt).toBeNull()

    const other = await call(gw, { url: `/refs/${fresh}`, remoteAddress: '127.0.0.2' })
    expect(other.status).toBe(200)
    expect(other.body.isValidRef).toBe(true)
  })

  test('the window ends: after windowMs the client may query again', async () => {
    gw = await createTestGateway({ config: { logLevel: 'silent', rateLimit: { max: 1, windowMs: 200 } } })
    await seed(gw)
    const code: string = (await call(gw, { url: `/refs/${await tapChip(gw, UID.token)}` })).body.linkedToken.otp
    expect((await call(gw, { url: `/otps/${code}` })).status).toBe(200)
    expect((await call(gw, { url: `/otps/${code}` })).status).toBe(429)
    // Bounded wait: the limiter's own clock, not the app clock, decides the window.
    let status = 429
    for (let i = 0; i < 40 && status === 429; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      status = (await call(gw, { url: `/otps/${code}` })).status
    }
    expect(status).toBe(200)
  })
})

describe('redactUrl', () => {
  test('redacts everything below the tap path, and ref and OTP ids, but nothing else', () => {
    expect(redactUrl('/tap?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086')).toBe('/tap[redacted]')
    expect(redactUrl('/t/AB12/CD34', '/t')).toBe('/t[redacted]')
    expect(redactUrl('/tap')).toBe('/tap[redacted]')
    expect(redactUrl('/tapestry?x=1')).toBe('/tapestry?x=1')
    expect(redactUrl('/refs/abc?includeMetadata=true')).toBe('/refs/[redacted]?includeMetadata=true')
    expect(redactUrl('/ref%73/abc')).toBe('/refs/[redacted]')
    expect(redactUrl('/chip-groups')).toBe('/chip-groups')
    // GET /chips/find carries a tap URL's e and c (issue 26), unspent until the find runs.
    expect(redactUrl('/chips/find?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086&d=101')).toBe('/chips/find[redacted]')
    expect(redactUrl('//Chips/./find?e=EF96')).toBe('/chips/find[redacted]')
    expect(redactUrl('/chips%2Ffind?e=EF96')).toBe('/chips/find[redacted]')
    expect(redactUrl('/chips/finder?e=1')).toBe('/chips/finder?e=1')
    // A claim link's token, on the page and on its API calls.
    expect(redactUrl('/c/q5Jc0mK1y7sQ0cS4bWvZ2A')).toBe('/c/[redacted]')
    expect(redactUrl('/c/q5Jc0mK1y7sQ0cS4bWvZ2A/recipient')).toBe('/c/[redacted]/recipient')
    expect(redactUrl('/kiosk/claims/12/handoff')).toBe('/kiosk/claims/12/handoff')
    // A guest search's term, wherever the parser would read it as q.
    expect(redactUrl('/events/3/attendees?q=Ada%20Lovelace&limit=5')).toBe('/events/3/attendees?q=[redacted]&limit=5')
    expect(redactUrl('/kiosk/staff/attendees?%71=ada%40example.org')).toBe('/kiosk/staff/attendees?q=[redacted]')
    expect(redactUrl('/kiosk/staff/attendees?+Q+=Ada&q')).toBe('/kiosk/staff/attendees?+Q+=[redacted]&q=[redacted]')
    expect(redactUrl('/refs/abc?q=Ada#q')).toBe('/refs/[redacted]?q=[redacted]#q')
  })

  test('matches on the path as the router and other servers may read it: slashes collapsed or encoded, dot segments, trailing dots, any case', () => {
    expect(redactUrl('/otps//abc')).toBe('/otps/[redacted]')
    expect(redactUrl('/refs//abc?includeMetadata=true')).toBe('/refs/[redacted]?includeMetadata=true')
    expect(redactUrl('/otps%2Fabc')).toBe('/otps/[redacted]')
    expect(redactUrl('/otps%252Fabc')).toBe('/otps/[redacted]')
    expect(redactUrl('/otps./abc')).toBe('/otps./[redacted]')
    expect(redactUrl('/refs/x/../abc')).toBe('/refs/[redacted]/../[redacted]')
    expect(redactUrl('/OTPS/abc/extra')).toBe('/OTPS/[redacted]/extra')
    expect(redactUrl('//tap?e=abc')).toBe('/tap[redacted]')
    expect(redactUrl('/Tap/?e=abc')).toBe('/tap[redacted]')
    // Nothing else is rewritten.
    expect(redactUrl('/chip-groups?x=1')).toBe('/chip-groups?x=1')
    expect(redactUrl('/events/3/attendees?qq=1&limit=5')).toBe('/events/3/attendees?qq=1&limit=5')
    expect(redactUrl('/phygitals/claim-registration?recipient=0xab')).toBe('/phygitals/claim-registration?recipient=0xab')
  })
})
