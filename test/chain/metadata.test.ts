import { type Address, getAddress } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'
import { createApiKey } from '../../src/auth/apiKeys.js'
import { importData, parseImportFile } from '../../src/importer/importData.js'
import { loadGatewaySecret } from '../../src/keys/gatewaySecret.js'
import { type ChainGateway, contractOf, createChainGateway, phygitalTeam, USER } from '../helpers/chainGateway.js'
import { call, metadata } from '../helpers/gateway.js'

const ORIGIN = 'https://tap.example'
/** Contracts team M lists by address: one registered as a phygital contract, one only named by a token. */
const REGISTERED = getAddress('0x00000000000000000000000000000000000be9e5')
const BARE = getAddress('0x0000000000000000000000000000000000000ba5')

let gw: ChainGateway
let headers: { 'x-service-api-key': string }
let foreignHeaders: { 'x-service-api-key': string }
let contract: Address

beforeAll(async () => {
  gw = await createChainGateway({ config: { publicBaseUrl: `${ORIGIN}/`, rateLimit: { max: 100_000 } } })
  const secret = loadGatewaySecret({ dataDir: gw.dataDir })
  const seed = phygitalTeam('M', [
    { tokenId: '1', chips: ['04DD000000000A'] },
    { tokenId: '2', chips: ['04DD000000000B'] },
  ])
  const summary = await importData(
    gw.store,
    parseImportFile({
      teams: [
        {
          ...seed,
          phygitalContracts: [...(seed.phygitalContracts as object[]), { name: 'Registered', symbol: 'REG', chainId: 31337, address: REGISTERED }],
          tokens: [
            ...(seed.tokens as object[]),
            { chainId: 31337, contract: 'Registered', tokenId: '5', metadata: metadata({ name: 'Registered #5' }) },
            { chainId: 31337, contractAddress: BARE, tokenId: '6', metadata: metadata({ name: 'Bare #6' }) },
          ],
        },
        { name: 'Other team', chips: [] },
      ],
    }),
    { config: gw.config, now: Date.now(), secret },
  )
  const teamId = summary.teams[0]!.id
  headers = { 'x-service-api-key': (await gw.store.tx((tx) => createApiKey(tx, { teamId, label: 'm', now: Date.now() }))).apiKey }
  foreignHeaders = { 'x-service-api-key': (await gw.store.tx((tx) => createApiKey(tx, { teamId: summary.teams[1]!.id, label: 'o', now: Date.now() }))).apiKey }
  contract = await contractOf(gw, teamId)
  gw.relayer.wake(31337)
  await gw.settle()
})
afterAll(async () => gw?.close())

const txCount = async () => (await gw.store.chainTxs.all(31337)).length
const storedMetadata = async (contractAddress: string, tokenId: string) =>
  JSON.parse((await gw.store.tokens.findByKey({ chainId: 31337, contractAddress, tokenId }))!.metadata!) as Record<string, unknown>
const patch = (payload: object, h: Record<string, string> = headers) => call(gw, { method: 'PATCH', url: '/phygitals/metadata', headers: h, payload })
const tokenURI = (tokenId: bigint) => gw.publicClient.readContract({ address: contract, abi: phygitalTokenAbi, functionName: 'tokenURI', args: [tokenId] })

describe('tokenURI and GET /metadata', () => {
  test("a minted token's tokenURI is this gateway's metadata route, which serves the stored metadata", async () => {
    const transfer = await call(gw, {
      method: 'POST',
      url: '/phygitals/transfer',
      headers,
      payload: { contractAddress: contract, chainId: 31337, tokenId: '1', recipient: USER },
    })
    expect(transfer.status, JSON.stringify(transfer.body)).toBe(200)
    await gw.settle()

    const uri = await tokenURI(1n)
    // The configured origin's trailing slash is not doubled.
    expect(uri).toBe(`${ORIGIN}/metadata/31337/${contract}/1`)
    const res = await call(gw, { url: uri.slice(ORIGIN.length) })
    expect(res.status).toBe(200)
    expect(res.body).toEqual(metadata({ name: 'M #1' }))
    expect(res.body).toEqual(await storedMetadata(contract, '1'))
    expect(String(res.headers['cache-control'])).toMatch(/^public\b/)
    expect(String(res.headers['content-type'])).toMatch(/^application\/json/)
    // The address in any case.
    expect((await call(gw, { url: `/metadata/31337/${contract.toLowerCase()}/1` })).body).toEqual(res.body)
    // A token id as the document writes it: no leading zeros (issue 17 §6).
    expect((await call(gw, { url: `/metadata/31337/${contract.toLowerCase()}/01` })).body).toMatchObject({ success: false, error: 'validation_failed' })
  })

  test('an unknown token → 404 metadata_not_found; a bad address, token id or chain id → 400', async () => {
    for (const url of [`/metadata/31337/${contract}/99`, `/metadata/1/${contract}/1`, `/metadata/31337/${getAddress('0x00000000000000000000000000000000deadbeef')}/1`]) {
      const res = await call(gw, { url })
      expect(res.status, url).toBe(404)
      expect(res.body.error).toBe('metadata_not_found')
    }
    for (const url of [`/metadata/31337/0x1234/1`, `/metadata/31337/not-an-address/1`, `/metadata/31337/${contract}/abc`, `/metadata/31337/${contract}/-1`, `/metadata/chain/${contract}/1`]) {
      const res = await call(gw, { url })
      expect(res.status, url).toBe(400)
      expect(res.body.error).toBe('validation_failed')
    }
  })
})

describe('PATCH /phygitals/metadata', () => {
  test('valid metadata is stored, served, and the contract emits MetadataUpdate(tokenId)', async () => {
    const fromBlock = (await gw.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
    const before = await txCount()
    const updated = metadata({ name: 'M #1, renamed', image: 'https://example.com/new.png', extra: { kept: [1, 2] } })
    const res = await patch({ contractAddress: contract.toLowerCase(), chainId: 31337, tokenId: '1', metadata: JSON.stringify(updated) })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toEqual({ success: true })
    const queued = (await gw.store.chainTxs.all(31337)).slice(before)
    expect(queued).toHaveLength(1)
    expect(queued[0]).toMatchObject({ kind: 'metadata_refresh', toAddress: contract })

    await gw.settle()
    expect(await gw.store.chainTxs.get(queued[0]!.id)).toMatchObject({ status: 'mined', reverted: 0 })
    const events = await gw.publicClient.getContractEvents({ address: contract, abi: phygitalTokenAbi, eventName: 'MetadataUpdate', fromBlock })
    expect(events).toHaveLength(1)
    expect(events[0]!.args).toEqual({ _tokenId: 1n })
    expect(events[0]!.transactionHash).toBe((await gw.store.chainTxs.get(queued[0]!.id))!.txHash)

    expect(await storedMetadata(contract, '1')).toEqual(updated)
    const served = await call(gw, { url: `/metadata/31337/${contract}/1` })
    expect(served.status).toBe(200)
    expect(served.body).toEqual(updated)
  })

  test('a token not minted yet on our contract: stored, and the refresh is still emitted (its tokenURI is fixed already)', async () => {
    const fromBlock = (await gw.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
    const updated = metadata({ name: 'M #2, before mint' })
    const res = await patch({ contractAddress: contract, chainId: 31337, tokenId: '2', metadata: JSON.stringify(updated) })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    await gw.settle()
    const events = await gw.publicClient.getContractEvents({ address: contract, abi: phygitalTokenAbi, eventName: 'MetadataUpdate', fromBlock })
    expect(events.map((e) => e.args._tokenId)).toEqual([2n])
    expect((await call(gw, { url: `/metadata/31337/${contract}/2` })).body).toEqual(updated)
  })

  test('invalid metadata → 400 with errors by field path; nothing stored, nothing queued', async () => {
    const before = await txCount()
    const stored = await storedMetadata(contract, '1')
    const { image: _image, ...noImage } = metadata()
    const missing = await patch({ contractAddress: contract, chainId: 31337, tokenId: '1', metadata: JSON.stringify(noImage) })
    expect(missing.status).toBe(400)
    expect(missing.body).toMatchObject({ success: false, error: 'validation_failed' })
    expect(missing.body.errors).toEqual({ 'metadata.image': 'Required' })

    const cases: [string, string][] = [
      [JSON.stringify(metadata({ attributes: [{ value: 'M' }] })), 'metadata.attributes.0.trait_type'],
      [JSON.stringify(metadata({ media_gallery: [{ media: 'not a url', type: 'image/png' }] })), 'metadata.media_gallery.0.media'],
      [JSON.stringify({ ...metadata(), media_gallery: undefined }), 'metadata.media_gallery'],
      ['{not json', 'metadata'],
      ['[]', 'metadata'],
    ]
    for (const [text, path] of cases) {
      const res = await patch({ contractAddress: contract, chainId: 31337, tokenId: '1', metadata: text })
      expect(res.status, text).toBe(400)
      expect(res.body.error).toBe('validation_failed')
      expect(Object.keys(res.body.errors), text).toContain(path)
    }
    expect(await txCount()).toBe(before)
    expect(await storedMetadata(contract, '1')).toEqual(stored)
    expect((await call(gw, { url: `/metadata/31337/${contract}/1` })).body).toEqual(stored)
  })

  test('a token on a contract not deployed here: stored and served, but no refresh transaction', async () => {
    const before = await txCount()
    for (const [address, tokenId] of [[REGISTERED, '5'], [BARE, '6']] as const) {
      const updated = metadata({ name: `updated ${tokenId}` })
      const res = await patch({ contractAddress: address, chainId: 31337, tokenId, metadata: JSON.stringify(updated) })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(await storedMetadata(address, tokenId)).toEqual(updated)
      expect((await call(gw, { url: `/metadata/31337/${address}/${tokenId}` })).body).toEqual(updated)
    }
    expect(await txCount()).toBe(before)
  })

  test("an unknown token, or another team's → 404 token_not_found; nothing queued", async () => {
    const before = await txCount()
    const stored = await storedMetadata(contract, '1')
    const unknown = await patch({ contractAddress: contract, chainId: 31337, tokenId: '99', metadata: JSON.stringify(metadata()) })
    expect(unknown.status).toBe(404)
    expect(unknown.body.error).toBe('token_not_found')
    const foreign = await patch({ contractAddress: contract, chainId: 31337, tokenId: '1', metadata: JSON.stringify(metadata({ name: 'hijack' })) }, foreignHeaders)
    expect(foreign.status).toBe(404)
    expect(foreign.body.error).toBe('token_not_found')
    const noKey = await patch({ contractAddress: contract, chainId: 31337, tokenId: '1', metadata: JSON.stringify(metadata()) }, {})
    expect(noKey.status).toBe(401)
    expect(await txCount()).toBe(before)
    expect(await storedMetadata(contract, '1')).toEqual(stored)
  })
})
