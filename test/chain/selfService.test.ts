import type { Address, Hex } from 'viem'
import { hashTypedData } from 'viem/utils'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'
import { createApiKey } from '../../src/auth/apiKeys.js'
import { importData, parseImportFile } from '../../src/importer/importData.js'
import { loadGatewaySecret } from '../../src/keys/gatewaySecret.js'
import { selfServiceDomain, selfServiceTypedData, selfServiceTypes } from '../../src/phygitals/selfServiceEdit.js'
import { type ChainGateway, contractOf, createChainGateway, OTHER, OTHER_KEY, phygitalTeam, USER, USER_KEY } from '../helpers/chainGateway.js'
import { call, seedSunChip, seedSunProfile, sunTapUrl } from '../helpers/gateway.js'

/** Token 1 has two chips and is transferred to USER; token 2 is never minted. */
const CHIP_A = '04BB000000000A'
const CHIP_B = '04BB000000000B'
const CHIP_UNMINTED = '04BB000000000C'
const META = '5ACE7E50AB65D5D51FD5BF5A16B8205B'
const FILE = '97D1F3FCC8A6B3A4F1AE6F1E3B4BD5A0'

let gw: ChainGateway
let apiKey: string
let contract: Address

beforeAll(async () => {
  gw = await createChainGateway({ config: { rateLimit: { max: 100_000 } } })
  const secret = loadGatewaySecret({ dataDir: gw.dataDir })
  const team = phygitalTeam('S', [
    { tokenId: '1', chips: [CHIP_A, CHIP_B] },
    { tokenId: '2', chips: [CHIP_UNMINTED] },
  ])
  const summary = await importData(gw.store, parseImportFile({ teams: [team] }), { config: gw.config, now: Date.now(), secret })
  const teamId = summary.teams[0]!.id
  apiKey = (await gw.store.tx((tx) => createApiKey(tx, { teamId, label: 't', now: Date.now() }))).apiKey
  contract = await contractOf(gw, teamId)
  // SUN keys for CHIP_A, so a real phone tap can follow the redirect set here.
  const at = { app: gw.app, store: gw.store, clock: { now: Date.now() } }
  await seedSunProfile(at, { teamId, name: 'aes', metaKey: META, fileKey: FILE })
  await seedSunChip(at, { teamId, uid: CHIP_A, profileName: 'aes' })
  await transferTo(USER)
})
afterAll(async () => gw?.close())

async function transferTo(recipient: Address) {
  const res = await call(gw, {
    method: 'POST',
    url: '/phygitals/transfer',
    headers: { 'x-service-api-key': apiKey },
    payload: { contractAddress: contract, chainId: 31337, tokenId: '1', recipient },
  })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  await gw.settle()
  expect(await ownerOf(1n)).toBe(recipient)
}

const ownerOf = (tokenId: bigint) => gw.publicClient.readContract({ address: contract, abi: phygitalTokenAbi, functionName: 'ownerOf', args: [tokenId] })
const nowSeconds = () => Math.floor(Date.now() / 1000)
const redirectOf = async (uid: string) => (await gw.store.chips.get(uid))!.redirectUrl

type Request = { tokenId?: string; redirectUrl: string; requestExpiryTime?: number; contractAddress?: string }

/** Signs a self-service edit with the exported typed data, as a wallet would. */
async function signed(key: Hex, r: Request) {
  const body = {
    contractAddress: r.contractAddress ?? contract,
    chainId: 31337,
    tokenId: r.tokenId ?? '1',
    updates: { redirectUrl: r.redirectUrl },
    requestExpiryTime: r.requestExpiryTime ?? nowSeconds() + 600,
  }
  const typed = selfServiceTypedData({ key: body, updates: body.updates, requestExpiryTime: body.requestExpiryTime })
  const wallet = gw.wallet(key)
  const ownerSignature = await wallet.signTypedData({ account: wallet.account!, ...typed })
  return { ...body, ownerSignature }
}

const edit = (payload: object) => call(gw, { method: 'PATCH', url: '/chips/self-service', payload })

describe('the EIP-712 request', () => {
  test('the exported typed data is the one the spec describes', async () => {
    const expiry = nowSeconds() + 600
    // Built by hand from the spec's table (PATCH /chips/self-service).
    const byHand = {
      domain: { name: 'Update Self Service Tag', version: '1' },
      primaryType: 'UpdateRequest',
      types: {
        Updates: [{ name: 'redirectUrl', type: 'string' }],
        TokenRef: [
          { name: 'contractAddress', type: 'address' },
          { name: 'tokenId', type: 'uint256' },
          { name: 'chainId', type: 'uint256' },
        ],
        UpdateRequest: [
          { name: 'token', type: 'TokenRef' },
          { name: 'updates', type: 'Updates' },
          { name: 'requestExpiryTime', type: 'uint256' },
        ],
      },
      message: {
        token: { contractAddress: contract, tokenId: 1n, chainId: 31337n },
        updates: { redirectUrl: 'https://spec.example/a' },
        requestExpiryTime: BigInt(expiry),
      },
    } as const
    const exported = selfServiceTypedData({
      key: { contractAddress: contract, chainId: 31337, tokenId: '1' },
      updates: { redirectUrl: 'https://spec.example/a' },
      requestExpiryTime: expiry,
    })
    expect(exported.domain).toEqual(selfServiceDomain)
    expect(exported.types).toEqual(selfServiceTypes)
    expect(exported).toEqual(byHand)
    expect(hashTypedData(exported)).toBe(hashTypedData(byHand))

    // A signature over the hand-built request is accepted by the gateway.
    const wallet = gw.wallet(USER_KEY)
    const ownerSignature = await wallet.signTypedData({ account: wallet.account!, ...byHand })
    const res = await edit({
      contractAddress: contract.toLowerCase(),
      chainId: 31337,
      tokenId: '1',
      updates: { redirectUrl: 'https://spec.example/a' },
      requestExpiryTime: expiry,
      ownerSignature,
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(await redirectOf(CHIP_A)).toBe('https://spec.example/a')
  })
})

describe('PATCH /chips/self-service', () => {
  test("the owner's signed request sets the redirect URL of every chip of the token", async () => {
    const res = await edit(await signed(USER_KEY, { redirectUrl: 'https://owner.example/landing?x=1' }))
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.success).toBe(true)
    expect([...res.body.updatedTags].sort()).toEqual([CHIP_A, CHIP_B])
    expect(await redirectOf(CHIP_A)).toBe('https://owner.example/landing?x=1')
    expect(await redirectOf(CHIP_B)).toBe('https://owner.example/landing?x=1')
    expect(await redirectOf(CHIP_UNMINTED)).toBeNull()

    // A tap of the chip now goes there, with serviceRef.
    const tap = await gw.app.inject({ method: 'GET', url: sunTapUrl({ metaKey: META, fileKey: FILE, uid: CHIP_A, counter: 1 }) })
    expect(tap.statusCode).toBe(302)
    const location = new URL(tap.headers.location as string)
    expect(`${location.origin}${location.pathname}`).toBe('https://owner.example/landing')
    expect(location.searchParams.get('x')).toBe('1')
    expect(location.searchParams.get('serviceRef')).toMatch(/.+/)
  })

  test('the signature is checked over the exact URL the owner signed, which is stored as signed (no parser rewrites it first)', async () => {
    // URLs a URL parser (or zod's url check) would rewrite: surrounding blanks, a tab and a newline it drops,
    // an upper-case scheme and host, a dot segment, a bare origin without its slash.
    const urls = [
      ' https://padded.example/landing ',
      'https://tab.example/a\tb\n',
      'HTTPS://Example.com/a/../b',
      'https://bare-origin.example',
    ]
    for (const redirectUrl of urls) {
      const res = await edit(await signed(USER_KEY, { redirectUrl }))
      expect(res.status, `${JSON.stringify(redirectUrl)}: ${JSON.stringify(res.body)}`).toBe(200)
      expect(await redirectOf(CHIP_A)).toBe(redirectUrl)
      expect(await redirectOf(CHIP_B)).toBe(redirectUrl)
    }
    // A tap follows the stored URL as a browser reads it.
    const tap = await gw.app.inject({ method: 'GET', url: sunTapUrl({ metaKey: META, fileKey: FILE, uid: CHIP_A, counter: 2 }) })
    expect(tap.statusCode).toBe(302)
    expect(tap.headers.location).toMatch(/^https:\/\/bare-origin\.example\/\?serviceRef=/)
  })

  test('a replayed request is refused and changes nothing', async () => {
    const body = await signed(USER_KEY, { redirectUrl: 'https://replay.example/first' })
    expect((await edit(body)).status).toBe(200)
    expect((await edit(await signed(USER_KEY, { redirectUrl: 'https://replay.example/second' }))).status).toBe(200)
    const again = await edit(body)
    expect(again.status).toBe(409)
    expect(again.body.error).toBe('signature_used')
    expect(await redirectOf(CHIP_A)).toBe('https://replay.example/second')
    expect(await redirectOf(CHIP_B)).toBe('https://replay.example/second')
  })

  test('the same request signed again (another s of one signature) is still the same request: signature_used', async () => {
    const body = await signed(USER_KEY, { redirectUrl: 'https://malleable.example/' })
    expect((await edit(body)).status).toBe(200)
    // ECDSA malleability: (r, n - s) with the other v recovers the same address.
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
    const sig = body.ownerSignature
    const s = BigInt(`0x${sig.slice(66, 130)}`)
    const v = parseInt(sig.slice(130), 16)
    const flipped = `${sig.slice(0, 66)}${(n - s).toString(16).padStart(64, '0')}${(v === 27 ? 28 : 27).toString(16)}` as Hex
    await edit(await signed(USER_KEY, { redirectUrl: 'https://after-malleable.example/' }))
    const res = await edit({ ...body, ownerSignature: flipped })
    expect(res.status).toBe(409)
    expect(res.body.error).toBe('signature_used')
    expect(await redirectOf(CHIP_A)).toBe('https://after-malleable.example/')
  })

  test('two copies of one request sent at once: exactly one applies', async () => {
    const body = await signed(USER_KEY, { redirectUrl: 'https://race.example/' })
    const results = await Promise.all([edit(body), edit(body), edit(body)])
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409])
    expect(results.filter((r) => r.status === 409).map((r) => r.body.error)).toEqual(['signature_used', 'signature_used'])
    expect(await redirectOf(CHIP_A)).toBe('https://race.example/')
  })

  test('a request for another token, contract or chain does not carry over', async () => {
    const body = await signed(USER_KEY, { redirectUrl: 'https://elsewhere.example/' })
    const before = await redirectOf(CHIP_A)
    // The token key names the chain: the same contract and token id on chain 1 is not a token of ours.
    const res = await edit({ ...body, chainId: 1 })
    expect(res.status).toBe(404)
    expect(res.body.error).toBe('token_not_found')
    // The signature covers the URL: another URL recovers to a stranger.
    const otherUrl = await edit({ ...body, updates: { redirectUrl: 'https://swapped.example/' } })
    expect(otherUrl.status).toBe(403)
    expect(otherUrl.body.error).toBe('not_token_owner')
    expect(await redirectOf(CHIP_A)).toBe(before)
  })

  test('the request expires: past → request_expired; too far ahead → request_expiry_too_far', async () => {
    const before = await redirectOf(CHIP_A)
    const past = await edit(await signed(USER_KEY, { redirectUrl: 'https://late.example/', requestExpiryTime: nowSeconds() - 10 }))
    expect(past.status).toBe(400)
    expect(past.body.error).toBe('request_expired')
    const max = gw.config.chain.selfServiceMaxSeconds
    expect(max).toBe(3600)
    const far = await edit(await signed(USER_KEY, { redirectUrl: 'https://late.example/', requestExpiryTime: nowSeconds() + max + 120 }))
    expect(far.status).toBe(400)
    expect(far.body.error).toBe('request_expiry_too_far')
    // Just inside the window is fine.
    const inside = await edit(await signed(USER_KEY, { redirectUrl: 'https://inside.example/', requestExpiryTime: nowSeconds() + max - 60 }))
    expect(inside.status, JSON.stringify(inside.body)).toBe(200)
    expect(before).not.toBe('https://late.example/')
    expect(await redirectOf(CHIP_A)).toBe('https://inside.example/')
  })

  test('a garbage signature is a stable 4xx and changes nothing; a malformed one fails validation', async () => {
    const before = await redirectOf(CHIP_A)
    const body = await signed(USER_KEY, { redirectUrl: 'https://garbage.example/' })
    // 65 bytes that recover to no key: r off the curve, r = 0, v neither 27/28 nor 0/1.
    for (const garbage of [`0x${'7a'.repeat(32)}${'3c'.repeat(32)}1b`, `0x${'00'.repeat(64)}1b`, `0x${'7a'.repeat(32)}${'3c'.repeat(32)}05`]) {
      const res = await edit({ ...body, ownerSignature: garbage })
      expect(res.status, garbage).toBe(400)
      expect(res.body.error).toBe('invalid_signature')
    }
    // Random bytes either recover to no key (400) or to some stranger (403).
    const random = `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(64))).toString('hex')}1c` as Hex
    const res = await edit({ ...body, ownerSignature: random })
    expect([400, 403], random).toContain(res.status)
    expect(res.body.error).toBe(res.status === 400 ? 'invalid_signature' : 'not_token_owner')
    expect(await redirectOf(CHIP_A)).toBe(before)

    for (const ownerSignature of ['0x1234', 'not hex', `${body.ownerSignature}00`, body.ownerSignature.slice(2)]) {
      const bad = await edit({ ...body, ownerSignature })
      expect(bad.status, ownerSignature).toBe(400)
      expect(bad.body.error).toBe('validation_failed')
      expect(bad.body.errors).toHaveProperty('ownerSignature')
    }
    expect(await redirectOf(CHIP_A)).toBe(before)
    // The real signature was not spent by any of the failures.
    expect((await edit(body)).status).toBe(200)
    expect(await redirectOf(CHIP_A)).toBe('https://garbage.example/')
  })

  test('an unminted token → token_not_minted; an unknown one → token_not_found; a non-http(s) URL → 400', async () => {
    const unminted = await edit(await signed(USER_KEY, { tokenId: '2', redirectUrl: 'https://unminted.example/' }))
    expect(unminted.status).toBe(409)
    expect(unminted.body.error).toBe('token_not_minted')
    expect(await redirectOf(CHIP_UNMINTED)).toBeNull()

    const unknown = await edit(await signed(USER_KEY, { tokenId: '99', redirectUrl: 'https://unknown.example/' }))
    expect(unknown.status).toBe(404)
    expect(unknown.body.error).toBe('token_not_found')

    const before = await redirectOf(CHIP_A)
    for (const redirectUrl of ['javascript:alert(1)', 'ftp://files.example/x', 'not a url']) {
      const res = await edit(await signed(USER_KEY, { redirectUrl }))
      expect(res.status, redirectUrl).toBe(400)
      expect(res.body.error).toBe('validation_failed')
      expect(res.body.errors).toHaveProperty(['updates.redirectUrl'])
    }
    expect(await redirectOf(CHIP_A)).toBe(before)
  })

  test("a non-owner's signature → 403 not_token_owner; after the token moves, only the new owner can sign", async () => {
    const before = await redirectOf(CHIP_A)
    const other = await edit(await signed(OTHER_KEY, { redirectUrl: 'https://thief.example/' }))
    expect(other.status).toBe(403)
    expect(other.body.error).toBe('not_token_owner')
    expect(await redirectOf(CHIP_A)).toBe(before)
    expect(await redirectOf(CHIP_B)).toBe(before)

    await transferTo(OTHER)
    const userNow = await edit(await signed(USER_KEY, { redirectUrl: 'https://former-owner.example/' }))
    expect(userNow.status).toBe(403)
    expect(userNow.body.error).toBe('not_token_owner')
    expect(await redirectOf(CHIP_A)).toBe(before)

    const otherNow = await edit(await signed(OTHER_KEY, { redirectUrl: 'https://new-owner.example/' }))
    expect(otherNow.status, JSON.stringify(otherNow.body)).toBe(200)
    expect([...otherNow.body.updatedTags].sort()).toEqual([CHIP_A, CHIP_B])
    expect(await redirectOf(CHIP_A)).toBe('https://new-owner.example/')
    expect(await redirectOf(CHIP_B)).toBe('https://new-owner.example/')
  })
})
