import { afterEach, describe, expect, test } from 'vitest'
import { ALICE, type BackendGateway, call, CONTRACT, createBackendGateway, metadata, seedTeam } from '../helpers/gateway.js'

// What an OpenAPI fuzzer found (issue 17): the server read a tokenId with leading zeros or spaces
// around it, and a recipient with a trailing newline, although the document's patterns forbid them.
// Each is now refused as the document says (400 validation_failed), in the query, the path and the
// body, and nothing is stored.
let gw: BackendGateway
afterEach(async () => gw?.close())

const UID = '04E0000000000A'
const FORBIDDEN_TOKEN_IDS = ['02', ' 2', '2 ', '2\n', '\t2', '+2']

async function seeded() {
  gw = await createBackendGateway()
  return (await seedTeam(gw, {
    name: 'A',
    chips: [{ uid: UID }],
    tokens: [{ chainId: 31337, contractAddress: CONTRACT, tokenId: '2', chips: [UID], metadata: metadata(), twoTapClaim: { delaySeconds: 0, windowSeconds: 600 } }],
  })).apiKey
}

const refused = (res: { status: number; body: any }, field: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(400)
  expect(res.body).toMatchObject({ error: 'validation_failed', errors: { [field]: expect.any(String) } })
}

describe('tokenId: the canonical decimal form only', () => {
  test('in the query, the path and the body, "02", " 2", "2\\n" are 400 validation_failed; "2" works', async () => {
    const apiKey = await seeded()
    const headers = { 'x-service-api-key': apiKey }
    const query = (tokenId: string) => new URLSearchParams({ contractAddress: CONTRACT, chainId: '31337', tokenId }).toString()
    for (const tokenId of FORBIDDEN_TOKEN_IDS) {
      refused(await call(gw, { url: `/phygitals/chip?${query(tokenId)}`, headers }), 'tokenId')
      refused(await call(gw, { url: `/metadata/31337/${CONTRACT}/${encodeURIComponent(tokenId)}` }), 'tokenId')
      const body = { contractAddress: CONTRACT, chainId: 31337, tokenId, metadata: JSON.stringify(metadata({ name: 'Changed' })) }
      refused(await call(gw, { method: 'PATCH', url: '/phygitals/metadata', headers, payload: body }), 'tokenId')
    }
    expect(JSON.parse((await gw.store.tokens.findByKey({ chainId: 31337, contractAddress: CONTRACT, tokenId: '2' }))!.metadata!)).toMatchObject({ name: 'Test token' })

    expect((await call(gw, { url: `/phygitals/chip?${query('2')}`, headers })).status).toBe(200)
    expect((await call(gw, { url: `/metadata/31337/${CONTRACT}/2` })).status).toBe(200)
    // A JSON number is the same token id, as the document's other branch says.
    const byNumber = { contractAddress: CONTRACT, chainId: 31337, tokenId: 2, metadata: JSON.stringify(metadata({ name: 'Changed' })) }
    expect((await call(gw, { method: 'PATCH', url: '/phygitals/metadata', headers, payload: byNumber })).status).toBe(200)
  })

  test('chainId as a digit string: a leading zero or a space is refused too', async () => {
    const apiKey = await seeded()
    for (const chainId of ['031337', ' 31337', '31337\n'])
      refused(await call(gw, { url: `/phygitals/chip?${new URLSearchParams({ contractAddress: CONTRACT, chainId, tokenId: '2' })}`, headers: { 'x-service-api-key': apiKey } }), 'chainId')
  })

  test('a GET body cannot make a forbidden query value pass: "02" beside "2" is a conflict', async () => {
    const apiKey = await seeded()
    const url = `/phygitals/transfer-signature?contractAddress=${CONTRACT}&chainId=31337&tokenId=02&recipient=${ALICE}`
    const res = await call(gw, { url, headers: { 'x-service-api-key': apiKey, 'content-type': 'application/json' }, payload: '{"tokenId": "2"}' })
    expect(res).toMatchObject({ status: 400, body: { error: 'conflicting_parameter' } })
  })
})

describe('recipient: no spaces or line breaks around it', () => {
  test('a claim registration for "<address>\\n" or " <address> " is 400 validation_failed and none is made', async () => {
    const apiKey = await seeded()
    const headers = { 'x-service-api-key': apiKey }
    const key = { contractAddress: CONTRACT, chainId: 31337, tokenId: '2' }
    for (const recipient of [`${ALICE}\n`, ` ${ALICE} `, `${ALICE}  `, '\nvitalik.eth']) {
      refused(await call(gw, { method: 'POST', url: '/phygitals/claim-registration', headers, payload: { ...key, recipient } }), 'recipient')
      refused(await call(gw, { url: `/phygitals/claim-registration?${new URLSearchParams({ ...key, chainId: '31337', recipient })}` }), 'recipient')
    }
    const status = await call(gw, { url: `/phygitals/claim-registration?${new URLSearchParams({ ...key, chainId: '31337', recipient: ALICE })}` })
    expect(status.body).toMatchObject({ isRequired: true, isValid: false, createdAt: null })

    expect((await call(gw, { method: 'POST', url: '/phygitals/claim-registration', headers, payload: { ...key, recipient: ALICE } })).status).toBe(200)
  })
})

describe('chip UIDs: ":" between bytes only, as the pattern says', () => {
  test('a separator inside a byte or at an end is 400; between bytes it is fine', async () => {
    const apiKey = await seeded()
    const transfer = (tagUID: string) =>
      call(gw, { method: 'POST', url: '/phygitals/transfer/self-service', headers: { 'x-service-api-key': apiKey }, payload: { tagUID, recipient: ALICE } })
    for (const tagUID of ['0:4E0000000000A', `:${UID}`, `${UID}:`, `${UID}\n`]) refused(await transfer(tagUID), 'tagUID')
    // Past validation (the chain half is not running here): a 503, not a 400.
    expect((await transfer('04:e0:00:00:00:00:0a')).body?.error).not.toBe('validation_failed')
  })
})
