import { type Address, getAddress, type Hex, keccak256, toHex } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'
import { createApiKey } from '../../src/auth/apiKeys.js'
import { importData, parseImportFile } from '../../src/importer/importData.js'
import { loadGatewaySecret } from '../../src/keys/gatewaySecret.js'
import { type ChainGateway, contractOf, createChainGateway, phygitalTeam, pullWithSignature, USER } from '../helpers/chainGateway.js'
import { ALICE, BOB, call, tapChip } from '../helpers/gateway.js'

let gw: ChainGateway
let apiKey: string
let contract: Address
let otherApiKey: string
let otherContract: Address

/** Chips with no token (chip_not_linked), a token on a chain this gateway has no keys for, and the tokens each test uses. */
const FREE_CHIP = '04AA00000000FF'
const CHAIN_999_CONTRACT = getAddress('0x00000000000000000000000000000000000c0999')
const CHAIN_999_CHIP = '04AA0000000999'
const MANY = 20
const manyTokenId = (i: number) => String(100 + i)
const manyChip = (i: number) => `04AA00000001${i.toString(16).padStart(2, '0').toUpperCase()}`
/** Fresh EOAs (no code), one per concurrent transfer. */
const recipientOf = (i: number) => getAddress(keccak256(toHex(`recipient ${i}`)).slice(0, 42))
const DRIFTER = getAddress(keccak256(toHex('drifter')).slice(0, 42))

beforeAll(async () => {
  gw = await createChainGateway()
  const secret = loadGatewaySecret({ dataDir: gw.dataDir })
  const t = phygitalTeam('T', [
    { tokenId: '1', chips: ['04AA000000000A'] },
    { tokenId: '2', chips: ['04AA0000000002'] },
    { tokenId: '4', chips: ['04AA0000000004'] },
    { tokenId: '5', chips: ['04AA0000000005'] },
    { tokenId: '6', chips: ['04AA0000000006'] },
    { tokenId: '7', chips: ['04AA0000000007'] },
    { tokenId: '8', chips: [] },
    { tokenId: '9', chips: ['04AA0000000009'] },
    { tokenId: '10', chips: ['04AA0000000010'], twoTapClaim: { delaySeconds: 0, windowSeconds: 3600 } },
    { tokenId: '11', chips: ['04AA0000000011'], twoTapClaim: { delaySeconds: 600, windowSeconds: 3600 } },
    { tokenId: '12', chips: ['04AA0000000012'], twoTapClaim: { delaySeconds: 0, windowSeconds: 60 } },
    { tokenId: '40', chips: ['04AA0000000040'] },
    { tokenId: '41', chips: [] },
    { tokenId: '42', chips: [] },
    { tokenId: '43', chips: [] },
    { tokenId: '44', chips: [] },
    { tokenId: '45', chips: [] },
    ...Array.from({ length: MANY }, (_, i) => ({ tokenId: manyTokenId(i), chips: [manyChip(i)] })),
  ])
  const team = {
    ...t,
    chips: [...(t.chips as object[]), { uid: FREE_CHIP }, { uid: CHAIN_999_CHIP }],
    tokens: [...(t.tokens as object[]), { chainId: 999, contractAddress: CHAIN_999_CONTRACT, tokenId: '1', chips: [CHAIN_999_CHIP] }],
  }
  const other = phygitalTeam('U', [{ tokenId: '1', chips: ['04BB0000000001'] }])
  const summary = await importData(gw.store, parseImportFile({ teams: [team, other] }), { config: gw.config, now: Date.now(), secret })
  const [tId, uId] = summary.teams.map((s) => s.id) as [number, number]
  apiKey = (await gw.store.tx((tx) => createApiKey(tx, { teamId: tId, label: 't', now: Date.now() }))).apiKey
  otherApiKey = (await gw.store.tx((tx) => createApiKey(tx, { teamId: uId, label: 'u', now: Date.now() }))).apiKey
  contract = await contractOf(gw, tId)
  otherContract = await contractOf(gw, uId)
  gw.relayer.wake(31337)
  await gw.settle()
})
afterAll(async () => gw?.close())

const ownerOf = (tokenId: bigint, address: Address = contract) =>
  gw.publicClient.readContract({ address, abi: phygitalTokenAbi, functionName: 'ownerOf', args: [tokenId] })
const tokenNonceOf = (tokenId: bigint) =>
  gw.publicClient.readContract({ address: contract, abi: phygitalTokenAbi, functionName: 'getTokenNonce', args: [tokenId] })

const now = () => Date.now() + gw.clock.offsetMs
const count = (table: 'chain_txs' | 'transfers') => (gw.store.db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n
const counts = () => ({ chainTxs: count('chain_txs'), transfers: count('transfers') })
const otpUsedAt = (code: string) => (gw.store.db.prepare('SELECT used_at AS usedAt FROM otps WHERE code = ?').get(code) as { usedAt: number | null }).usedAt

type TransferDbRow = { id: number; recipient: string; method: string; via: string; resigned: number; chainTxId: number; claimRegistrationId: number | null }
type ChainTxDbRow = { id: number; status: string; reverted: number | null; txHash: string; initialTxHash: string }
/** The transfer record of a transaction that was not re-signed, and that transaction. */
function transferOf(initialTxHash: string): { transfer: TransferDbRow; first: ChainTxDbRow } {
  const first = chainTxByInitialHash(initialTxHash)
  const transfer = gw.store.db
    .prepare(
      `SELECT id, recipient, method, via, resigned, chain_tx_id AS chainTxId, claim_registration_id AS claimRegistrationId
       FROM transfers WHERE chain_tx_id = ?`,
    )
    .get(first.id) as TransferDbRow
  return { transfer, first }
}

/** The transfer records of one token, oldest first. */
const transfersOfToken = (tokenId: string) =>
  gw.store.db
    .prepare(
      `SELECT tr.id, tr.recipient, tr.method, tr.via, tr.resigned, tr.chain_tx_id AS chainTxId, tr.claim_registration_id AS claimRegistrationId
       FROM transfers tr JOIN tokens t ON t.id = tr.token_id WHERE t.contract_address = ? AND t.token_id = ? ORDER BY tr.id`,
    )
    .all(contract, tokenId) as TransferDbRow[]
const chainTx = (id: number) =>
  gw.store.db.prepare('SELECT id, status, reverted, tx_hash AS txHash, initial_tx_hash AS initialTxHash FROM chain_txs WHERE id = ?').get(id) as ChainTxDbRow
const chainTxByInitialHash = (hash: string) =>
  gw.store.db
    .prepare('SELECT id, status, reverted, tx_hash AS txHash, initial_tx_hash AS initialTxHash FROM chain_txs WHERE initial_tx_hash = ?')
    .get(hash) as ChainTxDbRow

/** Polls until `check` holds (the relayer re-signs a reverted transfer only after reading the chain). */
async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const transfer = (payload: Record<string, unknown>, key = apiKey) =>
  call(gw, { method: 'POST', url: '/phygitals/transfer', headers: { 'x-service-api-key': key }, payload })
const tokenKey = (tokenId: string) => ({ contractAddress: contract, chainId: 31337, tokenId })
const selfService = (payload: Record<string, unknown>, key = apiKey) =>
  call(gw, { method: 'POST', url: '/phygitals/transfer/self-service', headers: { 'x-service-api-key': key }, payload })
const pullable = (otp: string, payload: Record<string, unknown>) =>
  call(gw, { method: 'POST', url: '/phygitals/transfer/pullable', headers: { 'x-service-code': otp }, payload })
const register = (tokenId: string, recipient: string) =>
  call(gw, { method: 'POST', url: '/phygitals/claim-registration', headers: { 'x-service-api-key': apiKey }, payload: { ...tokenKey(tokenId), recipient } })

/** A fresh tap of the chip and the PHYGITAL_CLAIM OTP its ref hands out. */
async function otpOf(uid: string): Promise<string> {
  const ref = await tapChip({ store: gw.store, clock: { now: now() } }, uid)
  const res = await call(gw, { url: `/refs/${ref}` })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  const otp = res.body.linkedToken?.otp
  expect(otp).toEqual(expect.any(String))
  return otp
}

/** A signature from GET /phygitals/transfer-signature, submitted by a user's own wallet. */
const userMint = (tokenId: string, recipient: Address, functionName: 'mintNFT' | 'claimNFT' = 'mintNFT') =>
  pullWithSignature(gw, { apiKey, contract, tokenId, recipient, functionName })

/** Runs a failing request and checks it left no trace: no transaction queued, no transfer recorded. */
async function expectNothingQueued<T>(request: () => Promise<T>): Promise<T> {
  const before = counts()
  const result = await request()
  expect(counts()).toEqual(before)
  expect(await gw.store.chainTxs.open(31337)).toEqual([])
  return result
}

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  expect(res.body).toMatchObject({ success: false, error: code })
}

describe('POST /phygitals/transfer', () => {
  test('mints to the recipient, then moves it with claimNFT', async () => {
    const res = await call(gw, {
      method: 'POST',
      url: '/phygitals/transfer',
      headers: { 'x-service-api-key': apiKey },
      payload: { contractAddress: contract.toLowerCase(), chainId: 31337, tokenId: '1', recipient: ALICE.toLowerCase() },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.initialTxHash).toMatch(/^0x[0-9a-f]{64}$/)
    await gw.settle()
    expect(await ownerOf(1n)).toBe(ALICE)
    const receipt = await gw.publicClient.getTransactionReceipt({ hash: res.body.initialTxHash })
    expect(receipt.status).toBe('success')

    const second = await call(gw, {
      method: 'POST',
      url: '/phygitals/transfer',
      headers: { 'x-service-api-key': apiKey },
      payload: { contractAddress: contract, chainId: 31337, tokenId: '1', recipient: BOB },
    })
    expect(second.status).toBe(200)
    await gw.settle()
    expect(await ownerOf(1n)).toBe(BOB)
  })

  test('a pullable transfer spends the OTP of a tap', async () => {
    const ref = await tapChip({ store: gw.store, clock: { now: Date.now() } }, '04AA000000000A')
    const otp = (await call(gw, { url: `/refs/${ref}` })).body.linkedToken.otp
    const res = await call(gw, { method: 'POST', url: '/phygitals/transfer/pullable', headers: { 'x-service-code': otp }, payload: { recipient: ALICE } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    await gw.settle()
    expect(await ownerOf(1n)).toBe(ALICE)
    const again = await call(gw, { method: 'POST', url: '/phygitals/transfer/pullable', headers: { 'x-service-code': otp }, payload: { recipient: BOB } })
    expect(again.status).toBe(409)
    expect(again.body.error).toBe('otp_used')
  })
})

describe('accepted back to back', () => {
  test('an unminted token sent to two recipients before anything is mined: mintNFT then claimNFT, the second recipient owns it', async () => {
    const [a, b] = await Promise.all([transfer({ ...tokenKey('8'), recipient: ALICE }), transfer({ ...tokenKey('8'), recipient: BOB })])
    expect(a!.status, JSON.stringify(a!.body)).toBe(200)
    expect(b!.status, JSON.stringify(b!.body)).toBe(200)
    const rows = transfersOfToken('8')
    expect(rows.map((r) => r.method)).toEqual(['mintNFT', 'claimNFT'])
    await gw.settle()
    expect(await ownerOf(8n)).toBe(rows[1]!.recipient)
    for (const r of rows) expect(chainTx(r.chainTxId)).toMatchObject({ status: 'mined', reverted: 0 })
    expect(rows.map((r) => r.resigned)).toEqual([0, 0])
  })

  test('one OTP used by two pullable transfers at once: exactly one is accepted and queued', async () => {
    const otp = await otpOf('04AA0000000009')
    const before = counts()
    const results = await Promise.all([pullable(otp, { recipient: ALICE }), pullable(otp, { recipient: BOB })])
    expect(results.map((r) => r.status).sort()).toEqual([200, 409])
    expect(results.find((r) => r.status === 409)!.body.error).toBe('otp_used')
    expect(counts()).toEqual({ chainTxs: before.chainTxs + 1, transfers: before.transfers + 1 })
    await gw.settle()
    const winner = transferOf(results.find((r) => r.status === 200)!.body.initialTxHash).transfer
    expect(winner.via).toBe('otp')
    expect(await ownerOf(9n)).toBe(winner.recipient)
  })

  test('the OTP of a chip with no token is refused with 409 chip_not_linked and not spent', async () => {
    const ref = await tapChip({ store: gw.store, clock: { now: now() } }, FREE_CHIP)
    const view = await call(gw, { url: `/refs/${ref}` })
    const otp = view.body.otp as string
    expect(otp).toEqual(expect.any(String))
    expectError(await expectNothingQueued(() => pullable(otp, { recipient: ALICE })), 409, 'chip_not_linked')
    expect(otpUsedAt(otp)).toBeNull()
  })
})

describe('POST /phygitals/transfer/self-service', () => {
  test('transfers the token of a tag given in any case with ":" separators, and answers its tokenRef', async () => {
    const res = await selfService({ tagUID: '04:aa:00:00:00:00:02', recipient: BOB })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toEqual({
      initialTxHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      tokenRef: { chainId: 31337, contractAddress: contract, tokenId: '2' },
    })
    await gw.settle()
    expect(await ownerOf(2n)).toBe(BOB)
    const { transfer: row, first } = transferOf(res.body.initialTxHash)
    expect(row).toMatchObject({ recipient: BOB, method: 'mintNFT', via: 'self_service', resigned: 0 })
    expect(first).toMatchObject({ status: 'mined', reverted: 0 })
  })

  test('an unknown tag and another team\'s tag are both 404 chip_not_found; nothing is queued', async () => {
    expectError(await expectNothingQueued(() => selfService({ tagUID: '04AAEEEEEEEEEE', recipient: BOB })), 404, 'chip_not_found')
    expectError(await expectNothingQueued(() => selfService({ tagUID: '04BB0000000001', recipient: BOB })), 404, 'chip_not_found')
    // The other team's own key does reach it: the 404 above is the team check, not a bad UID.
    const own = await selfService({ tagUID: '04bb0000000001', recipient: BOB }, otherApiKey)
    expect(own.status, JSON.stringify(own.body)).toBe(200)
    expect(own.body.tokenRef).toEqual({ chainId: 31337, contractAddress: otherContract, tokenId: '1' })
    await gw.settle()
    expect(await ownerOf(1n, otherContract)).toBe(BOB)
  })

  test('a tag with no token is 409 chip_not_linked; nothing is queued', async () => {
    expectError(await expectNothingQueued(() => selfService({ tagUID: FREE_CHIP.toLowerCase(), recipient: BOB })), 409, 'chip_not_linked')
  })

  test('a malformed tag or a missing field is 400 validation_failed', async () => {
    const bad = await expectNothingQueued(() => selfService({ tagUID: '04AA', recipient: BOB }))
    expectError(bad, 400, 'validation_failed')
    expect(bad.body.errors).toHaveProperty('tagUID')
    const missing = await expectNothingQueued(() => selfService({ tagUID: '04AA0000000002' }))
    expectError(missing, 400, 'validation_failed')
    expect(missing.body.errors).toEqual({ recipient: 'Required' })
  })
})

describe('2-tap claim', () => {
  test('needs a registration of the recipient, which the transfer uses up', async () => {
    expectError(await expectNothingQueued(() => transfer({ ...tokenKey('10'), recipient: ALICE })), 409, 'claim_registration_required')
    // Through the tap as well, and the OTP survives the refusal.
    const otp = await otpOf('04AA0000000010')
    expectError(await expectNothingQueued(() => pullable(otp, { recipient: ALICE })), 409, 'claim_registration_required')
    expect(otpUsedAt(otp)).toBeNull()

    const reg = await register('10', ALICE.toLowerCase())
    expect(reg.status, JSON.stringify(reg.body)).toBe(200)
    expect(reg.body.recipient).toBe(ALICE)

    // The registration is ALICE's, not the token's.
    expectError(await expectNothingQueued(() => transfer({ ...tokenKey('10'), recipient: BOB })), 409, 'claim_registration_required')

    const ok = await transfer({ ...tokenKey('10'), recipient: ALICE })
    expect(ok.status, JSON.stringify(ok.body)).toBe(200)
    await gw.settle()
    expect(await ownerOf(10n)).toBe(ALICE)
    const registration = gw.store.db.prepare('SELECT id, used_at AS usedAt FROM claim_registrations WHERE recipient = ? AND token_id = (SELECT token_id FROM transfers WHERE chain_tx_id = ?)')
      .get(ALICE, chainTxByInitialHash(ok.body.initialTxHash).id) as { id: number; usedAt: number | null }
    expect(registration.usedAt).toEqual(expect.any(Number))
    expect(transferOf(ok.body.initialTxHash).transfer.claimRegistrationId).toBe(registration.id)

    expectError(await expectNothingQueued(() => transfer({ ...tokenKey('10'), recipient: ALICE })), 409, 'claim_registration_used')
    // The same through the tap: the OTP of the tap before the transfer is stale (the token moved
    // since), a tap after it meets the used registration; neither is spent.
    expectError(await expectNothingQueued(() => pullable(otp, { recipient: ALICE })), 409, 'token_moved')
    expect(otpUsedAt(otp)).toBeNull()
    const fresh = await otpOf('04AA0000000010')
    expectError(await expectNothingQueued(() => pullable(fresh, { recipient: ALICE })), 409, 'claim_registration_used')
    expect(otpUsedAt(fresh)).toBeNull()
  })

  test('a delay: 409 claim_not_allowed_yet until allowedAt, then the transfer goes through', async () => {
    const reg = await register('11', BOB)
    expect(reg.status, JSON.stringify(reg.body)).toBe(200)
    expect(Date.parse(reg.body.allowedAt) - Date.parse(reg.body.createdAt)).toBe(600_000)
    expectError(await expectNothingQueued(() => transfer({ ...tokenKey('11'), recipient: BOB })), 409, 'claim_not_allowed_yet')
    gw.clock.offsetMs = 601_000
    try {
      const ok = await transfer({ ...tokenKey('11'), recipient: BOB })
      expect(ok.status, JSON.stringify(ok.body)).toBe(200)
      await gw.settle()
      expect(await ownerOf(11n)).toBe(BOB)
    } finally {
      gw.clock.offsetMs = 0
    }
  })

  test('an expired window: 409 claim_registration_expired, nothing queued', async () => {
    const reg = await register('12', ALICE)
    expect(reg.status, JSON.stringify(reg.body)).toBe(200)
    gw.clock.offsetMs = 61_000
    try {
      expectError(await expectNothingQueued(() => transfer({ ...tokenKey('12'), recipient: ALICE })), 409, 'claim_registration_expired')
    } finally {
      gw.clock.offsetMs = 0
    }
    await expect(ownerOf(12n)).rejects.toThrow()
  })
})

describe('recipients', () => {
  test('an ENS name without a mainnet RPC is 400 ens_unavailable, a short hex 400 invalid_recipient; nothing is queued or spent', async () => {
    for (const [recipient, code] of [
      ['alice.eth', 'ens_unavailable'],
      ['0x1234', 'invalid_recipient'],
    ] as const) {
      expectError(await expectNothingQueued(() => transfer({ ...tokenKey('7'), recipient })), 400, code)
      expectError(await expectNothingQueued(() => selfService({ tagUID: '04AA0000000007', recipient })), 400, code)
      const otp = await otpOf('04AA0000000007')
      expectError(await expectNothingQueued(() => pullable(otp, { recipient })), 400, code)
      expect(otpUsedAt(otp)).toBeNull()
    }
  })

  test('an address in any case is recorded and lands checksummed', async () => {
    const upper = `0x${BOB.slice(2).toUpperCase()}`
    const res = await transfer({ ...tokenKey('7'), recipient: upper })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    await gw.settle()
    expect(await ownerOf(7n)).toBe(BOB)
    expect(transferOf(res.body.initialTxHash).transfer.recipient).toBe(BOB)
    const lower = await selfService({ tagUID: '04AA0000000007', recipient: ALICE.toLowerCase() })
    expect(lower.status, JSON.stringify(lower.body)).toBe(200)
    await gw.settle()
    expect(await ownerOf(7n)).toBe(ALICE)
    expect(transferOf(lower.body.initialTxHash).transfer.recipient).toBe(ALICE)
  })
})

describe('bad input loses nothing', () => {
  test('missing fields are 400 validation_failed', async () => {
    const none = await expectNothingQueued(() => transfer({}))
    expectError(none, 400, 'validation_failed')
    expect(Object.keys(none.body.errors).sort()).toEqual(['chainId', 'contractAddress', 'recipient', 'tokenId'])
    const noRecipient = await expectNothingQueued(() => transfer(tokenKey('4')))
    expectError(noRecipient, 400, 'validation_failed')
    expect(noRecipient.body.errors).toEqual({ recipient: 'Required' })
    const otp = await otpOf('04AA0000000004')
    expectError(await expectNothingQueued(() => pullable(otp, {})), 400, 'validation_failed')
    expect(otpUsedAt(otp)).toBeNull()
  })

  test("an unknown token and another team's token are 404 token_not_found", async () => {
    expectError(await expectNothingQueued(() => transfer({ ...tokenKey('999999'), recipient: ALICE })), 404, 'token_not_found')
    expectError(await expectNothingQueued(() => transfer({ contractAddress: otherContract, chainId: 31337, tokenId: '1', recipient: ALICE })), 404, 'token_not_found')
    expectError(await expectNothingQueued(() => transfer({ ...tokenKey('4'), chainId: 1, recipient: ALICE })), 404, 'token_not_found')
  })

  test('a token on a chain the gateway has no keys for is 400 chain_not_configured, and its OTP is not spent', async () => {
    const key = { contractAddress: CHAIN_999_CONTRACT, chainId: 999, tokenId: '1' }
    expectError(await expectNothingQueued(() => transfer({ ...key, recipient: ALICE })), 400, 'chain_not_configured')
    expectError(await expectNothingQueued(() => selfService({ tagUID: CHAIN_999_CHIP, recipient: ALICE })), 400, 'chain_not_configured')
    const otp = await otpOf(CHAIN_999_CHIP)
    expectError(await expectNothingQueued(() => pullable(otp, { recipient: ALICE })), 400, 'chain_not_configured')
    expect(otpUsedAt(otp)).toBeNull()
    const view = await call(gw, { url: `/otps/${otp}` })
    expect(view.body.usedAt).toBeUndefined()
    expect((await gw.store.tokens.findByKey(key))!.minted).toBeFalsy()
  })

  test('after all of that the pullable OTP still works', async () => {
    const otp = await otpOf('04AA0000000004')
    expectError(await pullable(otp, { recipient: '0x1234' }), 400, 'invalid_recipient')
    const ok = await pullable(otp, { recipient: ALICE })
    expect(ok.status, JSON.stringify(ok.body)).toBe(200)
    expect(otpUsedAt(otp)).toEqual(expect.any(Number))
    await gw.settle()
    expect(await ownerOf(4n)).toBe(ALICE)
    expect(transferOf(ok.body.initialTxHash).transfer).toMatchObject({ via: 'otp', recipient: ALICE })
  })
})

describe('GET /refs/:id?includeOwner=true', () => {
  test('gives the on-chain owner of a minted token, and consumes the ref as usual', async () => {
    const res = await transfer({ ...tokenKey('5'), recipient: BOB })
    expect(res.status).toBe(200)
    await gw.settle()
    const ref = await tapChip({ store: gw.store, clock: { now: now() } }, '04AA0000000005')
    const first = await call(gw, { url: `/refs/${ref}?includeOwner=true` })
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    expect(first.body.isValidRef).toBe(true)
    expect(first.body.linkedToken).toMatchObject({ contractAddress: contract, chainId: 31337, tokenId: '5', otp: expect.any(String) })
    expect(first.body.linkedToken.ownerAddress).toBe(await ownerOf(5n))
    expect(first.body.linkedToken.ownerAddress).toBe(BOB)
    const second = await call(gw, { url: `/refs/${ref}?includeOwner=true` })
    expect(second.status).toBe(200)
    expect(second.body.isValidRef).toBe(false)
    expect(second.body.linkedToken.otp).toBeUndefined()
    expect(second.body.linkedToken.ownerAddress).toBe(BOB)
  })

  test('has no ownerAddress for an unminted token', async () => {
    await expect(ownerOf(6n)).rejects.toThrow()
    const ref = await tapChip({ store: gw.store, clock: { now: now() } }, '04AA0000000006')
    const res = await call(gw, { url: `/refs/${ref}?includeOwner=true` })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.isValidRef).toBe(true)
    expect(res.body.linkedToken.otp).toEqual(expect.any(String))
    expect(res.body.linkedToken).not.toHaveProperty('ownerAddress')
    expect((await call(gw, { url: `/refs/${ref}` })).body.isValidRef).toBe(false)
  })

  test('when the owner cannot be read (no keys or RPC for the chain) it is a 400 and the ref is not used up', async () => {
    const ref = await tapChip({ store: gw.store, clock: { now: now() } }, CHAIN_999_CHIP)
    expectError(await call(gw, { url: `/refs/${ref}?includeOwner=true` }), 400, 'chain_not_configured')
    const res = await call(gw, { url: `/refs/${ref}` })
    expect(res.body.isValidRef).toBe(true)
    expect(res.body.linkedToken.otp).toEqual(expect.any(String))
  })
})

describe('recovery from a stale view of the chain', () => {
  test('the token was minted by a user meanwhile: the relayed mintNFT reverts, and it is re-signed as claimNFT', async () => {
    await userMint('40', USER)
    expect(await ownerOf(40n)).toBe(USER)
    expect((await gw.store.tokens.findByKey(tokenKey('40')))!.minted).toBeFalsy()

    const res = await transfer({ ...tokenKey('40'), recipient: BOB })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const [row] = transfersOfToken('40')
    expect(row).toMatchObject({ method: 'mintNFT', resigned: 0 })
    await until('the transfer is re-signed and mined', () => {
      const t = transfersOfToken('40')[0]!
      return t.resigned === 1 && chainTx(t.chainTxId).status === 'mined'
    })
    await gw.settle()

    expect(await ownerOf(40n)).toBe(BOB)
    const after = transfersOfToken('40')
    expect(after).toHaveLength(1)
    expect(after[0]).toMatchObject({ method: 'claimNFT', resigned: 1, recipient: BOB })
    const first = chainTxByInitialHash(res.body.initialTxHash)
    expect(first).toMatchObject({ status: 'mined', reverted: 1, txHash: res.body.initialTxHash })
    expect((await gw.publicClient.getTransactionReceipt({ hash: res.body.initialTxHash })).status).toBe('reverted')
    const current = chainTx(after[0]!.chainTxId)
    expect(current.id).not.toBe(first.id)
    expect(current).toMatchObject({ status: 'mined', reverted: 0 })
    expect((await gw.publicClient.getTransactionReceipt({ hash: current.txHash as Hex })).status).toBe('success')
  })

  test("two moves of a token behind the gateway's back, then two relayed transfers of it: the later one is re-signed and decides, the earlier is given up", async () => {
    // A user mints token 41 and then moves it on with signatures of their own: the token nonce is 2, our counter 0.
    await userMint('41', USER)
    await userMint('41', DRIFTER, 'claimNFT')
    expect(await tokenNonceOf(41n)).toBe(2n)

    const a = await transfer({ ...tokenKey('41'), recipient: BOB })
    const b = await transfer({ ...tokenKey('41'), recipient: USER })
    expect(a.status, JSON.stringify(a.body)).toBe(200)
    expect(b.status, JSON.stringify(b.body)).toBe(200)
    const [first, second] = transfersOfToken('41') as [TransferDbRow, TransferDbRow]
    await until('the later transfer landed', () => second.chainTxId !== transfersOfToken('41')[1]!.chainTxId && chainTx(transfersOfToken('41')[1]!.chainTxId).reverted === 0)
    await gw.settle()

    // Re-sent after the later one, the earlier would undo it: the last request accepted decides.
    expect(await ownerOf(41n)).toBe(USER)
    expect(await tokenNonceOf(41n)).toBe(3n)
    for (const res of [a, b]) expect(chainTxByInitialHash(res.body.initialTxHash)).toMatchObject({ status: 'mined', reverted: 1 })
    expect(transfersOfToken('41')).toEqual([
      expect.objectContaining({ id: first.id, resigned: 0, chainTxId: first.chainTxId }),
      expect.objectContaining({ id: second.id, resigned: 1, method: 'claimNFT' }),
    ])
    // The local counter caught up with the chain: the next relayed transfer of the token is right first time.
    const next = await transfer({ ...tokenKey('41'), recipient: DRIFTER })
    expect(next.status).toBe(200)
    await gw.settle()
    expect(chainTxByInitialHash(next.body.initialTxHash)).toMatchObject({ status: 'mined', reverted: 0 })
    expect(await ownerOf(41n)).toBe(DRIFTER)
    expect(await tokenNonceOf(41n)).toBe(4n)
  })
})

describe('many transfers at once', () => {
  test(`${MANY} concurrent transfers of ${MANY} tokens: distinct hashes, all land with their recipients`, async () => {
    const before = counts()
    const results = await Promise.all(
      Array.from({ length: MANY }, (_, i) => transfer({ ...tokenKey(manyTokenId(i)), recipient: recipientOf(i) })),
    )
    for (const res of results) expect(res.status, JSON.stringify(res.body)).toBe(200)
    const hashes = results.map((r) => r.body.initialTxHash as string)
    expect(new Set(hashes).size).toBe(MANY)
    expect(counts()).toEqual({ chainTxs: before.chainTxs + MANY, transfers: before.transfers + MANY })
    await gw.settle()
    const owners = await Promise.all(Array.from({ length: MANY }, (_, i) => ownerOf(BigInt(manyTokenId(i)))))
    expect(owners).toEqual(Array.from({ length: MANY }, (_, i) => recipientOf(i)))
    for (const hash of hashes) expect(chainTxByInitialHash(hash)).toMatchObject({ status: 'mined', reverted: 0, txHash: hash })
  })
})
