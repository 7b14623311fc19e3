import { afterEach, expect, test } from 'vitest'
import { revokeApiKey } from '../../src/auth/apiKeys.js'
import { type BackendGateway, call, createBackendGateway, seedTeam } from '../helpers/gateway.js'

let gw: BackendGateway
afterEach(async () => gw?.close())

const iso = (ms: number) => new Date(ms).toISOString()

async function setup() {
  gw = await createBackendGateway()
  const start = gw.clock.now
  const a = await seedTeam(gw, {
    name: 'A',
    chipGroups: [{ name: 'Jackets' }, { name: 'Shoes' }],
    // A group named only by a chip is created too.
    chips: [{ uid: '04AABBCCDDEE01', group: 'Hats' }],
  })
  gw.clock.now += 1000
  const b = await seedTeam(gw, { name: 'B', chipGroups: [{ name: 'Theirs' }] })
  const c = await seedTeam(gw, { name: 'C' })
  return { a, b, c, start }
}

test("GET /chip-groups lists the caller's groups only", async () => {
  const { a, b, c, start } = await setup()
  const res = await call(gw, { url: '/chip-groups', headers: { 'x-service-api-key': a.apiKey } })
  expect(res.status).toBe(200)
  expect(res.body).toEqual([
    { id: expect.any(Number), name: 'Jackets', createdAt: iso(start) },
    { id: expect.any(Number), name: 'Shoes', createdAt: iso(start) },
    { id: expect.any(Number), name: 'Hats', createdAt: iso(start) },
  ])
  expect(new Set(res.body.map((g: { id: number }) => g.id)).size).toBe(3)

  const theirs = await call(gw, { url: '/chip-groups', headers: { 'x-service-api-key': b.apiKey } })
  expect(theirs.body).toEqual([{ id: expect.any(Number), name: 'Theirs', createdAt: iso(start + 1000) }])
  expect(res.body.map((g: { id: number }) => g.id)).not.toContain(theirs.body[0].id)

  const none = await call(gw, { url: '/chip-groups', headers: { 'x-service-api-key': c.apiKey } })
  expect(none.status).toBe(200)
  expect(none.body).toEqual([])
})

test('401 api_key_missing without a key (or an empty one)', async () => {
  await setup()
  for (const headers of [{}, { 'x-service-api-key': '' }]) {
    const res = await call(gw, { url: '/chip-groups', headers })
    expect(res.status).toBe(401)
    expect(res.body).toMatchObject({ success: false, error: 'api_key_missing' })
    expect(res.body.message).toMatch(/x-service-api-key/)
  }
})

test('401 invalid_api_key for a wrong key', async () => {
  const { a } = await setup()
  for (const key of ['tg_not-a-key', `${a.apiKey}x`, a.apiKey.slice(0, -1)]) {
    const res = await call(gw, { url: '/chip-groups', headers: { 'x-service-api-key': key } })
    expect(res.status).toBe(401)
    expect(res.body).toMatchObject({ success: false, error: 'invalid_api_key' })
  }
})

test('a revoked key is 401 while another key of the team still works', async () => {
  const { a } = await setup()
  const second = await seedTeam(gw, { name: 'A' }) // same team, a second key
  expect(await revokeApiKey(gw.store, { keyOrPrefix: a.apiKey, now: gw.clock.now })).toBe(1)

  const revoked = await call(gw, { url: '/chip-groups', headers: { 'x-service-api-key': a.apiKey } })
  expect(revoked.status).toBe(401)
  expect(revoked.body).toMatchObject({ success: false, error: 'invalid_api_key' })

  const other = await call(gw, { url: '/chip-groups', headers: { 'x-service-api-key': second.apiKey } })
  expect(other.status).toBe(200)
  expect(other.body).toHaveLength(3)
})
