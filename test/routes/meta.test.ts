import { afterEach, describe, expect, test } from 'vitest'
import { version } from '../../src/version.js'
import { type BackendGateway, call, CONTRACT, createBackendGateway, metadata, seedTeam } from '../helpers/gateway.js'

let gw: BackendGateway
afterEach(async () => gw?.close())

test('GET /health answers ok with the version, uptime and chains', async () => {
  gw = await createBackendGateway()
  const res = await call(gw, { url: '/health' })
  expect(res.status).toBe(200)
  // A test gateway has the embedded chain's keys but no running chain (or relayer).
  expect(res.body).toEqual({
    status: 'ok',
    version,
    uptimeSeconds: expect.any(Number),
    chains: [],
  })
  expect(res.body.version).toMatch(/^\d+\.\d+\.\d+/)
  expect(res.body.uptimeSeconds).toBeGreaterThanOrEqual(0)
})

test('GET /health fails once the database is gone', async () => {
  gw = await createBackendGateway()
  await gw.store.close()
  const res = await call(gw, { url: '/health' })
  // SQLite's closed handle is a plain error; PostgreSQL's ended client is a lost connection, which
  // src/plugins/errorHandler.ts answers as a database outage.
  const [status, error, message] =
    gw.store.backend === 'sqlite' ? [500, 'internal_error', 'Internal server error'] : [503, 'database_unavailable', 'The database cannot be reached; retry shortly']
  expect(res.status).toBe(status)
  expect(res.body).toEqual({ success: false, error, message })
})

describe('OpenAPI', () => {
  type Operation = { requestBody?: { content: Record<string, { schema: { required?: string[]; properties?: Record<string, unknown> } }> }; parameters?: { name: string; in: string; required?: boolean }[] }
  type Doc = { openapi: string; info: { title: string }; paths: Record<string, Record<string, Operation>> }

  const routes: [string, string][] = [
    ['get', '/refs/{id}'],
    ['get', '/otps/{id}'],
    ['delete', '/otps/{id}'],
    ['get', '/phygitals/chip'],
    ['get', '/phygitals/claim-registration'],
    ['post', '/phygitals/claim-registration'],
    ['delete', '/phygitals/claim-registration'],
    ['post', '/phygitals/claim-registration/pullable'],
    ['patch', '/phygitals/metadata'],
    ['get', '/chip-groups'],
    ['get', '/events/contracts'],
    ['post', '/events'],
    ['get', '/events'],
    ['patch', '/events/metadata'],
    ['post', '/events/assign/legacy'],
    ['get', '/health'],
  ]

  async function doc(): Promise<Doc> {
    gw = await createBackendGateway()
    const res = await call(gw, { url: '/openapi.json' })
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    return res.body as Doc
  }

  test('is OpenAPI 3 and lists every route of the API', async () => {
    const d = await doc()
    expect(d.openapi).toMatch(/^3\./)
    expect(d.info.title).toBeTruthy()
    for (const [method, path] of routes) expect(d.paths[path]?.[method], `${method.toUpperCase()} ${path}`).toBeDefined()
    // Nothing internal leaks into the document.
    expect(Object.keys(d.paths)).not.toContain('/openapi.json')
    expect(Object.keys(d.paths).some((p) => p.startsWith('/docs'))).toBe(false)
  })

  test('request schemas come from the zod schemas', async () => {
    const d = await doc()
    const body = (method: string, path: string) => d.paths[path]![method]!.requestBody!.content['application/json']!.schema

    const metadataBody = body('patch', '/phygitals/metadata')
    expect([...metadataBody.required!].sort()).toEqual(['chainId', 'contractAddress', 'metadata', 'tokenId'])
    expect(metadataBody.properties!.metadata).toMatchObject({ type: 'string' })

    expect([...body('post', '/phygitals/claim-registration').required!].sort()).toEqual(['chainId', 'contractAddress', 'recipient', 'tokenId'])
    expect(body('post', '/phygitals/claim-registration/pullable').required).toEqual(['recipient'])
    expect([...body('post', '/events').required!].sort()).toEqual(['contractId', 'metadata', 'name', 'tokenId'])
    expect(body('patch', '/events/metadata').required).toEqual(['metadata'])
    expect([...body('post', '/events/assign/legacy').required!].sort()).toEqual(['guestbookEventId', 'tagUIDs'])

    const chipQuery = d.paths['/phygitals/chip']!.get!.parameters!.filter((p) => p.in === 'query')
    expect(chipQuery.map((p) => [p.name, p.required]).sort()).toEqual([
      ['chainId', true],
      ['contractAddress', true],
      ['tokenId', true],
    ])
    const refParams = d.paths['/refs/{id}']!.get!.parameters!
    expect(refParams).toContainEqual(expect.objectContaining({ in: 'path', name: 'id', required: true }))
    expect(refParams).toContainEqual(expect.objectContaining({ in: 'query', name: 'includeMetadata', required: false }))
  })

  test('auth is a security requirement per operation, not an optional header', async () => {
    const d = (await doc()) as Doc & { components: { securitySchemes: Record<string, unknown> } }
    expect(d.components.securitySchemes).toEqual({
      apiKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'x-service-api-key' }),
      otp: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'x-service-code' }),
      station: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'x-station-token' }),
      kiosk: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'x-kiosk-token' }),
      staffSession: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'x-staff-session' }),
    })
    const security = (method: string, path: string) => (d.paths[path]![method] as { security?: unknown }).security
    expect(security('get', '/chip-groups')).toEqual([{ apiKey: [] }])
    expect(security('post', '/events/mint')).toEqual([{ apiKey: [] }])
    expect(security('post', '/phygitals/transfer/pullable')).toEqual([{ otp: [] }])
    expect(security('get', '/phygitals/transfer-signature/pullable')).toEqual([{ otp: [] }])
    expect(security('post', '/station/taps')).toEqual([{ station: [] }])
    expect(security('post', '/kiosk/staff/session')).toEqual([{ kiosk: [] }])
    expect(security('post', '/kiosk/staff/undo')).toEqual([{ kiosk: [], staffSession: [] }])
    // A key is optional on GET /refs/:id (it unlocks Links Module refs): {} is "no credentials".
    expect(security('get', '/refs/{id}')).toEqual([{}, { apiKey: [] }])
    expect(security('get', '/otps/{id}')).toEqual([])
    expect(security('patch', '/chips/self-service')).toEqual([])
    for (const [path, ops] of Object.entries(d.paths))
      for (const [method, op] of Object.entries(ops)) {
        expect((op as { security?: unknown }).security, `${method} ${path} states its auth`).toBeDefined()
        const headers = (op.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name)
        expect(headers, `${method} ${path}`).toEqual([])
      }
  })

  test("request schemas carry the server's rules: patterns, number-or-digit-string ids, either/or bodies", async () => {
    type S = Record<string, any>
    const d = await doc()
    const body = (method: string, path: string): S => d.paths[path]![method]!.requestBody!.content['application/json']!.schema as S
    const claim = body('post', '/phygitals/claim-registration').properties
    expect(new RegExp(claim.contractAddress.pattern).test('0x5FbDB2315678afecb367f032d93F642f64180aa3')).toBe(true)
    expect(new RegExp(claim.contractAddress.pattern).test('0x5FbDB2315678afecb367f032d93F642f64180aa')).toBe(false)
    // The recipient: an address or an ENS name, as resolveRecipient accepts.
    for (const ok of ['0x70997970C51812dc3A010C7d01b50e0d17dc79C8', 'vitalik.eth', 'a-b.c.eth']) expect(new RegExp(claim.recipient.pattern).test(ok), ok).toBe(true)
    for (const bad of ['0x1234', 'not an address', 'eth', '0xab.eth']) expect(new RegExp(claim.recipient.pattern).test(bad), bad).toBe(false)
    // chainId: a JSON number or a digit string, both positive integers.
    expect(claim.chainId.anyOf).toEqual([
      expect.objectContaining({ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
      expect.objectContaining({ type: 'string', pattern: expect.any(String) }),
    ])
    const intPattern = new RegExp(claim.chainId.anyOf[1].pattern)
    for (const ok of ['1', '31337', String(Number.MAX_SAFE_INTEGER)]) expect(intPattern.test(ok), ok).toBe(true)
    for (const bad of ['0', '-1', '1.5', String(Number.MAX_SAFE_INTEGER + 1), 'x']) expect(intPattern.test(bad), bad).toBe(false)
    // tokenId: a decimal uint256 string, or a JSON integer.
    const [tokenString, tokenNumber] = claim.tokenId.anyOf
    expect(tokenNumber).toMatchObject({ type: 'integer', minimum: 0 })
    const uint256 = new RegExp(tokenString.pattern)
    const max = (2n ** 256n - 1n).toString()
    for (const ok of ['0', '1', max, (2n ** 256n - 2n).toString(), '9'.repeat(77)]) expect(uint256.test(ok), ok).toBe(true)
    for (const bad of [(2n ** 256n).toString(), '9'.repeat(78), '-1', '1e3', '0x10', '']) expect(uint256.test(bad), bad).toBe(false)
    // Chip UIDs: 14 hex digits, ":" separators allowed.
    const uid = new RegExp(body('post', '/events/assign/legacy').properties.tagUIDs.items.pattern)
    for (const ok of ['04DE5F1EACC040', '04de5f1eacc040', '04:DE:5F:1E:AC:C0:40']) expect(uid.test(ok), ok).toBe(true)
    for (const bad of ['04DE5F1EACC04', '04DE5F1EACC040AA', 'ZZDE5F1EACC040']) expect(uid.test(bad), bad).toBe(false)
    // Either/or bodies: an event by id or by its token; a guestbook contract by id or by address and chain.
    const byEvent = [{ required: ['eventId'] }, { required: ['tokenId', 'contractAddress', 'chainId'] }]
    expect(body('post', '/events/mint').anyOf).toEqual(byEvent)
    expect(body('patch', '/events/metadata').anyOf).toEqual(byEvent)
    expect(body('post', '/events/toggle-pause-state').anyOf).toEqual([{ required: ['contractId'] }, { required: ['contractAddress', 'chainId'] }])
  })

  test('components hold no duplicate or unused schemas', async () => {
    const d = (await doc()) as Doc & { components: { schemas: Record<string, unknown> } }
    const text = JSON.stringify(d.paths) + JSON.stringify(d.components.schemas)
    const names = Object.keys(d.components.schemas)
    expect(names.filter((n) => n.endsWith('Input'))).toEqual([])
    for (const name of names) expect(text, name).toContain(`"#/components/schemas/${name}"`)
  })
})

test('GET /docs serves the HTML UI and its assets', async () => {
  gw = await createBackendGateway()
  let url = '/docs'
  let res = await gw.app.inject({ url })
  for (let hops = 0; res.statusCode >= 300 && res.statusCode < 400 && hops < 5; hops++) {
    url = new URL(String(res.headers.location), `http://localhost${url}`).pathname
    res = await gw.app.inject({ url })
  }
  expect(res.statusCode).toBe(200)
  expect(res.headers['content-type']).toMatch(/^text\/html/)
  expect(res.body).toMatch(/<html/i)
  const assets = [...res.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => new URL(m[1]!, `http://localhost${url}`).pathname)
  expect(assets.length).toBeGreaterThan(0)
  for (const asset of assets) expect((await gw.app.inject({ url: asset })).statusCode, asset).toBe(200)
})

describe('transport errors', () => {
  async function withKey() {
    gw = await createBackendGateway()
    const { apiKey, teamId } = await seedTeam(gw, {
      name: 'A',
      guestbookContracts: [{ name: 'Guests', symbol: 'GST', chainId: 31337 }],
    })
    return { apiKey, contractId: (await gw.store.guestbook.listContracts(teamId))[0]!.id }
  }

  test('an unknown route is 404 route_not_found JSON', async () => {
    gw = await createBackendGateway()
    const res = await call(gw, { url: '/nope?secret=1' })
    expect(res.status).toBe(404)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    expect(res.body).toEqual({ success: false, error: 'route_not_found', message: 'No route GET /nope' })
  })

  test('a wrong method on a known path is 405 method_not_allowed with an Allow header', async () => {
    gw = await createBackendGateway()
    const put = await call(gw, { method: 'PUT', url: '/health' })
    expect(put.status).toBe(405)
    expect(put.headers.allow).toBe('GET, HEAD')
    expect(put.body).toEqual({ success: false, error: 'method_not_allowed', message: 'PUT is not allowed on /health; use GET or HEAD' })
    // Parametric paths too, and every method the path has is listed (HEAD is not routed on the tap path).
    const post = await call(gw, { method: 'POST', url: '/otps/abc?x=1' })
    expect(post.status).toBe(405)
    expect(post.headers.allow).toBe('DELETE, GET, HEAD')
    const tap = await call(gw, { method: 'HEAD', url: '/tap?e=00' })
    expect(tap.status).toBe(405)
    expect(tap.headers.allow).toBe('GET')
    // A path no method serves stays 404.
    expect((await call(gw, { method: 'DELETE', url: '/nope' })).status).toBe(404)
  })

  test("a path parameter over 100 characters is 414 uri_too_long in the API's error shape", async () => {
    gw = await createBackendGateway()
    for (const url of [`/refs/${'a'.repeat(101)}`, `/metadata/31337/${CONTRACT}/${'1'.repeat(101)}`]) {
      const res = await call(gw, { url })
      expect(res.status).toBe(414)
      expect(res.headers['content-type']).toMatch(/^application\/json/)
      expect(res.body).toEqual({ success: false, error: 'uri_too_long', message: 'A path parameter is longer than 100 characters' })
    }
  })

  test("a malformed percent-encoding in the path is 400 bad_url in the API's error shape", async () => {
    gw = await createBackendGateway()
    const res = await call(gw, { url: '/refs/%zz' })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ success: false, error: 'bad_url', message: 'The URL path is not valid percent-encoding' })
  })

  test('malformed JSON is 400 invalid_json', async () => {
    const { apiKey } = await withKey()
    const res = await call(gw, {
      method: 'POST',
      url: '/events',
      headers: { 'x-service-api-key': apiKey, 'content-type': 'application/json' },
      payload: '{"name": "x",',
    })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ success: false, error: 'invalid_json' })
  })

  test('a text/plain body is 415 unsupported_media_type, and nothing is created', async () => {
    const { apiKey, contractId } = await withKey()
    const valid = JSON.stringify({ name: 'E', tokenId: '1', contractId, metadata: JSON.stringify(metadata()) })
    const res = await call(gw, {
      method: 'POST',
      url: '/events',
      headers: { 'x-service-api-key': apiKey, 'content-type': 'text/plain' },
      payload: valid,
    })
    expect(res.status).toBe(415)
    expect(res.body).toMatchObject({ success: false, error: 'unsupported_media_type' })
    expect((await call(gw, { url: '/events', headers: { 'x-service-api-key': apiKey } })).body).toEqual([])

    const patch = await call(gw, {
      method: 'PATCH',
      url: '/phygitals/metadata',
      headers: { 'x-service-api-key': apiKey, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `contractAddress=${CONTRACT}`,
    })
    expect(patch.status).toBe(415)
    expect(patch.body.error).toBe('unsupported_media_type')

    // The same body as JSON is accepted: the 415 was about the content type only.
    const ok = await call(gw, {
      method: 'POST',
      url: '/events',
      headers: { 'x-service-api-key': apiKey, 'content-type': 'application/json' },
      payload: valid,
    })
    expect(ok.status).toBe(200)
  })

  test('a body over 1 MiB is 413 body_too_large', async () => {
    const { apiKey } = await withKey()
    const res = await call(gw, {
      method: 'POST',
      url: '/events',
      headers: { 'x-service-api-key': apiKey, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(1024 * 1024) }),
    })
    expect(res.status).toBe(413)
    expect(res.body).toMatchObject({ success: false, error: 'body_too_large' })
  })

  test('an empty body on POST /events is 400', async () => {
    const { apiKey } = await withKey()
    const emptyJson = await call(gw, {
      method: 'POST',
      url: '/events',
      headers: { 'x-service-api-key': apiKey, 'content-type': 'application/json' },
      payload: '',
    })
    expect(emptyJson.status).toBe(400)
    expect(emptyJson.body).toMatchObject({ success: false, error: 'invalid_json' })

    const noBody = await call(gw, { method: 'POST', url: '/events', headers: { 'x-service-api-key': apiKey } })
    expect(noBody.status).toBe(400)
    expect(noBody.body).toMatchObject({ success: false, error: 'validation_failed', errors: { body: expect.any(String) } })

    const emptyObject = await call(gw, { method: 'POST', url: '/events', headers: { 'x-service-api-key': apiKey }, payload: {} })
    expect(emptyObject.status).toBe(400)
    expect(Object.keys(emptyObject.body.errors).sort()).toEqual(['contractId', 'metadata', 'name', 'tokenId'])
  })

  test('the API key is checked before the body is parsed', async () => {
    await withKey()
    const res = await call(gw, { method: 'POST', url: '/events', headers: { 'content-type': 'application/json' }, payload: '{' })
    expect(res.status).toBe(401)
    expect(res.body.error).toBe('api_key_missing')
  })
})
