import { type Address, getAddress, keccak256, toHex } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'
import { createApiKey } from '../../src/auth/apiKeys.js'
import { importData, parseImportFile } from '../../src/importer/importData.js'
import { loadGatewaySecret } from '../../src/keys/gatewaySecret.js'
import type { PostgresStore, SqliteStore } from '../../src/db/store.js'
import { type ChainGateway, contractOf, createBackendChainGateway, holdRelayer, phygitalTeam, pullWithSignature } from '../helpers/chainGateway.js'
import { ALICE, BOB, call, queryRows, tapChip } from '../helpers/gateway.js'

// Issue 17 §2: an OTP is bound to its token's state when its ref was queried. After a move of the
// token by any path, every earlier OTP is refused with 409 token_moved on every endpoint that takes
// one, before anything is spent; an OTP of a tap after the move works.

let gw: ChainGateway<SqliteStore | PostgresStore>
let apiKey: string
let contract: Address

const CHIP = {
  otp: '04CC0000000001',
  apiKey: '04CC0000000002',
  selfService: '04CC0000000003',
  pull: '04CC0000000004',
  twoTap: '04CC0000000005',
  pullRelayed: '04CC0000000006',
  givenUp: '04CC0000000007',
} as const
const TOKEN = { otp: '1', apiKey: '2', selfService: '3', pull: '4', twoTap: '5', pullRelayed: '6', givenUp: '7' } as const

beforeAll(async () => {
  gw = await createBackendChainGateway()
  const secret = loadGatewaySecret({ dataDir: gw.dataDir })
  const team = phygitalTeam('M', [
    { tokenId: TOKEN.otp, chips: [CHIP.otp] },
    { tokenId: TOKEN.apiKey, chips: [CHIP.apiKey] },
    { tokenId: TOKEN.selfService, chips: [CHIP.selfService] },
    { tokenId: TOKEN.pull, chips: [CHIP.pull] },
    { tokenId: TOKEN.twoTap, chips: [CHIP.twoTap], twoTapClaim: { delaySeconds: 0, windowSeconds: 3600 } },
    { tokenId: TOKEN.pullRelayed, chips: [CHIP.pullRelayed] },
    { tokenId: TOKEN.givenUp, chips: [CHIP.givenUp] },
  ])
  const summary = await importData(gw.store, parseImportFile({ teams: [team] }), { config: gw.config, now: Date.now(), secret })
  const teamId = summary.teams[0]!.id
  apiKey = (await gw.store.tx((tx) => createApiKey(tx, { teamId, label: 'm', now: Date.now() }))).apiKey
  contract = await contractOf(gw, teamId)
  gw.relayer.wake(31337)
  await gw.settle()
}, 60_000)
afterAll(async () => gw?.close())

const ownerOf = (tokenId: string) => gw.publicClient.readContract({ address: contract, abi: phygitalTokenAbi, functionName: 'ownerOf', args: [BigInt(tokenId)] })
const key = (tokenId: string) => ({ contractAddress: contract, chainId: '31337', tokenId })
const count = async (table: 'chain_txs' | 'transfers' | 'claim_registrations') => (await queryRows<{ n: number }>(gw.store, `SELECT count(*) AS n FROM ${table}`))[0]!.n
const counts = async () => ({ chainTxs: await count('chain_txs'), transfers: await count('transfers'), registrations: await count('claim_registrations') })
const otpUsedAt = async (code: string) => (await gw.store.otps.get(code))!.usedAt

const pullable = (otp: string, recipient: string) =>
  call(gw, { method: 'POST', url: '/phygitals/transfer/pullable', headers: { 'x-service-code': otp }, payload: { recipient } })
const registerPullable = (otp: string, recipient: string) =>
  call(gw, { method: 'POST', url: '/phygitals/claim-registration/pullable', headers: { 'x-service-code': otp }, payload: { recipient } })
const signaturePullable = (otp: string, recipient: string) =>
  call(gw, { url: `/phygitals/transfer-signature/pullable?${new URLSearchParams({ recipient })}`, headers: { 'x-service-code': otp } })
const transferByKey = (tokenId: string, recipient: string) =>
  call(gw, { method: 'POST', url: '/phygitals/transfer', headers: { 'x-service-api-key': apiKey }, payload: { ...key(tokenId), recipient } })

/** A fresh tap of the chip and the PHYGITAL_CLAIM OTP its ref hands out. */
async function otpOf(uid: string): Promise<string> {
  const ref = await tapChip({ store: gw.store, clock: { now: Date.now() } }, uid)
  const res = await call(gw, { url: `/refs/${ref}` })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body.linkedToken.otp as string
}

/** The refusal every stale OTP gets, with nothing queued, recorded or spent. */
async function expectStale(otp: string, request: () => Promise<{ status: number; body: { error?: string } }>): Promise<void> {
  const before = await counts()
  const res = await request()
  expect(res.status, JSON.stringify(res.body)).toBe(409)
  expect(res.body.error).toBe('token_moved')
  expect(await counts()).toEqual(before)
  expect(await otpUsedAt(otp)).toBeNull()
}

/** A user's own pull of the token with a signature from GET /phygitals/transfer-signature. */
const userPull = (tokenId: string, recipient: Address, functionName: 'mintNFT' | 'claimNFT') => pullWithSignature(gw, { apiKey, contract, tokenId, recipient, functionName })

describe('an OTP from a ref queried before the token moved', () => {
  test('OTP transfer: of two taps, the first OTP moves the token; the second is refused on pullable, signature and registration; a tap after works', async () => {
    const first = await otpOf(CHIP.otp)
    const second = await otpOf(CHIP.otp)
    expect((await pullable(first, ALICE)).status).toBe(200)
    await expectStale(second, () => pullable(second, BOB))
    await expectStale(second, () => signaturePullable(second, BOB))
    await expectStale(second, () => registerPullable(second, BOB))
    // Read back, the stale code is expired (not used): a client does not offer it.
    expect((await call(gw, { url: `/otps/${second}` })).body).toMatchObject({ isExpired: true })
    expect((await call(gw, { url: `/otps/${second}` })).body.usedAt).toBeUndefined()
    await gw.settle()
    expect(await ownerOf(TOKEN.otp)).toBe(ALICE)
    const fresh = await otpOf(CHIP.otp)
    expect((await pullable(fresh, BOB)).status).toBe(200)
    await gw.settle()
    expect(await ownerOf(TOKEN.otp)).toBe(BOB)
  })

  test('API-key transfer (POST /phygitals/transfer): the older OTP is refused; a tap after works', async () => {
    const stale = await otpOf(CHIP.apiKey)
    expect((await transferByKey(TOKEN.apiKey, ALICE)).status).toBe(200)
    await expectStale(stale, () => pullable(stale, BOB))
    await gw.settle()
    expect(await ownerOf(TOKEN.apiKey)).toBe(ALICE)
    const fresh = await otpOf(CHIP.apiKey)
    expect((await pullable(fresh, BOB)).status).toBe(200)
    await gw.settle()
    expect(await ownerOf(TOKEN.apiKey)).toBe(BOB)
  })

  test('chip self-service (POST /phygitals/transfer/self-service): the older OTP is refused', async () => {
    const stale = await otpOf(CHIP.selfService)
    const moved = await call(gw, { method: 'POST', url: '/phygitals/transfer/self-service', headers: { 'x-service-api-key': apiKey }, payload: { tagUID: CHIP.selfService, recipient: ALICE } })
    expect(moved.status, JSON.stringify(moved.body)).toBe(200)
    await expectStale(stale, () => pullable(stale, BOB))
    await gw.settle()
    expect(await ownerOf(TOKEN.selfService)).toBe(ALICE)
  })

  test('signature pull (a user submits mintNFT with a signature): the gateway finds the move on chain and refuses the older OTP; a tap after works', async () => {
    const stale = await otpOf(CHIP.pull)
    await userPull(TOKEN.pull, ALICE, 'mintNFT')
    await expectStale(stale, () => pullable(stale, BOB))
    expect(await ownerOf(TOKEN.pull)).toBe(ALICE)
    // The move found stays counted: refused again on the other endpoints.
    await expectStale(stale, () => registerPullable(stale, BOB))
    await expectStale(stale, () => signaturePullable(stale, BOB))
    const fresh = await otpOf(CHIP.pull)
    expect((await pullable(fresh, BOB)).status).toBe(200)
    await gw.settle()
    expect(await ownerOf(TOKEN.pull)).toBe(BOB)
  })

  test('a pull after relayed transfers of ours: only the outside move counts, so OTPs of taps after it still work', async () => {
    expect((await transferByKey(TOKEN.pullRelayed, ALICE)).status).toBe(200)
    await gw.settle()
    const before = await otpOf(CHIP.pullRelayed)
    // Our own landed transfer is not counted twice when the chain is read.
    expect((await pullable(before, BOB)).status).toBe(200)
    await gw.settle()
    const stale = await otpOf(CHIP.pullRelayed)
    await userPull(TOKEN.pullRelayed, ALICE, 'claimNFT')
    await expectStale(stale, () => signaturePullable(stale, BOB))
    const fresh = await otpOf(CHIP.pullRelayed)
    expect((await pullable(fresh, BOB)).status).toBe(200)
    await gw.settle()
    expect(await ownerOf(TOKEN.pullRelayed)).toBe(BOB)
  })

  test('2-tap registration (POST /phygitals/claim-registration/pullable): a first tap from before the move is refused; one after registers', async () => {
    const stale = await otpOf(CHIP.twoTap)
    const registered = await call(gw, { method: 'POST', url: '/phygitals/claim-registration', headers: { 'x-service-api-key': apiKey }, payload: { ...key(TOKEN.twoTap), recipient: ALICE } })
    expect(registered.status, JSON.stringify(registered.body)).toBe(200)
    expect((await transferByKey(TOKEN.twoTap, ALICE)).status).toBe(200)
    await expectStale(stale, () => registerPullable(stale, BOB))
    const fresh = await otpOf(CHIP.twoTap)
    const again = await registerPullable(fresh, BOB)
    expect(again.status, JSON.stringify(again.body)).toBe(200)
    await gw.settle()
    expect(await ownerOf(TOKEN.twoTap)).toBe(ALICE)
  })

  test('a transfer given up after a revert gives its OTP back bound to its own move: it works again, the OTP from before it stays refused', async () => {
    const before = await otpOf(CHIP.givenUp)
    const own = await otpOf(CHIP.givenUp)
    const blocked = getAddress(keccak256(toHex('takes no tokens')).slice(0, 42))
    const relayer = await holdRelayer(gw)
    expect((await pullable(own, blocked)).status).toBe(200)
    // Code appears at the address before the transaction goes out: it reverts, and is given up.
    await gw.testClient.setCode({ address: blocked, bytecode: '0x00' })
    await relayer.release()
    await gw.settle()
    expect(await otpUsedAt(own)).toBeNull()
    await expectStale(before, () => pullable(before, BOB))
    expect((await pullable(own, ALICE)).status).toBe(200)
    await gw.settle()
    expect(await ownerOf(TOKEN.givenUp)).toBe(ALICE)
  })
})
