import { afterAll, beforeAll, expect, test } from 'vitest'
import type { PostgresStore, SqliteStore } from '../../src/db/store.js'
import { type ChainGateway, createBackendChainGateway, OTHER, USER } from '../helpers/chainGateway.js'
import { call, seedTeam, tapChip } from '../helpers/gateway.js'

// Issue 26: POST /poap-events/mint, as hosted-API attendance apps call it: the OTP of a tap on a chip
// linked to a proof event (x-iyk-code), {poapEventId, recipient, deviceId}; a token on the embedded chain.

const CHIP = '04A893CAAA1190'
const SECOND = '04A10000000002'
const balanceOf = [{ type: 'function', name: 'balanceOf', stateMutability: 'view', inputs: [{ type: 'address' }, { type: 'uint256' }], outputs: [{ type: 'uint256' }] }] as const

/** Events whose first mints all race at once: on PostgreSQL the losers of each event's set-up must retry, not 409. */
const RACED = [511, 512, 513, 514, 515, 516]

let gw: ChainGateway<SqliteStore | PostgresStore>
let apiKey: string
let teamId: number
beforeAll(async () => {
  gw = await createBackendChainGateway()
  ;({ apiKey, teamId } = await seedTeam({ ...gw, clock: { now: Date.now() } }, {
    name: 'Venue',
    chips: [{ uid: CHIP }, { uid: SECOND }],
    proofEvents: [
      { proofEventId: 501, name: 'Launch night', status: 'active', chips: [CHIP, SECOND] },
      { proofEventId: 502, name: 'Next year', status: 'future', chips: [CHIP] },
      { proofEventId: 503, name: 'After party', status: 'active', chips: [CHIP, SECOND] },
      ...RACED.map((proofEventId) => ({ proofEventId, name: `Raced ${proofEventId}`, status: 'active' as const, chips: [CHIP, SECOND] })),
    ],
  }))
}, 60_000)
afterAll(async () => gw?.close())

/** A tap of `uid` and the OTP its ref gives for proof event `poapEventId`. */
async function proofOtp(uid: string, poapEventId = 501): Promise<string> {
  const ref = await tapChip({ store: gw.store, clock: { now: Date.now() } }, uid)
  const res = await call(gw, { url: `/refs/${ref}` })
  const event = (res.body.proofEvents as { proofEventId: number; otp?: string }[]).find((e) => e.proofEventId === poapEventId)
  return event!.otp!
}

const mint = (code: string, body: Record<string, unknown>) =>
  call(gw, { method: 'POST', url: '/poap-events/mint', headers: { 'x-iyk-code': code }, payload: { deviceId: 'phone-1', ...body } })
const otpUsed = async (code: string) => (await gw.store.otps.get(code))!.usedAt !== null

test('a proof event OTP mints its attendance token once: on chain in the recipient\'s wallet, the OTP spent', async () => {
  const code = await proofOtp(CHIP)
  const res = await mint(code, { poapEventId: 501, recipient: USER })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  expect(res.body).toEqual({ success: true, txnHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) })
  expect(await otpUsed(code)).toBe(true)
  await gw.settle()
  const receipt = await gw.publicClient.getTransactionReceipt({ hash: res.body.txnHash })
  expect(receipt.status).toBe('success')
  // The team's proof events guestbook (deployed at this first mint), token id = the proof event's id.
  const events = await call(gw, { url: '/events', headers: { 'x-iyk-api-key': apiKey } })
  const launch = (events.body as { name: string; contract: { contractAddress: string; tokenId: string } }[]).find((e) => e.name === 'Launch night')!
  expect(launch.contract.tokenId).toBe('501')
  const address = launch.contract.contractAddress as `0x${string}`
  expect(receipt.to?.toLowerCase()).toBe(address.toLowerCase())
  expect(await gw.publicClient.readContract({ address, abi: balanceOf, functionName: 'balanceOf', args: [USER, 501n] })).toBe(1n)
}, 30_000)

test('a second mint to the same recipient is 400 with "already minted" and spends nothing; so is a second mint by the same chip', async () => {
  const again = await proofOtp(SECOND)
  const res = await mint(again, { poapEventId: 501, recipient: USER })
  expect(res.status).toBe(400)
  expect(res.body).toMatchObject({ error: 'already_minted', message: expect.stringMatching(/already minted/i) })
  expect(await otpUsed(again)).toBe(false)
  // The first chip minted the event already, whoever the recipient.
  const byChip = await mint(await proofOtp(CHIP), { poapEventId: 501, recipient: OTHER })
  expect(byChip).toMatchObject({ status: 400, body: { error: 'already_minted' } })
  // The second chip's OTP still works for another recipient; one guestbook, not two.
  expect((await mint(again, { poapEventId: 501, recipient: OTHER })).status).toBe(200)
  await gw.settle()
  const contracts = await call(gw, { url: '/events/contracts', headers: { 'x-iyk-api-key': apiKey } })
  expect(contracts.body.filter((c: { name: string }) => c.name === 'Proof events')).toHaveLength(1)
}, 30_000)

test('refused before anything is spent: another event\'s id (400), an event not active (409), no OTP or an unknown one (401), a bad recipient (400)', async () => {
  const code = await proofOtp(SECOND)
  expect((await mint(code, { poapEventId: 777, recipient: OTHER })).body).toMatchObject({ error: 'otp_wrong_event' })
  expect((await mint(code, { poapEventId: 777, recipient: OTHER })).status).toBe(400)
  const future = await proofOtp(CHIP, 502)
  // Not active: the ref gives no OTP for it at all.
  expect(future).toBeUndefined()
  await gw.store.tx(async (tx) => tx.proofEvents.upsert({ teamId, proofEventId: 501, name: 'Launch night', status: 'expired', now: Date.now() }))
  const expired = await mint(code, { poapEventId: 501, recipient: '0x00000000000000000000000000000000000000a1' })
  expect(expired).toMatchObject({ status: 409, body: { error: 'event_not_active' } })
  await gw.store.tx(async (tx) => tx.proofEvents.upsert({ teamId, proofEventId: 501, name: 'Launch night', status: 'active', now: Date.now() }))
  expect(await otpUsed(code)).toBe(false)
  expect((await mint(code, { poapEventId: 501, recipient: 'not an address' })).status).toBe(400)
  expect((await call(gw, { method: 'POST', url: '/poap-events/mint', payload: { poapEventId: 501, recipient: OTHER } })).status).toBe(401)
  expect((await mint('NOPE', { poapEventId: 501, recipient: OTHER })).status).toBe(401)
  expect(await otpUsed(code)).toBe(false)
})

test('two first mints of an event at once (two chips, two recipients): both minted, as one guestbook event', async () => {
  const [a, b] = await Promise.all([proofOtp(CHIP, 503), proofOtp(SECOND, 503)])
  const results = await Promise.all([mint(a!, { poapEventId: 503, recipient: USER }), mint(b!, { poapEventId: 503, recipient: OTHER })])
  expect(results.map((r) => r.status), JSON.stringify(results.map((r) => r.body))).toEqual([200, 200])
  await gw.settle()
  const events = await call(gw, { url: '/events', headers: { 'x-iyk-api-key': apiKey } })
  const party = (events.body as { name: string; contract: { contractAddress: `0x${string}` } }[]).filter((e) => e.name === 'After party')
  expect(party).toHaveLength(1)
  for (const who of [USER, OTHER])
    expect(await gw.publicClient.readContract({ address: party[0]!.contract.contractAddress, abi: balanceOf, functionName: 'balanceOf', args: [who, 503n] })).toBe(1n)
}, 30_000)

test('first mints of six events at once, two each: all twelve minted, one guestbook event each', async () => {
  const codes = await Promise.all(RACED.flatMap((id) => [proofOtp(CHIP, id), proofOtp(SECOND, id)]))
  const results = await Promise.all(codes.map((code, i) => mint(code, { poapEventId: RACED[i >> 1]!, recipient: i % 2 === 0 ? USER : OTHER })))
  expect(results.map((r) => r.status), JSON.stringify(results.map((r) => r.body))).toEqual(codes.map(() => 200))
  await gw.settle()
  const events = await call(gw, { url: '/events', headers: { 'x-iyk-api-key': apiKey } })
  const raced = (events.body as { name: string }[]).filter((e) => e.name.startsWith('Raced '))
  expect(raced.map((e) => e.name).sort()).toEqual(RACED.map((id) => `Raced ${id}`))
}, 60_000)
