import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'
import { createApiKey } from '../../src/auth/apiKeys.js'
import type { PostgresStore, SqliteStore } from '../../src/db/store.js'
import { type ChainGateway, contractOf, createBackendChainGateway, holdRelayer, OTHER, signPull, USER } from '../helpers/chainGateway.js'
import { queryRows } from '../helpers/gateway.js'
import { CAP, type ClaimStation, LAMP, MUG, setUpClaimStation, TEE, TWO_TAP } from '../helpers/claimStation.js'
import { type NonceReadMode, type RpcProxy, startRpcProxy } from '../helpers/rpcProxy.js'
import { until } from '../helpers/until.js'

// Issue 24 §1: customer X (USER) claims a token on chain with a gateway-issued signature; the
// gateway has not seen that move. A request with an OTP or claim from before X's claim, asking for
// Y (OTHER), must not move the token while the token's nonce cannot be read: 503
// chain_state_unknown with nothing spent; once the read answers, 409 token_moved. The gateway
// reaches the embedded anvil through a real proxy that holds or fails only getTokenNonce calls.

const TIMEOUT_MS = 300
/** Longer than the gateway waits: a real slow answer, which does arrive later. */
const SLOW = { delayMs: TIMEOUT_MS + 700 }

let proxy: RpcProxy
let gw: ChainGateway<SqliteStore | PostgresStore>
let shop: ClaimStation
let apiKey: string

beforeAll(async () => {
  gw = await createBackendChainGateway({
    config: { chain: { tokenNonceReadTimeoutMs: TIMEOUT_MS } },
    embeddedRpcUrl: async (anvilUrl) => (proxy = await startRpcProxy(anvilUrl)).url,
  })
  shop = await setUpClaimStation(gw, { listen: false })
  ;({ apiKey } = await gw.store.tx((tx) => createApiKey(tx, { teamId: shop.teamId, label: 'X pulls', now: Date.now() })))
}, 60_000)
afterAll(async () => {
  await gw?.close()
  await proxy?.stop()
})

const tokenIdOf: Record<string, string> = { [TEE]: '1', [CAP]: '2', [MUG]: '3', [LAMP]: '4', [TWO_TAP]: '5' }
const counters: Record<string, number> = {}
const ownerOf = async (uid: string) =>
  gw.publicClient.readContract({ address: await contractOf(gw, shop.teamId), abi: phygitalTokenAbi, functionName: 'ownerOf', args: [BigInt(tokenIdOf[uid]!)] }) as Promise<Address>
const counts = async () => {
  const [row] = await queryRows<{ transfers: number; txs: number; registrations: number }>(
    gw.store,
    'SELECT (SELECT count(*) FROM transfers) AS transfers, (SELECT count(*) FROM chain_txs) AS txs, (SELECT count(*) FROM claim_registrations) AS registrations',
  )
  return { transfers: Number(row!.transfers), txs: Number(row!.txs), registrations: Number(row!.registrations) }
}
const inject = async (method: 'GET' | 'POST', url: string, p: { payload?: object; headers?: Record<string, string> } = {}) => {
  const res = await gw.app.inject({ method, url, headers: p.headers, ...(p.payload ? { payload: p.payload } : {}) })
  return { status: res.statusCode, body: JSON.parse(res.body) as Record<string, unknown>, retryAfter: res.headers['retry-after'] }
}

/** A product tap at the station: the claim it opened and the OTP it holds. */
async function tap(uid: string): Promise<{ claimId: number; otp: string }> {
  counters[uid] = (counters[uid] ?? 0) + 1
  const res = await shop.tap(uid, counters[uid])
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  const claimId = await shop.lastClaimId()
  return { claimId, otp: (await gw.store.claims.get(claimId))!.otpCode }
}

/** What X's signature is submitted as: the chain says whether the token exists yet. */
const pullMethod = async (uid: string) => ((await ownerOf(uid).then(() => true, () => false)) ? 'claimNFT' : 'mintNFT')

/** X's own claim on chain with a signature from GET /phygitals/transfer-signature (read while the RPC answers). */
async function xPulls(uid: string): Promise<void> {
  proxy.nonceReads = 'pass'
  const pull = await signPull(gw, { apiKey, contract: await contractOf(gw, shop.teamId), tokenId: tokenIdOf[uid]!, recipient: USER, functionName: await pullMethod(uid) })
  await pull()
  expect(await ownerOf(uid)).toBe(USER)
}

/**
 * The stale request, sent while getTokenNonce is slow, then failing, then dropped: 503
 * chain_state_unknown each time with nothing spent or queued; with a prompt answer, 409 token_moved.
 */
async function refusedUntilKnown(
  uid: string,
  claim: { claimId: number; otp: string },
  send: () => Promise<{ status: number; body: Record<string, unknown>; retryAfter?: unknown }>,
  // The signature endpoints need the chain's head too: an RPC that is gone is their chain_unavailable.
  whenDropped = 'chain_state_unknown',
) {
  const before = { counts: await counts(), claim: await gw.store.claims.get(claim.claimId), moves: (await gw.store.tokens.findByChip(uid))!.moves }
  for (const mode of [SLOW, 'error', 'drop'] as const) {
    proxy.nonceReads = mode
    const reads = proxy.nonceReadCount
    const started = Date.now()
    const res = await send()
    const code = mode === 'drop' ? whenDropped : 'chain_state_unknown'
    expect(res, `${JSON.stringify(mode)}: ${JSON.stringify(res.body)}`).toMatchObject({ status: 503, body: { error: code } })
    if (code === 'chain_state_unknown') expect(res.body.message).toMatch(/cannot be checked on the blockchain right now, so nothing was sent and nothing used up: try again in a moment \(chain 31337: (no answer within 300 ms|its RPC .*)\)$/)
    if (res.retryAfter !== undefined) expect(res.retryAfter).toBe('5')
    expect(proxy.nonceReadCount).toBeGreaterThan(reads)
    if (mode === SLOW) expect(Date.now() - started).toBeLessThan(SLOW.delayMs)
    // Nothing spent, nothing queued, the claim and its OTP as they were.
    expect(await counts()).toEqual(before.counts)
    expect(await gw.store.claims.get(claim.claimId)).toEqual(before.claim)
    expect((await gw.store.otps.get(claim.otp))!.usedAt).toBeNull()
    expect((await gw.store.tokens.findByChip(uid))!.moves).toBe(before.moves)
  }
  proxy.nonceReads = 'pass'
  expect(await send()).toMatchObject({ status: 409, body: { error: 'token_moved' } })
  expect(await counts()).toEqual(before.counts)
  expect((await gw.store.otps.get(claim.otp))!.usedAt).toBeNull()
  await gw.settle()
  expect(await ownerOf(uid)).toBe(USER)
}

describe('a request that moves a token, while its nonce read is slow or failing', () => {
  test('POST /phygitals/transfer/pullable with an OTP from before X\'s claim', async () => {
    const stale = await tap(TEE)
    await xPulls(TEE)
    await refusedUntilKnown(TEE, stale, () => inject('POST', '/phygitals/transfer/pullable', { headers: { 'x-service-code': stale.otp }, payload: { recipient: OTHER } }))
  })

  test('GET /phygitals/transfer-signature/pullable with an OTP from before X\'s claim', async () => {
    const stale = await tap(CAP)
    await xPulls(CAP)
    await refusedUntilKnown(CAP, stale, () => inject('GET', `/phygitals/transfer-signature/pullable?recipient=${OTHER}`, { headers: { 'x-service-code': stale.otp } }), 'chain_unavailable')
  })

  test('POST /phygitals/claim-registration/pullable (a 2-tap token\'s first tap) from before X\'s claim; then the known-address second tap', async () => {
    const stale = await tap(TWO_TAP)
    // X registers nothing: X's signature needs a registration of X first (the API key's), then the pull.
    const token = (await gw.store.tokens.findByChip(TWO_TAP))!
    const reg = await inject('POST', '/phygitals/claim-registration', {
      headers: { 'x-service-api-key': apiKey },
      payload: { contractAddress: token.contractAddress, chainId: String(token.chainId), tokenId: token.tokenId, recipient: USER },
    })
    expect(reg.status, JSON.stringify(reg.body)).toBe(200)
    gw.clock.offsetMs = 61_000
    try {
      await xPulls(TWO_TAP)
    } finally {
      gw.clock.offsetMs = 0
    }
    await refusedUntilKnown(TWO_TAP, stale, () => inject('POST', '/phygitals/claim-registration/pullable', { headers: { 'x-service-code': stale.otp }, payload: { recipient: OTHER } }))

    // Once X's registration window is over, a tap after X's claim registers with its OTP, which is spent.
    gw.clock.offsetMs = 2 * 3600_000
    try {
      const fresh = await tap(TWO_TAP)
      const registered = await inject('POST', '/phygitals/claim-registration/pullable', { headers: { 'x-service-code': fresh.otp }, payload: { recipient: OTHER.toLowerCase() } })
      expect(registered, JSON.stringify(registered.body)).toMatchObject({ status: 200, body: { recipient: OTHER, linkedToken: { tokenId: '5', chainId: '31337' } } })
      expect((await gw.store.otps.get(fresh.otp))!.usedAt).not.toBeNull()
      expect(await inject('POST', '/phygitals/claim-registration/pullable', { headers: { 'x-service-code': fresh.otp }, payload: { recipient: OTHER } })).toMatchObject({ status: 409, body: { error: 'otp_used' } })

      // The second tap, once allowed, is the station's known-address path: with the nonce read slow,
      // nothing moves, the claim stays open and the tap's row says why; later the kiosk finishes it.
      gw.clock.offsetMs += 61_000
      proxy.nonceReads = SLOW
      const before = await counts()
      const second = await tap(TWO_TAP)
      const claim = (await gw.store.claims.get(second.claimId))!
      expect(claim.step).toBe('open')
      expect((await gw.store.otps.get(second.otp))!.usedAt).toBeNull()
      expect(await counts()).toEqual(before)
      const row = (await gw.store.stationEvents.after(shop.stationId, 0)).filter((e) => e.kind === 'tap').at(-1)!
      expect(JSON.stringify(row.data)).toMatch(/was refused: chain_state_unknown/)
      proxy.nonceReads = 'pass'
      expect(await shop.kiosk(`/kiosk/claims/${second.claimId}/recipient`, { recipient: OTHER })).toMatchObject({ status: 200, body: { claim: { step: 'claimed' } } })
      await gw.settle()
      expect(await ownerOf(TWO_TAP)).toBe(OTHER)
    } finally {
      proxy.nonceReads = 'pass'
      gw.clock.offsetMs = 0
    }
  })

  test('the kiosk recipient of a claim station claim opened before X\'s claim', async () => {
    const stale = await tap(MUG)
    await xPulls(MUG)
    await refusedUntilKnown(MUG, stale, () => shop.kiosk(`/kiosk/claims/${stale.claimId}/recipient`, { recipient: OTHER }))
  })

  test('the phone claim link opened before X\'s claim', async () => {
    const stale = await tap(LAMP)
    const link = new URL((await shop.handoff(stale.claimId)).body.url).pathname.split('/')[2]!
    const opened = await shop.post(`/c/${link}/open`, {})
    expect(opened.status).toBe(200)
    await xPulls(LAMP)
    const session = opened.body.session as string
    await refusedUntilKnown(LAMP, stale, () => shop.post(`/c/${link}/recipient`, { session, recipient: OTHER }))
    expect(await shop.post(`/c/${link}/status`, { session })).toMatchObject({ status: 200, body: { claim: { step: 'moved' } } })
  })

  test('a token nobody moved outside is still refused while its nonce cannot be read, and moves once it can', async () => {
    const fresh = await tap(TEE)
    proxy.nonceReads = SLOW
    const refused = await inject('POST', '/phygitals/transfer/pullable', { headers: { 'x-service-code': fresh.otp }, payload: { recipient: OTHER } })
    expect(refused).toMatchObject({ status: 503, body: { error: 'chain_state_unknown' }, retryAfter: '5' })
    proxy.nonceReads = 'pass'
    const sent = await inject('POST', '/phygitals/transfer/pullable', { headers: { 'x-service-code': fresh.otp }, payload: { recipient: OTHER } })
    expect(sent.status, JSON.stringify(sent.body)).toBe(200)
    await gw.settle()
    expect(await ownerOf(TEE)).toBe(OTHER)
  })
})

describe('the API-key paths that move a token', () => {
  test('POST /phygitals/transfer and /transfer/self-service: 503 chain_state_unknown while the read is slow or failing, nothing queued; then accepted', async () => {
    const token = (await gw.store.tokens.findByChip(TEE))!
    const key = { contractAddress: token.contractAddress, chainId: token.chainId, tokenId: token.tokenId }
    const headers = { 'x-service-api-key': apiKey }
    const before = await counts()
    for (const mode of [SLOW, 'error'] as const) {
      proxy.nonceReads = mode
      expect(await inject('POST', '/phygitals/transfer', { headers, payload: { ...key, recipient: USER } })).toMatchObject({ status: 503, body: { error: 'chain_state_unknown' }, retryAfter: '5' })
      expect(await inject('POST', '/phygitals/transfer/self-service', { headers, payload: { tagUID: TEE, recipient: USER } })).toMatchObject({ status: 503, body: { error: 'chain_state_unknown' } })
      expect(await counts()).toEqual(before)
    }
    proxy.nonceReads = 'pass'
    const sent = await inject('POST', '/phygitals/transfer', { headers, payload: { ...key, recipient: USER } })
    expect(sent.status, JSON.stringify(sent.body)).toBe(200)
    await gw.settle()
    expect(await ownerOf(TEE)).toBe(USER)
  })
})

describe('a relayed transfer that reverts after a move the gateway did not make', () => {
  /** A kiosk claim to OTHER accepted while the relayer is held, X's pull landing first, then the relayer let go. */
  async function revertedClaim(uid: string, duringRecovery: NonceReadMode, beforeRelease?: () => Promise<unknown>) {
    proxy.nonceReads = 'pass'
    const contract = await contractOf(gw, shop.teamId)
    const pull = await signPull(gw, { apiKey, contract, tokenId: tokenIdOf[uid]!, recipient: USER, functionName: await pullMethod(uid) })
    const claim = await tap(uid)
    const held = await holdRelayer(gw)
    const sent = await shop.kiosk(`/kiosk/claims/${claim.claimId}/recipient`, { recipient: OTHER })
    expect(sent, JSON.stringify(sent.body)).toMatchObject({ status: 200, body: { claim: { step: 'claimed' } } })
    await pull()
    await beforeRelease?.()
    proxy.nonceReads = duringRecovery
    await held.release()
    const transferId = (await gw.store.claims.get(claim.claimId))!.transferId!
    const first = (await gw.store.transfers.get(transferId))!.chainTxId
    await until('the relayed transfer is mined (reverted) and dealt with', async () => {
      const row = await gw.store.chainTxs.get(first)
      return row?.status === 'mined' && (await gw.store.otps.get(claim.otp))!.usedAt === null ? row : undefined
    })
    await gw.settle()
    proxy.nonceReads = 'pass'
    // Given up, not re-signed: the transfer still names its reverted transaction, and X keeps the token.
    expect(await gw.store.transfers.get(transferId)).toMatchObject({ resigned: 0, chainTxId: first })
    expect(await gw.store.chainTxs.get(first)).toMatchObject({ status: 'mined', reverted: 1 })
    expect(await ownerOf(uid)).toBe(USER)
    return claim
  }

  test('the chain shows the outside move: given up, the OTP given back is stale (409 token_moved), ownerOf stays X', async () => {
    const claim = await revertedClaim(CAP, 'pass')
    const events = await gw.store.stationEvents.after(shop.stationId, 0)
    expect(events.some((e) => e.kind === 'tx' && e.data.status === 'failed' && /outside the gateway/.test(String(e.data.error)))).toBe(true)
    // The move was counted: the claim's own OTP, given back, no longer moves the token.
    expect(await inject('POST', '/phygitals/transfer/pullable', { headers: { 'x-service-code': claim.otp }, payload: { recipient: OTHER } })).toMatchObject({ status: 409, body: { error: 'token_moved' } })
    expect(await ownerOf(CAP)).toBe(USER)
  })

  test('a read that counted the outside move before the revert is dealt with does not make it known to the transfer: given up', async () => {
    // What a request for the token (Y retrying the stale link) does between the relayer recording the
    // revert and dealing with it: its quiet read counts X's pull in tokens.outside_moves. Written here
    // through the same repository call, since that window cannot be hit on purpose.
    const token = (await gw.store.tokens.findByChip(LAMP))!
    await revertedClaim(LAMP, 'pass', () => gw.store.tokens.noteOutsideMoves(token.id, (token.outsideMoves ?? 0) + 1))
  })

  test('the nonce cannot be read while the revert is dealt with: given up, not re-signed', async () => {
    await revertedClaim(MUG, 'error')
    const events = await gw.store.stationEvents.after(shop.stationId, 0)
    expect(events.some((e) => e.kind === 'tx' && e.data.status === 'failed' && /could not be read/.test(String(e.data.error)))).toBe(true)
  })
})

test('the OpenAPI document names chain_state_unknown on the 503 of every operation that moves a token', async () => {
  const doc = (await inject('GET', '/openapi.json')).body as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>>; components: { schemas: Record<string, { description?: string }> } }
  const operations = [
    ['/phygitals/transfer', 'post'],
    ['/phygitals/transfer/pullable', 'post'],
    ['/phygitals/transfer/self-service', 'post'],
    ['/phygitals/transfer-signature', 'get'],
    ['/phygitals/transfer-signature/pullable', 'get'],
    ['/phygitals/claim-registration/pullable', 'post'],
    ['/kiosk/claims/{id}/recipient', 'post'],
    ['/c/{token}/recipient', 'post'],
  ] as const
  for (const [path, method] of operations) expect(JSON.stringify(doc.paths[path]?.[method]?.responses['503']), `${method} ${path}`).toContain('TokenMoveUnavailable')
  expect(doc.components.schemas.TokenMoveUnavailable!.description).toMatch(/chain_state_unknown.*Retry-After/)
})
