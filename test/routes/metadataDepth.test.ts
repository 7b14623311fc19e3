import { afterEach, describe, expect, test } from 'vitest'
import { parseImportFile } from '../../src/importer/importData.js'
import { type BackendGateway, call, CONTRACT, createBackendGateway, GUESTBOOK, metadata, seedTeam } from '../helpers/gateway.js'

// Metadata arrives as JSON text (spec §2). Before the bound, ~6,000 levels of nesting parsed fine and then
// overflowed the stack where the gateway stringified it for storage: a 500.
let gw: BackendGateway
afterEach(async () => gw?.close())

const UID = { token: '04AD0000000001', guestbook: '04AD0000000002' }
const DEEP = 6_000

/** Metadata text whose nesting is `depth` levels, the metadata object itself being level 1. */
const nested = (depth: number, overrides: Record<string, unknown> = {}) =>
  JSON.stringify(metadata(overrides)).replace(/}$/, `,"extra":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`)

async function seeded() {
  gw = await createBackendGateway()
  const { apiKey } = await seedTeam(gw, {
    name: 'Deep',
    chips: Object.values(UID).map((uid) => ({ uid })),
    tokens: [{ chainId: 31337, contractAddress: CONTRACT, tokenId: '7', chips: [UID.token], metadata: metadata() }],
    guestbookContracts: [{ name: 'GB', symbol: 'GB', chainId: 31337, address: GUESTBOOK, events: [{ name: 'E', tokenId: '1', metadata: metadata(), chips: [UID.guestbook] }] }],
  })
  return { 'x-service-api-key': apiKey }
}

const storedTokenMetadata = async () => (await gw.store.tokens.findByKey({ chainId: 31337, contractAddress: CONTRACT, tokenId: '7' }))!.metadata

describe('metadata nesting depth', () => {
  test('~6,000 levels: 400 validation_failed naming the bound, on every endpoint that takes metadata; nothing stored', async () => {
    const headers = await seeded()
    const before = await storedTokenMetadata()
    const deep = nested(DEEP)
    const contractId: number = (await call(gw, { url: '/events/contracts', headers })).body[0].id
    const requests = [
      { method: 'PATCH' as const, url: '/phygitals/metadata', payload: { contractAddress: CONTRACT, chainId: 31337, tokenId: '7', metadata: deep } },
      { method: 'POST' as const, url: '/events', payload: { name: 'Deep event', tokenId: '2', contractId, metadata: deep } },
      { method: 'PATCH' as const, url: '/events/metadata', payload: { contractAddress: GUESTBOOK, chainId: 31337, tokenId: '1', metadata: deep } },
    ]
    for (const request of requests) {
      const res = await call(gw, { ...request, headers })
      expect(res.status, `${request.url}: ${JSON.stringify(res.body)}`).toBe(400)
      expect(res.body).toMatchObject({ success: false, error: 'validation_failed', errors: { metadata: expect.stringContaining('32 levels') } })
    }
    expect(await storedTokenMetadata()).toBe(before)
    expect((await call(gw, { url: '/events', headers })).body).toHaveLength(1)
  })

  test('the bound is 32 levels: 32 is stored and served, 33 is refused', async () => {
    const headers = await seeded()
    const patch = (text: string) =>
      call(gw, { method: 'PATCH', url: '/phygitals/metadata', headers, payload: { contractAddress: CONTRACT, chainId: 31337, tokenId: '7', metadata: text } })
    const atBound = nested(32, { name: 'At the bound' })
    expect((await patch(atBound)).status).toBe(200)
    expect(JSON.parse((await storedTokenMetadata())!)).toEqual(JSON.parse(atBound))
    const served = await call(gw, { url: `/metadata/31337/${CONTRACT}/7` })
    expect(served.status).toBe(200)
    expect(served.body).toEqual(JSON.parse(atBound))

    const over = await patch(nested(33))
    expect(over.status).toBe(400)
    expect(over.body.errors).toEqual({ metadata: expect.stringContaining('32 levels') })
    // Brackets inside strings are text, not nesting.
    expect((await patch(JSON.stringify(metadata({ description: '['.repeat(DEEP) })))).status).toBe(200)
  })

  test('an import file with metadata nested ~6,000 levels is refused, naming the path', () => {
    const deepValue = JSON.parse(`${'['.repeat(DEEP)}${']'.repeat(DEEP)}`) as unknown
    const file = { teams: [{ name: 'Deep', tokens: [{ chainId: 31337, contractAddress: CONTRACT, tokenId: '7', metadata: metadata({ extra: deepValue }) }] }] }
    let thrown: unknown
    try {
      parseImportFile(file)
    } catch (error) {
      thrown = error
    }
    expect(thrown).toMatchObject({ code: 'validation_failed', errors: { 'teams.0.tokens.0.metadata': expect.stringContaining('32 levels') } })
  })
})
