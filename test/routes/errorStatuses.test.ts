import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type BackendGateway, createBackendGateway } from '../helpers/gateway.js'

// Issue 17: the OpenAPI document listed the same broad error statuses (400/401/403/404/409/429/503…) on
// nearly every operation. Each operation now names what it can answer (schemas/common.ts
// errorResponses, declared next to each route). Statuses a route answers that its operation does not
// list are caught by test/routes/contract.test.ts, which checks every answer it gets against the document.

type Operation = { parameters?: Array<{ in: string }>; requestBody?: unknown; responses: Record<string, unknown>; security?: Array<Record<string, string[]>> }
type Doc = { paths: Record<string, Record<string, Operation>> }

let gw: BackendGateway
let doc: Doc
// With a limit of 1, every rate-limited route refuses a client's next requests within the window.
beforeAll(async () => {
  gw = await createBackendGateway({ config: { rateLimit: { max: 1, windowMs: 60_000 } } })
  doc = JSON.parse((await gw.app.inject({ url: '/openapi.json' })).body) as Doc
})
afterAll(async () => gw?.close())

const operations = () => Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })))
const statusesOf = (method: string, path: string) => Object.keys(doc.paths[path]![method]!.responses).filter((s) => Number(s) >= 400).map(Number)
/** What any request can meet: not received in time, a bug, the gateway shutting down (or a chain, ENS, keys out of reach). */
const ANY = [408, 500, 503]

describe('each operation documents the error statuses it can answer, not a common list', () => {
  test.each([
    // Only the API key can be wrong: the README's "401".
    ['get', '/chip-groups', [401]],
    ['get', '/events/contracts', [401]],
    ['get', '/kiosk/staff/state', [401]],
    ['get', '/health', []],
    // Public and rate limited, a path parameter, a lookup.
    ['get', '/otps/{id}', [400, 404, 414, 429]],
    ['get', '/metadata/{chainId}/{contract}/{tokenId}', [400, 404, 414]],
    ['get', '/phygitals/chip', [400, 401, 404]],
    // A body: not JSON (400), too large (413), another media type (415).
    ['post', '/events/contracts', [400, 401, 413, 415]],
    ['post', '/kiosk/staff/end', [400, 401, 413, 415]],
    ['post', '/phygitals/transfer/pullable', [400, 401, 403, 409, 413, 415]],
    ['patch', '/chips/self-service', [400, 403, 404, 409, 413, 415, 429]],
  ] as const)('%s %s', (method, path, own) => {
    expect(statusesOf(method, path)).toEqual([...own, ...ANY].sort((a, b) => a - b))
  })

  test('every operation documents 408, 500 and 503; 401 exactly where it names a credential', () => {
    for (const { path, method, op } of operations()) {
      const statuses = statusesOf(method, path)
      for (const status of ANY) expect(statuses, `${method} ${path}`).toContain(status)
      const credential = (op.security ?? []).some((requirement) => Object.keys(requirement).length > 0)
      expect(statuses.includes(401), `${method} ${path}: 401 documented iff it takes a credential`).toBe(credential)
    }
  })

  test('input statuses follow the input: 400 with any, 414 with a path parameter, 413 and 415 with a body', () => {
    for (const { path, method, op } of operations()) {
      const statuses = statusesOf(method, path)
      const where = new Set((op.parameters ?? []).map((p) => p.in))
      const body = ['post', 'patch', 'put', 'delete'].includes(method)
      if (where.has('path') || where.has('query') || body) expect(statuses, `${method} ${path}`).toContain(400)
      expect(statuses.includes(414), `${method} ${path}: 414 iff a path parameter`).toBe(where.has('path'))
      // Fastify reads the body of these methods whether or not the route declares one.
      if (body) expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining([413, 415]))
      else expect(statuses, `${method} ${path}`).not.toContain(415)
    }
  })

  test('429 is documented exactly on the operations that are rate limited', async () => {
    const limited: string[] = []
    for (const { path, method } of operations()) {
      const url = path.replace(/\{[^}]+\}/g, '1')
      const send = () => gw.app.inject({ method: method.toUpperCase() as 'GET', url })
      // A few more than the largest limit (phones poll /c/*/status: ten times rateLimit.max).
      for (let i = 0; i < 12; i++)
        if ((await send()).statusCode === 429) {
          limited.push(`${method} ${path}`)
          break
        }
    }
    const documented = operations()
      .filter(({ path, method }) => statusesOf(method, path).includes(429))
      .map(({ path, method }) => `${method} ${path}`)
    expect(limited.length).toBeGreaterThan(3)
    expect(documented).toEqual(limited)
  })
})
