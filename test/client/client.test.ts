/*
 * tapgate/client against a real gateway on loopback: real HTTP through fetch, so what the client puts
 * on the wire (query strings, JSON bodies, the API key header) is what the gateway's own parsers read.
 * The last block checks the wire itself with a recording fetch, and the answers a gateway's routes
 * cannot be made to give here (a proxy's HTML page).
 */
import { afterEach, describe, expect, test } from 'vitest'
import { createClient, TapgateApiError, type ClientOptions } from '../../src/client/index.js'
import { ALICE, CONTRACT, createTestGateway, metadata, seedTeam, tapChip, type TestGateway } from '../helpers/gateway.js'

let gw: TestGateway
afterEach(async () => gw?.close())

const CHAIN = 31337
const BARE = '04C10000000001'
const TOKEN_CHIP = '04C10000000002'

/** A gateway listening on 127.0.0.1, seeded with team A (a bare chip, a 2-tap token, two chip groups). */
async function startGateway(config: Parameters<typeof createTestGateway>[0] = {}) {
  gw = await createTestGateway(config)
  const a = await seedTeam(gw, {
    name: 'A',
    chipGroups: [{ name: 'Jackets' }, { name: 'Shoes' }],
    chips: [{ uid: BARE }, { uid: TOKEN_CHIP }],
    tokens: [{ contractAddress: CONTRACT, chainId: CHAIN, tokenId: '7', chips: [TOKEN_CHIP], metadata: metadata(), twoTapClaim: true }],
  })
  const baseUrl = await gw.app.listen({ host: '127.0.0.1', port: 0 })
  return { baseUrl, apiKey: a.apiKey }
}

/** The rejection of a request, which must be a TapgateApiError. */
async function apiError(pending: Promise<unknown>): Promise<TapgateApiError> {
  const error = await pending.then(
    () => undefined,
    (reason: unknown) => reason,
  )
  expect(error).toBeInstanceOf(TapgateApiError)
  return error as TapgateApiError
}

describe('over HTTP', () => {
  test('a ref read after a tap: the first query is valid and carries the OTP, the second not', async () => {
    const { baseUrl } = await startGateway()
    const api = createClient({ baseUrl })
    const refId = await tapChip(gw, BARE)

    const first = await api.request('GET /refs/{id}', { params: { id: refId } })
    expect(first).toMatchObject({ uid: BARE, isValidRef: true, proofEvents: [], guestbookEvents: [] })
    expect(first.otp).toEqual(expect.any(String))

    // The OTP it gave is readable as an OTP of its own.
    const otp = await api.request('GET /otps/{id}', { params: { id: first.otp! } })
    expect(otp).toMatchObject({ otp: first.otp, isExpired: false, type: 'PHYGITAL_CLAIM' })

    const second = await api.request('GET /refs/{id}', { params: { id: refId } })
    expect(second.isValidRef).toBe(false)
    expect(second.otp).toBeUndefined()
  })

  test('query values go as strings: a boolean flag and a token key with a numeric chain id', async () => {
    const { baseUrl } = await startGateway()
    const api = createClient({ baseUrl })
    const refId = await tapChip(gw, TOKEN_CHIP)
    const ref = await api.request('GET /refs/{id}', { params: { id: refId }, query: { includeMetadata: 'true' } })
    expect(ref.linkedToken).toMatchObject({ contractAddress: CONTRACT, chainId: CHAIN, tokenId: '7', otp: expect.any(String), metadata: metadata() })

    const status = await api.request('GET /phygitals/claim-registration', { query: { contractAddress: CONTRACT, chainId: CHAIN, tokenId: 7, recipient: ALICE } })
    expect(status).toEqual({
      recipient: ALICE,
      linkedToken: { contractAddress: CONTRACT, chainId: String(CHAIN), tokenId: '7' },
      isRequired: true,
      isValid: false,
      allowedAt: null,
      expiresAt: null,
      createdAt: null,
    })
  })

  test("a listed resource with the API key: the team's chip groups", async () => {
    const { baseUrl, apiKey } = await startGateway()
    const groups = await createClient({ baseUrl, apiKey }).request('GET /chip-groups')
    expect(groups.map((group) => group.name)).toEqual(['Jackets', 'Shoes'])
    expect(groups.every((group) => typeof group.id === 'number' && group.createdAt === new Date(gw.clock.now).toISOString())).toBe(true)
  })

  test('401 without the key, and with a wrong one, as TapgateApiError with status and code', async () => {
    const { baseUrl, apiKey } = await startGateway()
    const missing = await apiError(createClient({ baseUrl }).request('GET /chip-groups'))
    expect(missing).toMatchObject({ name: 'TapgateApiError', status: 401, code: 'api_key_missing', operation: 'GET /chip-groups' })
    expect(missing.message).toMatch(/x-service-api-key/)
    expect(missing.body).toMatchObject({ success: false, error: 'api_key_missing' })

    const wrong = await apiError(createClient({ baseUrl, apiKey: `${apiKey}x` }).request('GET /chip-groups'))
    expect(wrong).toMatchObject({ status: 401, code: 'invalid_api_key' })
  })

  test('400 on bad input: the gateway validates, and its field errors come with the error', async () => {
    const { baseUrl, apiKey } = await startGateway()
    const api = createClient({ baseUrl, apiKey })
    const error = await apiError(api.request('PATCH /chips', { body: { tagUIDs: ['not-a-uid'], updates: { redirectUrl: 'https://shop.example/' } } }))
    expect(error).toMatchObject({ status: 400, code: 'validation_failed' })
    expect(error.body).toMatchObject({ success: false, error: 'validation_failed', errors: { 'tagUIDs.0': expect.any(String) } })

    const badQuery = await apiError(api.request('GET /phygitals/chip', { query: { contractAddress: 'nope', chainId: CHAIN, tokenId: '7' } }))
    expect(badQuery).toMatchObject({ status: 400, code: 'validation_failed' })
  })

  test('a POST with a JSON body: a 2-tap claim registration, then its status', async () => {
    const { baseUrl, apiKey } = await startGateway()
    const api = createClient({ baseUrl, apiKey })
    const created = await api.request('POST /phygitals/claim-registration', {
      body: { contractAddress: CONTRACT.toLowerCase(), chainId: String(CHAIN), tokenId: '7', recipient: ALICE.toLowerCase() },
    })
    const now = new Date(gw.clock.now).toISOString()
    expect(created).toMatchObject({ recipient: ALICE, linkedToken: { contractAddress: CONTRACT, chainId: String(CHAIN), tokenId: '7' }, createdAt: now })

    const again = await apiError(api.request('POST /phygitals/claim-registration', { body: { contractAddress: CONTRACT, chainId: CHAIN, tokenId: '7', recipient: ALICE } }))
    expect(again).toMatchObject({ status: 409, code: 'claim_registration_exists' })

    const removed = await api.request('DELETE /phygitals/claim-registration', { body: { contractAddress: CONTRACT, chainId: CHAIN, tokenId: '7', recipient: ALICE } })
    expect(removed).toEqual({ success: true })
  })

  test("with compat=iyk the error's code is still tapgate's (the body's `code`; `error` is the reason phrase)", async () => {
    const { baseUrl } = await startGateway({ config: { compat: 'iyk' } })
    const error = await apiError(createClient({ baseUrl }).request('GET /chip-groups'))
    expect(error).toMatchObject({ status: 401, code: 'api_key_missing' })
    expect(error.body).toMatchObject({ error: 'Unauthorized', code: 'api_key_missing' })
  })
})

/** A fetch that records what it is given and answers `answer`. */
function recordingFetch(answer: () => Response) {
  const sent: Array<{ url: string; method: string; headers: Headers; body: string | null }> = []
  const fetch: NonNullable<ClientOptions['fetch']> = async (input, init) => {
    sent.push({ url: String(input), method: init?.method ?? 'GET', headers: new Headers(init?.headers), body: typeof init?.body === 'string' ? init.body : null })
    return answer()
  }
  return { fetch, sent }
}

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8' } })

describe('on the wire', () => {
  test('the key header, a JSON body with its content type, the base URL prefix, and path parameters encoded', async () => {
    const { fetch, sent } = recordingFetch(() => json(200, { success: true, initialTxHash: '0x1' }))
    const api = createClient({ baseUrl: 'https://gw.example/tapgate/', apiKey: 'tg_key', fetch, headers: { 'x-trace': 'a' } })
    await api.request('POST /phygitals/transfer', { body: { contractAddress: CONTRACT, chainId: CHAIN, tokenId: '7', recipient: ALICE } })
    await api.request('GET /items/{id}/chips', { params: { id: 'a/b c' }, headers: { 'x-trace': 'b' } })

    expect(sent[0]).toMatchObject({ url: 'https://gw.example/tapgate/phygitals/transfer', method: 'POST' })
    expect(JSON.parse(sent[0]!.body!)).toEqual({ contractAddress: CONTRACT, chainId: CHAIN, tokenId: '7', recipient: ALICE })
    expect(Object.fromEntries(sent[0]!.headers)).toEqual({
      accept: 'application/json',
      'content-type': 'application/json',
      'x-service-api-key': 'tg_key',
      'x-trace': 'a',
    })
    const get = sent.at(-1)!
    expect(get).toMatchObject({ url: 'https://gw.example/tapgate/items/a%2Fb%20c/chips', method: 'GET', body: null })
    expect(get.headers.get('content-type')).toBeNull()
    expect(get.headers.get('x-trace')).toBe('b')
  })

  test('query values as strings; absent ones left out; no query string when none is left', async () => {
    const { fetch, sent } = recordingFetch(() => json(200, {}))
    const api = createClient({ baseUrl: 'http://127.0.0.1:1', fetch })
    await api.request('GET /phygitals/chip', { query: { contractAddress: CONTRACT, chainId: CHAIN, tokenId: 7 } })
    await api.request('GET /events/{eventId}/attendees', { params: { eventId: 3 }, query: { q: 'Ada & co', limit: '10', offset: undefined } })
    await api.request('GET /events', { query: {} })
    expect(sent.map((request) => request.url)).toEqual([
      `http://127.0.0.1:1/phygitals/chip?contractAddress=${CONTRACT}&chainId=31337&tokenId=7`,
      'http://127.0.0.1:1/events/3/attendees?q=Ada+%26+co&limit=10',
      'http://127.0.0.1:1/events',
    ])
  })

  test('a missing path parameter is refused before anything is sent', async () => {
    const { fetch, sent } = recordingFetch(() => json(200, {}))
    const api = createClient({ baseUrl: 'http://127.0.0.1:1', fetch })
    await expect(api.request('GET /refs/{id}', { params: { id: '' } })).rejects.toThrow(/GET \/refs\/\{id\}: the path parameter id is missing/)
    await expect(api.request('GET /refs/{id}', { params: {} as { id: string } })).rejects.toThrow(TypeError)
    expect(sent).toEqual([])
  })

  test("answers that are not the API's JSON: a proxy's HTML page, and a 2xx that is not JSON", async () => {
    const html = createClient({ baseUrl: 'http://127.0.0.1:1', fetch: recordingFetch(() => new Response('<h1>Bad gateway</h1>', { status: 502, statusText: 'Bad Gateway', headers: { 'content-type': 'text/html' } })).fetch })
    const proxied = await apiError(html.request('GET /health'))
    expect(proxied).toMatchObject({ status: 502, code: 'http_502', message: 'GET /health answered 502 Bad Gateway', body: '<h1>Bad gateway</h1>' })

    const text = createClient({ baseUrl: 'http://127.0.0.1:1', fetch: recordingFetch(() => new Response('ok', { status: 200, headers: { 'content-type': 'text/plain' } })).fetch })
    expect(await apiError(text.request('GET /health'))).toMatchObject({ status: 200, code: 'not_json', body: 'ok' })
  })
})
