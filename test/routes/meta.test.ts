import { afterEach, describe, expect, test } from 'vitest'
import { version } from '../../src/version.js'
import { call, CONTRACT, createTestGateway, metadata, seedTeam, type TestGateway } from '../helpers/gateway.js'

let gw: TestGateway
afterEach(async () => gw?.close())

test('GET /health answers ok with the version, uptime and chains', async () => {
  gw = await createTestGateway()
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
  gw = await createTestGateway()
  gw.store.close()
  const res = await call(gw, { url: '/health' })
  expect(res.status).toBe(500)
  expect(res.body).toEqual({ success: false, error: 'internal_error', message: 'Internal server error' })
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
    gw = await createTestGateway()
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
})

test('GET /docs serves the HTML UI and its assets', async () => {
  gw = await createTestGateway()
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
    gw = await createTestGateway()
    const { apiKey, teamId } = seedTeam(gw, {
      name: 'A',
      guestbookContracts: [{ name: 'Guests', symbol: 'GST', chainId: 31337 }],
    })
    return { apiKey, contractId: gw.store.guestbook.listContracts(teamId)[0]!.id }
  }

  test('an unknown route is 404 route_not_found JSON', async () => {
    gw = await createTestGateway()
    const res = await call(gw, { url: '/nope?secret=1' })
    expect(res.status).toBe(404)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    expect(res.body).toEqual({ success: false, error: 'route_not_found', message: 'No route GET /nope' })
    const wrongMethod = await call(gw, { method: 'PUT', url: '/health' })
    expect(wrongMethod.status).toBe(404)
    expect(wrongMethod.body.error).toBe('route_not_found')
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
