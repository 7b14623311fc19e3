import { type Address, BaseError, ContractFunctionRevertedError, getAddress, type Hex, keccak256, toHex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { foundry } from 'viem/chains'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'
import { type ChainGateway, contractOf, createChainGateway, phygitalTeam, USER, USER_KEY } from '../helpers/chainGateway.js'
import { ALICE, BOB, call, metadata, seedTeam, tapChip } from '../helpers/gateway.js'

let gw: ChainGateway
let apiKey: string
let contract: Address

const PROOF_CHIP = '04CC0000000009'
const TWO_TAP_CHIP = '04CC0000000020'
const CHAIN_999_CONTRACT = getAddress('0x00000000000000000000000000000000000c0999')
/** A recipient no other test uses (USER and OTHER are ALICE and BOB: anvil's accounts 1 and 2). */
const CAROL = getAddress(keccak256(toHex('carol')).slice(0, 42))

/** The seed context seedTeam needs, for a chain gateway. */
const seedCtx = (g: ChainGateway) => ({ store: g.store, config: g.config, clock: { now: Date.now() } })

beforeAll(async () => {
  gw = await createChainGateway()
  const team = phygitalTeam('S', [
    ...['1', '2', '3', '4', '5', '6', '7', '8', '10', '11'].map((tokenId) => ({ tokenId, chips: [`04CC00000000${tokenId.padStart(2, '0')}`] })),
    { tokenId: '9', chips: [PROOF_CHIP] },
    { tokenId: '20', chips: [TWO_TAP_CHIP], twoTapClaim: { delaySeconds: 0, windowSeconds: 3600 } },
  ])
  const seeded = await seedTeam(seedCtx(gw), {
    ...team,
    proofEvents: [{ proofEventId: 77, name: 'proof', chips: [PROOF_CHIP] }],
    tokens: [...(team.tokens as object[]), { chainId: 999, contractAddress: CHAIN_999_CONTRACT, tokenId: '1' }],
  })
  apiKey = seeded.apiKey
  contract = await contractOf(gw, seeded.teamId)
  gw.relayer.wake(31337)
  await gw.settle()
})
afterAll(async () => gw?.close())

const ownerOf = (tokenId: bigint) => gw.publicClient.readContract({ address: contract, abi: phygitalTokenAbi, functionName: 'ownerOf', args: [tokenId] })
const tokenNonceOf = (tokenId: bigint) =>
  gw.publicClient.readContract({ address: contract, abi: phygitalTokenAbi, functionName: 'getTokenNonce', args: [tokenId] })
const otpRow = (code: string) =>
  gw.store.db.prepare('SELECT used_at AS usedAt, used_for AS usedFor FROM otps WHERE code = ?').get(code) as { usedAt: number | null; usedFor: string | null }

type Signature = { signature: Hex; blockExpiry: string; tokenRef: { contractAddress: string; tokenId: string; chainId: string } }

const query = (p: Record<string, string>) => new URLSearchParams(p).toString()
const keyParams = (tokenId: string, recipient: string) => ({ contractAddress: contract, chainId: '31337', tokenId, recipient })

/** GET /phygitals/transfer-signature with the parameters in the query string. */
const signature = (tokenId: string, recipient: string, key = apiKey) =>
  call(gw, { url: `/phygitals/transfer-signature?${query(keyParams(tokenId, recipient))}`, headers: { 'x-service-api-key': key } })
const pullableSignature = (otp: string, recipient: string, g: ChainGateway = gw) =>
  call(g, { url: `/phygitals/transfer-signature/pullable?${query({ recipient })}`, headers: { 'x-service-code': otp } })

async function signed(tokenId: string, recipient: string): Promise<Signature> {
  const res = await signature(tokenId, recipient)
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body
}

async function otpOf(uid: string, g: ChainGateway = gw): Promise<{ token: string; proofEvents: string[] }> {
  const ref = await tapChip({ store: g.store, clock: { now: Date.now() + g.clock.offsetMs } }, uid)
  const res = await call(g, { url: `/refs/${ref}` })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return { token: res.body.linkedToken.otp, proofEvents: res.body.proofEvents.map((e: { otp: string }) => e.otp) }
}

type Method = 'mintNFT' | 'claimNFT'
const userAccount = privateKeyToAccount(USER_KEY)
const args = (s: Signature, recipient: Address, tokenId: bigint) => [s.signature, BigInt(s.blockExpiry), recipient, tokenId] as const

/** What a user's wallet does with the signature: send mintNFT/claimNFT itself (the gateway's relayer is not involved). */
async function submit(method: Method, s: Signature, recipient: Address, tokenId: bigint, opts: { gas?: bigint } = {}) {
  const hash = await gw.wallet(USER_KEY).writeContract({
    address: contract,
    abi: phygitalTokenAbi,
    functionName: method,
    args: args(s, recipient, tokenId),
    account: userAccount,
    chain: foundry,
    ...(opts.gas === undefined ? {} : { gas: opts.gas }),
  })
  return gw.publicClient.waitForTransactionReceipt({ hash })
}

/** eth_call of mintNFT/claimNFT from the user's account: undefined when it would succeed, else the custom error's name. */
async function simulate(method: Method, s: Signature, recipient: Address, tokenId: bigint): Promise<string | undefined> {
  try {
    await gw.publicClient.simulateContract({ address: contract, abi: phygitalTokenAbi, functionName: method, args: args(s, recipient, tokenId), account: USER })
    return undefined
  } catch (error) {
    const revert = error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : null
    if (revert instanceof ContractFunctionRevertedError) return revert.data?.errorName
    throw error
  }
}

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  expect(res.body).toMatchObject({ success: false, error: code })
}

describe('GET /phygitals/transfer-signature (API key)', () => {
  test('answers a signature that mints an unminted token to the recipient, then one that claims it', async () => {
    const head = await gw.publicClient.getBlockNumber({ cacheTime: 0 })
    const res = await signature('1', ALICE.toLowerCase())
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toEqual({
      signature: expect.stringMatching(/^0x[0-9a-f]{130}$/),
      blockExpiry: expect.stringMatching(/^\d+$/),
      tokenRef: { contractAddress: contract, tokenId: '1', chainId: '31337' },
    })
    expect(BigInt(res.body.blockExpiry)).toBe(head + BigInt(gw.config.chain.signatureBlocks))

    const minted = await submit('mintNFT', res.body, ALICE, 1n)
    expect(minted.status).toBe('success')
    expect(await ownerOf(1n)).toBe(ALICE)
    expect(await tokenNonceOf(1n)).toBe(1n)

    // The token is minted now: a signature for BOB moves it with claimNFT, without ALICE's approval.
    const claim = await signed('1', BOB)
    expect(await simulate('mintNFT', claim, BOB, 1n)).toBe('ERC721InvalidSender')
    expect((await submit('claimNFT', claim, BOB, 1n)).status).toBe('success')
    expect(await ownerOf(1n)).toBe(BOB)
    expect(await tokenNonceOf(1n)).toBe(2n)
    // Nothing went through the relayer.
    expect(gw.store.db.prepare("SELECT count(*) AS n FROM chain_txs WHERE kind = 'transfer'").get()).toEqual({ n: 0 })
  })

  test('the parameters may come as a JSON body on the GET, or split between query and body when they agree', async () => {
    const body = await call(gw, {
      method: 'GET',
      url: '/phygitals/transfer-signature',
      headers: { 'x-service-api-key': apiKey, 'content-type': 'application/json' },
      payload: { contractAddress: contract, chainId: 31337, tokenId: '2', recipient: ALICE },
    })
    expect(body.status, JSON.stringify(body.body)).toBe(200)
    expect(body.body.tokenRef).toEqual({ contractAddress: contract, tokenId: '2', chainId: '31337' })
    expect(await simulate('mintNFT', body.body, ALICE, 2n)).toBeUndefined()

    const split = await call(gw, {
      method: 'GET',
      url: `/phygitals/transfer-signature?${query({ chainId: '31337', tokenId: '2' })}`,
      headers: { 'x-service-api-key': apiKey, 'content-type': 'application/json' },
      payload: { contractAddress: contract, chainId: 31337, recipient: ALICE },
    })
    expect(split.status, JSON.stringify(split.body)).toBe(200)
    expect(await simulate('mintNFT', split.body, ALICE, 2n)).toBeUndefined()

    const pullable = await call(gw, {
      method: 'GET',
      url: '/phygitals/transfer-signature/pullable',
      headers: { 'x-service-code': (await otpOf('04CC0000000002')).token, 'content-type': 'application/json' },
      payload: { recipient: ALICE },
    })
    expect(pullable.status, JSON.stringify(pullable.body)).toBe(200)
    expect(pullable.body.tokenRef).toEqual({ contractAddress: contract, tokenId: '2', chainId: '31337' })
  })

  test('query and body disagreeing is 400 conflicting_parameter; a body that is not JSON is 400 invalid_json', async () => {
    const conflict = await call(gw, {
      method: 'GET',
      url: `/phygitals/transfer-signature?${query(keyParams('2', ALICE))}`,
      headers: { 'x-service-api-key': apiKey, 'content-type': 'application/json' },
      payload: { tokenId: '3' },
    })
    expectError(conflict, 400, 'conflicting_parameter')
    const bad = await call(gw, {
      method: 'GET',
      url: '/phygitals/transfer-signature',
      headers: { 'x-service-api-key': apiKey, 'content-type': 'application/json' },
      payload: '{"contractAddress": ',
    })
    expectError(bad, 400, 'invalid_json')
    const otp = (await otpOf('04CC0000000003')).token
    const badPullable = await call(gw, {
      method: 'GET',
      url: '/phygitals/transfer-signature/pullable',
      headers: { 'x-service-code': otp, 'content-type': 'application/json' },
      payload: 'recipient=0x',
    })
    expectError(badPullable, 400, 'invalid_json')
    expect(otpRow(otp).usedAt).toBeNull()
  })

  test('the same address in another case in query and body is not a conflict', async () => {
    const res = await call(gw, {
      method: 'GET',
      url: `/phygitals/transfer-signature?${query(keyParams('2', ALICE))}`,
      headers: { 'x-service-api-key': apiKey, 'content-type': 'application/json' },
      payload: { contractAddress: contract.toLowerCase(), recipient: ALICE.toLowerCase() },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
  })

  test('missing parameters are 400 validation_failed; an unknown token 404; a chain without keys 400 chain_not_configured', async () => {
    const missing = await call(gw, { url: `/phygitals/transfer-signature?${query({ tokenId: '2' })}`, headers: { 'x-service-api-key': apiKey } })
    expectError(missing, 400, 'validation_failed')
    expect(Object.keys(missing.body.errors).sort()).toEqual(['chainId', 'contractAddress', 'recipient'])
    expectError(await signature('424242', ALICE), 404, 'token_not_found')
    const chain999 = await call(gw, {
      url: `/phygitals/transfer-signature?${query({ contractAddress: CHAIN_999_CONTRACT, chainId: '999', tokenId: '1', recipient: ALICE })}`,
      headers: { 'x-service-api-key': apiKey },
    })
    expectError(chain999, 400, 'chain_not_configured')
    expectError(await signature('2', 'alice.eth'), 400, 'ens_unavailable')
    expectError(await signature('2', '0x1234'), 400, 'invalid_recipient')
    expectError(await call(gw, { url: `/phygitals/transfer-signature?${query(keyParams('2', ALICE))}` }), 401, 'api_key_missing')
  })
})

describe('what the contract accepts', () => {
  test('an expired signature reverts with SignatureExpired', async () => {
    const s = await signed('3', ALICE)
    expect(await simulate('mintNFT', s, ALICE, 3n)).toBeUndefined()
    const head = await gw.publicClient.getBlockNumber({ cacheTime: 0 })
    await gw.testClient.mine({ blocks: Number(BigInt(s.blockExpiry) - head) })
    expect(await gw.publicClient.getBlockNumber({ cacheTime: 0 })).toBe(BigInt(s.blockExpiry))
    expect(await simulate('mintNFT', s, ALICE, 3n)).toBe('SignatureExpired')
    const receipt = await submit('mintNFT', s, ALICE, 3n, { gas: 200_000n })
    expect(receipt.status).toBe('reverted')
    await expect(ownerOf(3n)).rejects.toThrow()
    // A fresh one works.
    expect((await submit('mintNFT', await signed('3', ALICE), ALICE, 3n)).status).toBe('success')
    expect(await ownerOf(3n)).toBe(ALICE)
  })

  test('a signature works once: the second use reverts with InvalidSignature', async () => {
    const s = await signed('4', ALICE)
    expect((await submit('mintNFT', s, ALICE, 4n)).status).toBe('success')
    expect(await simulate('mintNFT', s, ALICE, 4n)).toBe('InvalidSignature')
    expect(await simulate('claimNFT', s, ALICE, 4n)).toBe('InvalidSignature')
    const again = await submit('claimNFT', s, ALICE, 4n, { gas: 200_000n })
    expect(again.status).toBe('reverted')
  })

  test('a signature for ALICE submitted for BOB (or another token) reverts with InvalidSignature', async () => {
    const s = await signed('5', ALICE)
    expect(await simulate('mintNFT', s, BOB, 5n)).toBe('InvalidSignature')
    expect(await simulate('mintNFT', s, ALICE, 6n)).toBe('InvalidSignature')
    expect(await simulate('mintNFT', s, ALICE, 5n)).toBeUndefined()
  })

  test('a signature handed out while relayed transfers of the token are queued counts their moves', async () => {
    // Hold the relayer so the transfer stays queued while the signature is made.
    await gw.relayer.stop()
    let relayed: { status: number; body: any }
    let s: Signature
    try {
      relayed = await call(gw, {
        method: 'POST',
        url: '/phygitals/transfer',
        headers: { 'x-service-api-key': apiKey },
        payload: { contractAddress: contract, chainId: 31337, tokenId: '7', recipient: CAROL },
      })
      expect(relayed.status, JSON.stringify(relayed.body)).toBe(200)
      s = await signed('7', ALICE)
      // Not usable yet: it carries the token nonce after the queued mint's.
      expect(await simulate('claimNFT', s, ALICE, 7n)).toBe('InvalidSignature')
    } finally {
      gw.relayer.start()
    }
    await gw.settle()
    expect(await ownerOf(7n)).toBe(CAROL)
    expect(await simulate('claimNFT', s, ALICE, 7n)).toBeUndefined()
    expect((await submit('claimNFT', s, ALICE, 7n)).status).toBe('success')
    expect(await ownerOf(7n)).toBe(ALICE)
    expect(await tokenNonceOf(7n)).toBe(2n)
  })
})

describe('GET /phygitals/transfer-signature/pullable (OTP)', () => {
  test("spends the tap's OTP; a second call is 409 otp_used", async () => {
    const { token: otp } = await otpOf('04CC0000000006')
    const res = await pullableSignature(otp, ALICE)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toEqual({
      signature: expect.stringMatching(/^0x[0-9a-f]{130}$/),
      blockExpiry: expect.stringMatching(/^\d+$/),
      tokenRef: { contractAddress: contract, tokenId: '6', chainId: '31337' },
    })
    expect(otpRow(otp)).toEqual({ usedAt: expect.any(Number), usedFor: 'transfer-signature' })
    const view = await call(gw, { url: `/otps/${otp}` })
    expect(view.body).toMatchObject({ isExpired: true, usedAt: expect.any(String) })
    expectError(await pullableSignature(otp, ALICE), 409, 'otp_used')
    expect((await submit('mintNFT', res.body, ALICE, 6n)).status).toBe('success')
    expect(await ownerOf(6n)).toBe(ALICE)
  })

  test('one OTP used by two signature requests at once: exactly one gets a signature', async () => {
    const { token: otp } = await otpOf('04CC0000000010')
    const results = await Promise.all([pullableSignature(otp, ALICE), pullableSignature(otp, BOB)])
    expect(results.map((r) => r.status).sort()).toEqual([200, 409])
    expect(results.find((r) => r.status === 409)!.body.error).toBe('otp_used')
  })

  test('an OTP of another type is 403 otp_wrong_type and stays unspent; bad or missing codes are 401', async () => {
    const { token, proofEvents } = await otpOf(PROOF_CHIP)
    expect(proofEvents).toHaveLength(1)
    expectError(await pullableSignature(proofEvents[0]!, ALICE), 403, 'otp_wrong_type')
    expect(otpRow(proofEvents[0]!).usedAt).toBeNull()
    expectError(await pullableSignature('no-such-code', ALICE), 401, 'otp_invalid')
    expectError(await call(gw, { url: `/phygitals/transfer-signature/pullable?${query({ recipient: ALICE })}` }), 401, 'otp_missing')
    // A bad recipient does not spend the OTP either.
    expectError(await pullableSignature(token, '0x1234'), 400, 'invalid_recipient')
    expect(otpRow(token).usedAt).toBeNull()
    expect((await pullableSignature(token, ALICE)).status).toBe(200)
  })
})

describe('2-tap claim', () => {
  test('a 2-tap token without a registration is 409 claim_registration_required, by API key and by OTP (unspent)', async () => {
    expectError(await signature('20', ALICE), 409, 'claim_registration_required')
    const { token: otp } = await otpOf(TWO_TAP_CHIP)
    expectError(await pullableSignature(otp, ALICE), 409, 'claim_registration_required')
    expect(otpRow(otp).usedAt).toBeNull()

    const reg = await call(gw, {
      method: 'POST',
      url: '/phygitals/claim-registration',
      headers: { 'x-service-api-key': apiKey },
      payload: { contractAddress: contract, chainId: 31337, tokenId: '20', recipient: ALICE },
    })
    expect(reg.status, JSON.stringify(reg.body)).toBe(200)
    expectError(await signature('20', BOB), 409, 'claim_registration_required')
    const s = await signed('20', ALICE)
    expect((await submit('mintNFT', s, ALICE, 20n)).status).toBe('success')
    expect(await ownerOf(20n)).toBe(ALICE)
  })
})

describe('chain unreachable', () => {
  test('the signature endpoints answer 503 chain_unavailable and the OTP is not spent', async () => {
    const gw2 = await createChainGateway()
    try {
      const uid = '04DD0000000001'
      const { apiKey: key2 } = await seedTeam(seedCtx(gw2), {
        name: 'Offline',
        chips: [{ uid }],
        tokens: [{ chainId: 31337, contractAddress: contract, tokenId: '11', chips: [uid], metadata: metadata() }],
      })
      await gw2.chains.embedded!.stop()

      const byKey = await call(gw2, {
        url: `/phygitals/transfer-signature?${query(keyParams('11', ALICE))}`,
        headers: { 'x-service-api-key': key2 },
      })
      expectError(byKey, 503, 'chain_unavailable')

      const { token: otp } = await otpOf(uid, gw2)
      expectError(await pullableSignature(otp, ALICE, gw2), 503, 'chain_unavailable')
      const row = gw2.store.db.prepare('SELECT used_at AS usedAt FROM otps WHERE code = ?').get(otp) as { usedAt: number | null }
      expect(row.usedAt).toBeNull()
      expect((await call(gw2, { url: `/otps/${otp}` })).body).toMatchObject({ isExpired: false })
      expect((await call(gw2, { url: `/otps/${otp}` })).body.usedAt).toBeUndefined()

      // A relayed transfer needs the token's moves too (issue 24 §1: a pull made meanwhile would stay
      // unseen): 503 chain_state_unknown while the chain is down, the tap still unspent, nothing queued.
      const open = (await gw2.store.chainTxs.open(31337)).length
      const refused = await call(gw2, { method: 'POST', url: '/phygitals/transfer/pullable', headers: { 'x-service-code': otp }, payload: { recipient: ALICE } })
      expectError(refused, 503, 'chain_state_unknown')
      expect(refused.headers['retry-after']).toBe('5')
      expect(await gw2.store.chainTxs.open(31337)).toHaveLength(open)
      expect((await call(gw2, { url: `/otps/${otp}` })).body).toMatchObject({ isExpired: false })
    } finally {
      await gw2.close()
    }
  })
})
