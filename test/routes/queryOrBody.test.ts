import { afterEach, describe, expect, test } from 'vitest'
import { ALICE, type BackendGateway, BOB, call, CONTRACT, createBackendGateway, seedTeam } from '../helpers/gateway.js'

// The transfer-signature endpoints read their parameters from the query string and a GET's JSON body
// (src/routes/queryOrBody.ts). No chain here: these requests are settled before any signing.
let gw: BackendGateway
afterEach(async () => gw?.close())

async function keyed() {
  gw = await createBackendGateway()
  return (await seedTeam(gw, { name: 'A', chips: [] })).apiKey
}

const get = (url: string, headers: Record<string, string>, payload: string) =>
  call(gw, { method: 'GET', url, headers: { ...headers, 'content-type': 'application/json' }, payload })

describe('a GET body merged into the query', () => {
  test('a "__proto__" key in the body is an unknown parameter: what it nests is not read as parameters', async () => {
    const apiKey = await keyed()
    const url = `/phygitals/transfer-signature?contractAddress=${CONTRACT}&chainId=31337&tokenId=1`
    // As JSON.parse reads it, "__proto__" is an own key; merged into a plain object it became the prototype.
    const smuggled = await get(url, { 'x-service-api-key': apiKey }, `{"__proto__": {"recipient": "${ALICE}"}}`)
    expect(smuggled.status, JSON.stringify(smuggled.body)).toBe(400)
    expect(smuggled.body).toMatchObject({ error: 'validation_failed', errors: { recipient: expect.any(String) } })

    // The same nesting on the OTP endpoint: no recipient was given, whatever the header says.
    const pullable = await get('/phygitals/transfer-signature/pullable', { 'x-service-code': 'Uakgb_J5m9g-0JDMbcJqL' }, `{"__proto__": {"recipient": "${ALICE}"}}`)
    expect(pullable.body).toMatchObject({ error: 'validation_failed', errors: { recipient: expect.any(String) } })
  })

  test('a "__proto__" key never hides a conflict: a body parameter that disagrees with the query is still 400 conflicting_parameter', async () => {
    const apiKey = await keyed()
    const url = `/phygitals/transfer-signature?contractAddress=${CONTRACT}&chainId=31337&tokenId=1&recipient=${ALICE}`
    for (const body of [
      `{"__proto__": {}, "recipient": "${BOB}"}`,
      `{"recipient": "${BOB}", "__proto__": {"recipient": "${ALICE}"}}`,
      `{"__proto__": "x", "tokenId": "2"}`,
    ]) {
      const res = await get(url, { 'x-service-api-key': apiKey }, body)
      expect(res.body, body).toMatchObject({ error: 'conflicting_parameter' })
    }
    // A body that only repeats what the query says, next to a "__proto__" key, is not a conflict.
    const repeat = await get(`${url}&__proto__=q`, { 'x-service-api-key': apiKey }, `{"__proto__": "q", "tokenId": 1}`)
    expect(repeat.body?.error).not.toBe('conflicting_parameter')
    expect(repeat.body?.error).not.toBe('validation_failed')
  })

  test('"__proto__" given differently in the query and the body is a conflict like any other parameter', async () => {
    const apiKey = await keyed()
    const url = `/phygitals/transfer-signature?contractAddress=${CONTRACT}&chainId=31337&tokenId=1&recipient=${ALICE}&__proto__=a`
    const res = await get(url, { 'x-service-api-key': apiKey }, '{"__proto__": "b"}')
    expect(res.body).toMatchObject({ error: 'conflicting_parameter', message: expect.stringContaining('__proto__') })
  })
})
