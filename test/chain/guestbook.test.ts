import { type Address, BaseError, ContractFunctionRevertedError, getAddress } from 'viem'
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { guestbookAbi } from '../../contracts/artifacts/Guestbook.js'
import { createApiKey } from '../../src/auth/apiKeys.js'
import { importData, parseImportFile } from '../../src/importer/importData.js'
import { loadGatewaySecret } from '../../src/keys/gatewaySecret.js'
import { type ChainGateway, createChainGateway, OTHER, USER, USER_KEY } from '../helpers/chainGateway.js'
import { call, metadata, tapChip } from '../helpers/gateway.js'

const ORIGIN = 'https://tap.example'
/** Chips of team A: two assigned to the deployed event, one to the external one, one linked to nothing. */
const CHIP_1 = '04CC0000000001'
const CHIP_2 = '04CC0000000002'
const CHIP_EXT = '04CC0000000003'
const CHIP_PLAIN = '04CC0000000009'
const CHIP_REVERT = '04CC0000000004'
/** A guestbook team A registered by address: deployed elsewhere, not by this gateway's relayer. */
const EXTERNAL_GB = getAddress('0x00000000000000000000000000000000000a11ce')
const CAROL = getAddress('0x000000000000000000000000000000000000ca01')
const DAVE = getAddress('0x000000000000000000000000000000000000da7e')
/** Fresh recipients: ALICE and BOB of helpers/gateway are USER and OTHER (anvil dev accounts 1 and 2). */
const ERIN = getAddress('0x000000000000000000000000000000000000e214')
const FRANK = getAddress('0x000000000000000000000000000000000000f4a2')

let gw: ChainGateway
let headersA: { 'x-service-api-key': string }
let headersB: { 'x-service-api-key': string }
let teamA: number
let teamB: number

/** Filled in by the tests in order: the guestbook team A deploys through the API and its event. */
let contractId: number
let address: Address
let eventId: number

const eventMetadata = metadata({ name: 'Opening night', description: 'Guests of the opening', service_metadata_version: 2 })

beforeAll(async () => {
  gw = await createChainGateway({ config: { publicBaseUrl: ORIGIN, rateLimit: { max: 100_000 } } })
  const secret = loadGatewaySecret({ dataDir: gw.dataDir })
  const summary = await importData(
    gw.store,
    parseImportFile({
      teams: [
        {
          name: 'A',
          chips: [{ uid: CHIP_1 }, { uid: CHIP_2 }, { uid: CHIP_EXT }, { uid: CHIP_PLAIN }, { uid: CHIP_REVERT }],
          guestbookContracts: [
            { name: 'Elsewhere', symbol: 'ELS', chainId: 31337, address: EXTERNAL_GB, events: [{ name: 'External', tokenId: '1', metadata: metadata(), chips: [CHIP_EXT] }] },
          ],
        },
        {
          name: 'B',
          guestbookContracts: [{ name: 'B book', symbol: 'BBK', chainId: 31337, events: [{ name: 'B event', tokenId: '1', metadata: metadata() }] }],
        },
      ],
    }),
    { config: gw.config, now: Date.now(), secret },
  )
  teamA = summary.teams[0]!.id
  teamB = summary.teams[1]!.id
  headersA = { 'x-service-api-key': (await gw.store.tx((tx) => createApiKey(tx, { teamId: teamA, label: 'a', now: Date.now() }))).apiKey }
  headersB = { 'x-service-api-key': (await gw.store.tx((tx) => createApiKey(tx, { teamId: teamB, label: 'b', now: Date.now() }))).apiKey }
  gw.relayer.wake(31337)
  await gw.settle()
})
afterAll(async () => gw?.close())

const read = <F extends 'name' | 'symbol' | 'signVerifier' | 'transfersPaused' | 'uri' | 'balanceOf'>(functionName: F, args: unknown[] = []) =>
  gw.publicClient.readContract({ address, abi: guestbookAbi, functionName, args } as never) as Promise<unknown>
const balanceOf = (who: Address) => read('balanceOf', [who, 1n]) as Promise<bigint>
const txCount = async () => (await gw.store.chainTxs.all(31337)).length
const post = (url: string, payload: object, headers: Record<string, string> = headersA) => call(gw, { method: 'POST', url, headers, payload })

/** A fresh tap of a chip and the OTPs its ref hands out. */
async function tapRef(uid: string) {
  const ref = await tapChip({ store: gw.store, clock: { now: Date.now() } }, uid)
  const res = await call(gw, { url: `/refs/${ref}` })
  expect(res.status).toBe(200)
  expect(res.body.isValidRef).toBe(true)
  return res.body as { otp?: string; guestbookEvents: { id: number; otp?: string }[] }
}

async function expectReceiptOk(hash: `0x${string}`) {
  const receipt = await gw.publicClient.getTransactionReceipt({ hash })
  expect(receipt.status).toBe('success')
}

describe('POST /events/contracts', () => {
  test('is pending with a null address until the deploy is mined, then confirmed at an address with our code', async () => {
    // Hold the relayer so "pending" is observed for sure, not raced.
    await gw.relayer.stop()
    const res = await post('/events/contracts', { name: 'Guests', symbol: 'GST', chainId: 31337 })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toEqual({ success: true, contractId: expect.any(Number) })
    contractId = res.body.contractId

    const pending = (await call(gw, { url: '/events/contracts', headers: headersA })).body as { id: number; status: string; address: string | null }[]
    expect(pending.find((c) => c.id === contractId)).toMatchObject({ name: 'Guests', symbol: 'GST', chainId: 31337, status: 'pending', address: null })
    const row = (await gw.store.guestbook.getContract(contractId))!
    expect(row.deployTxId).not.toBeNull()
    expect(await gw.store.chainTxs.get(row.deployTxId!)).toMatchObject({ kind: 'deploy_guestbook', status: 'queued' })

    gw.relayer.start()
    await gw.settle()
    const listed = (await call(gw, { url: '/events/contracts', headers: headersA })).body as { id: number; status: string; address: string | null }[]
    const confirmed = listed.find((c) => c.id === contractId)!
    expect(confirmed).toMatchObject({ status: 'confirmed', address: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/) })
    address = confirmed.address as Address
    expect(address).toBe(row.plannedAddress)
    // Team B's contract is not listed for A.
    expect(listed.map((c) => c.id)).not.toContain((await gw.store.guestbook.listContracts(teamB))[0]!.id)

    const code = await gw.publicClient.getCode({ address })
    expect(code && code.length).toBeGreaterThan(2)
    expect(await read('name')).toBe('Guests')
    expect(await read('symbol')).toBe('GST')
    expect(await read('signVerifier')).toBe(gw.chains.get(31337)!.signer.address)
    expect(await read('transfersPaused')).toBe(false)
  })

  test('uri(id) points at this gateway (config publicBaseUrl), which serves the event metadata', async () => {
    const res = await post('/events', { name: 'Opening', tokenId: '1', contractId, metadata: JSON.stringify(eventMetadata) })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toEqual({ success: true, id: expect.any(Number) })
    eventId = res.body.id

    const uri = (await read('uri', [1n])) as string
    expect(uri).toBe(`${ORIGIN}/metadata/31337/${address}/1`)
    const served = await call(gw, { url: uri.slice(ORIGIN.length) })
    expect(served.status).toBe(200)
    expect(served.body).toEqual(eventMetadata)
    expect(String(served.headers['cache-control'])).toMatch(/public/)
    // Any case of the address in the path.
    expect((await call(gw, { url: `/metadata/31337/${address.toLowerCase()}/1` })).body).toEqual(eventMetadata)
    // No event 2 yet.
    const missing = await call(gw, { url: `/metadata/31337/${address}/2` })
    expect(missing.status).toBe(404)
    expect(missing.body.error).toBe('metadata_not_found')
  })

  test('PATCH /events/metadata changes what the uri serves; another team cannot', async () => {
    const updated = { ...eventMetadata, description: 'Guests of the opening (updated)', extra_field: { kept: true } }
    const before = await txCount()
    const res = await call(gw, { method: 'PATCH', url: '/events/metadata', headers: headersA, payload: { eventId, metadata: JSON.stringify(updated) } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect((await call(gw, { url: `/metadata/31337/${address}/1` })).body).toEqual(updated)
    const foreign = await call(gw, { method: 'PATCH', url: '/events/metadata', headers: headersB, payload: { eventId, metadata: JSON.stringify(metadata()) } })
    expect(foreign.status).toBe(404)
    expect(foreign.body.error).toBe('event_not_found')
    const invalid = await call(gw, { method: 'PATCH', url: '/events/metadata', headers: headersA, payload: { eventId, metadata: JSON.stringify({ name: 'x' }) } })
    expect(invalid.status).toBe(400)
    expect(invalid.body.errors).toMatchObject({ 'metadata.image': 'Required' })
    expect((await call(gw, { url: `/metadata/31337/${address}/1` })).body).toEqual(updated)
    // Guestbook metadata is served from here; no chain transaction is needed for it.
    expect(await txCount()).toBe(before)
  })
})

describe('POST /events/mint', () => {
  test('mints one token of the event per recipient', async () => {
    const res = await post('/events/mint', { eventId, recipient: USER })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toEqual({ success: true, txnHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) })
    await gw.settle()
    await expectReceiptOk(res.body.txnHash)
    expect(await balanceOf(USER)).toBe(1n)
    expect(await gw.store.transfers.guestbookMintedTo(eventId, USER)).toBe(true)

    const before = await txCount()
    for (const recipient of [USER, USER.toLowerCase()]) {
      const again = await post('/events/mint', { eventId, recipient })
      expect(again.status, recipient).toBe(409)
      expect(again.body.error).toBe('already_minted')
    }
    expect(await txCount()).toBe(before)
    await gw.settle()
    expect(await balanceOf(USER)).toBe(1n)
  })

  test('the event can be named by tokenId, contractAddress and chainId instead of eventId', async () => {
    const res = await post('/events/mint', { tokenId: '1', contractAddress: address.toLowerCase(), chainId: 31337, recipient: ERIN })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    await gw.settle()
    await expectReceiptOk(res.body.txnHash)
    expect(await balanceOf(ERIN)).toBe(1n)
    const again = await post('/events/mint', { tokenId: 1, contractAddress: address, chainId: 31337, recipient: ERIN })
    expect(again.status).toBe(409)
    expect(again.body.error).toBe('already_minted')

    const unknownToken = await post('/events/mint', { tokenId: '7', contractAddress: address, chainId: 31337, recipient: CAROL })
    expect(unknownToken.status).toBe(404)
    expect(unknownToken.body.error).toBe('event_not_found')
    const partial = await post('/events/mint', { tokenId: '1', recipient: CAROL })
    expect(partial.status).toBe(400)
    expect(partial.body.error).toBe('validation_failed')
  })
})

describe('concurrent and odd requests', () => {
  test('the same mint sent twice at once: one queued, one already_minted', async () => {
    const recipient = getAddress('0x000000000000000000000000000000000000c0c0')
    const before = await txCount()
    const results = await Promise.all([post('/events/mint', { eventId, recipient }), post('/events/mint', { eventId, recipient })])
    expect(results.map((r) => r.status).sort()).toEqual([200, 409])
    expect(results.find((r) => r.status === 409)!.body.error).toBe('already_minted')
    expect(await txCount()).toBe(before + 1)
    await gw.settle()
    expect(await balanceOf(recipient)).toBe(1n)
  })

  test('a chain the gateway has no keys for → 400 chain_not_configured, nothing recorded', async () => {
    const contracts = (await gw.store.guestbook.listContracts(teamA)).length
    const res = await post('/events/contracts', { name: 'Nowhere', symbol: 'NWH', chainId: 5 })
    expect(res.status).toBe(400)
    expect(res.body.error).toBe('chain_not_configured')
    expect(await gw.store.guestbook.listContracts(teamA)).toHaveLength(contracts)
  })
})

describe('POST /events/mint/self', () => {
  test('the OTP of a tap on an assigned chip mints; one mint per chip per event; a failed mint keeps the OTP', async () => {
    const assigned = await post('/events/assign/legacy', { tagUIDs: [CHIP_1, CHIP_2], guestbookEventId: eventId })
    expect(assigned.status, JSON.stringify(assigned.body)).toBe(200)

    const first = await tapRef(CHIP_1)
    const otp = first.guestbookEvents.find((e) => e.id === eventId)?.otp
    expect(otp).toBeTruthy()
    const res = await post('/events/mint/self', { recipient: FRANK }, { 'x-service-code': otp! })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toEqual({ success: true, txnHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) })
    await gw.settle()
    await expectReceiptOk(res.body.txnHash)
    expect(await balanceOf(FRANK)).toBe(1n)
    expect((await gw.store.otps.get(otp!))!.usedAt).not.toBeNull()
    expect(await gw.store.transfers.guestbookMintedByChip(eventId, CHIP_1)).toBe(true)

    // The same OTP again: spent.
    const reused = await post('/events/mint/self', { recipient: CAROL }, { 'x-service-code': otp! })
    expect(reused.status).toBe(409)
    expect(reused.body.error).toBe('otp_used')

    // A second tap of the same chip: a new ref and OTP, but the chip already minted this event.
    const second = await tapRef(CHIP_1)
    const otp2 = second.guestbookEvents.find((e) => e.id === eventId)!.otp!
    expect(otp2).not.toBe(otp)
    const before = await txCount()
    const twice = await post('/events/mint/self', { recipient: CAROL }, { 'x-service-code': otp2 })
    expect(twice.status).toBe(409)
    expect(twice.body.error).toBe('already_minted')
    expect((await gw.store.otps.get(otp2))!.usedAt).toBeNull()
    expect(await txCount()).toBe(before)

    // A recipient who already has the token, from another chip: refused too, and that OTP stays unspent.
    const otherChip = (await tapRef(CHIP_2)).guestbookEvents.find((e) => e.id === eventId)!.otp!
    const toFrank = await post('/events/mint/self', { recipient: FRANK }, { 'x-service-code': otherChip })
    expect(toFrank.status).toBe(409)
    expect(toFrank.body.error).toBe('already_minted')
    expect((await gw.store.otps.get(otherChip))!.usedAt).toBeNull()
    // …and still good for a new recipient.
    const toCarol = await post('/events/mint/self', { recipient: CAROL }, { 'x-service-code': otherChip })
    expect(toCarol.status, JSON.stringify(toCarol.body)).toBe(200)
    await gw.settle()
    expect(await balanceOf(CAROL)).toBe(1n)
    expect(await balanceOf(FRANK)).toBe(1n)
  })

  test('an OTP of another type → 403 otp_wrong_type; none → 401; unknown → 401', async () => {
    const plain = await tapRef(CHIP_PLAIN)
    expect(plain.otp).toBeTruthy()
    const wrong = await post('/events/mint/self', { recipient: DAVE }, { 'x-service-code': plain.otp! })
    expect(wrong.status).toBe(403)
    expect(wrong.body.error).toBe('otp_wrong_type')
    expect((await gw.store.otps.get(plain.otp!))!.usedAt).toBeNull()

    const none = await post('/events/mint/self', { recipient: DAVE }, {})
    expect(none.status).toBe(401)
    expect(none.body.error).toBe('otp_missing')
    const unknown = await post('/events/mint/self', { recipient: DAVE }, { 'x-service-code': 'nope-not-a-code' })
    expect(unknown.status).toBe(401)
    expect(unknown.body.error).toBe('otp_invalid')

    // A bad recipient is refused before the OTP is spent.
    const fresh = (await tapRef(CHIP_2)).guestbookEvents.find((e) => e.id === eventId)!.otp!
    const badRecipient = await post('/events/mint/self', { recipient: '0x1234' }, { 'x-service-code': fresh })
    expect(badRecipient.status).toBe(400)
    expect(badRecipient.body.error).toBe('invalid_recipient')
    expect((await gw.store.otps.get(fresh))!.usedAt).toBeNull()
  })

  test("an event on a guestbook not deployed here → 409 contract_not_managed, and the OTP is kept", async () => {
    const ext = await tapRef(CHIP_EXT)
    const code = ext.guestbookEvents[0]!.otp!
    const before = await txCount()
    const res = await post('/events/mint/self', { recipient: DAVE }, { 'x-service-code': code })
    expect(res.status).toBe(409)
    expect(res.body.error).toBe('contract_not_managed')
    expect((await gw.store.otps.get(code))!.usedAt).toBeNull()
    expect(await txCount()).toBe(before)
  })
})

describe('POST /events/toggle-pause-state', () => {
  const transferUserToOther = () =>
    gw.publicClient.simulateContract({
      account: USER,
      address,
      abi: guestbookAbi,
      functionName: 'safeTransferFrom',
      args: [USER, OTHER, 1n, 1n, '0x'],
    })

  test('pausing makes the tokens soulbound (mints still work); unpausing by address lets them move', async () => {
    const res = await post('/events/toggle-pause-state', { contractId, pauseState: true })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toEqual({ success: true, txnHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) })
    await gw.settle()
    await expectReceiptOk(res.body.txnHash)
    expect(await read('transfersPaused')).toBe(true)
    expect((await gw.store.guestbook.getContract(contractId))!.paused).toBe(1)

    const error = await transferUserToOther().then(
      () => null,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(BaseError)
    const revert = (error as BaseError).walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null
    expect(revert?.data?.errorName).toBe('TransfersPaused')

    // Minting is not a transfer: it still works while paused.
    const mint = await post('/events/mint', { eventId, recipient: DAVE })
    expect(mint.status).toBe(200)
    await gw.settle()
    await expectReceiptOk(mint.body.txnHash)
    expect(await balanceOf(DAVE)).toBe(1n)

    const unpause = await post('/events/toggle-pause-state', { contractAddress: address.toLowerCase(), chainId: 31337, pauseState: false })
    expect(unpause.status, JSON.stringify(unpause.body)).toBe(200)
    await gw.settle()
    await expectReceiptOk(unpause.body.txnHash)
    expect(await read('transfersPaused')).toBe(false)
    expect((await gw.store.guestbook.getContract(contractId))!.paused).toBe(0)

    const { request } = await transferUserToOther()
    const hash = await gw.wallet(USER_KEY).writeContract(request)
    expect((await gw.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success')
    expect(await balanceOf(USER)).toBe(0n)
    expect(await balanceOf(OTHER)).toBe(1n)
  })

  test('without contractId or a full address → 400', async () => {
    const before = await txCount()
    for (const payload of [{ pauseState: true }, { contractAddress: address, pauseState: true }, { chainId: 31337, pauseState: true }]) {
      const res = await post('/events/toggle-pause-state', payload)
      expect(res.status, JSON.stringify(payload)).toBe(400)
      expect(res.body.error).toBe('validation_failed')
    }
    const noState = await post('/events/toggle-pause-state', { contractId })
    expect(noState.status).toBe(400)
    expect(await txCount()).toBe(before)
  })
})

describe('what a team may not touch', () => {
  test("another team's contract or event is not found; nothing is queued", async () => {
    const before = await txCount()
    const checks: [string, object, string][] = [
      ['/events/toggle-pause-state', { contractId, pauseState: true }, 'contract_not_found'],
      ['/events/toggle-pause-state', { contractAddress: address, chainId: 31337, pauseState: true }, 'contract_not_found'],
      ['/events/mint', { eventId, recipient: DAVE }, 'event_not_found'],
      ['/events/mint', { tokenId: '1', contractAddress: address, chainId: 31337, recipient: DAVE }, 'event_not_found'],
      ['/events', { name: 'Squat', tokenId: '5', contractId, metadata: JSON.stringify(metadata()) }, 'contract_not_found'],
      ['/events/assign/legacy', { tagUIDs: [CHIP_1], guestbookEventId: eventId }, 'event_not_found'],
    ]
    for (const [url, payload, code] of checks) {
      const res = await post(url, payload, headersB)
      expect(res.status, `${url} ${JSON.stringify(payload)}`).toBe(404)
      expect(res.body.error).toBe(code)
    }
    // And the other way round: A cannot use B's.
    const bContract = (await gw.store.guestbook.listContracts(teamB))[0]!
    const bEvent = (await gw.store.guestbook.listEvents(teamB))[0]!
    expect((await post('/events/toggle-pause-state', { contractId: bContract.id, pauseState: true })).status).toBe(404)
    expect((await post('/events/mint', { eventId: bEvent.id, recipient: DAVE })).status).toBe(404)
    expect(await txCount()).toBe(before)
    expect((await gw.store.guestbook.getContract(contractId))!.paused).toBe(0)
    expect((await gw.store.guestbook.getContract(bContract.id))!.paused).toBe(0)
  })

  test('a guestbook registered by address (not deployed here) cannot be minted or paused: 409 contract_not_managed', async () => {
    const before = await txCount()
    const ext = (await gw.store.guestbook.listContracts(teamA)).find((c) => c.address === EXTERNAL_GB)!
    const extEvent = (await gw.store.guestbook.listEvents(teamA, ext.id))[0]!
    const checks: [string, object][] = [
      ['/events/mint', { eventId: extEvent.id, recipient: DAVE }],
      ['/events/mint', { tokenId: '1', contractAddress: EXTERNAL_GB, chainId: 31337, recipient: DAVE }],
      ['/events/toggle-pause-state', { contractId: ext.id, pauseState: true }],
      ['/events/toggle-pause-state', { contractAddress: EXTERNAL_GB, chainId: 31337, pauseState: true }],
    ]
    for (const [url, payload] of checks) {
      const res = await post(url, payload)
      expect(res.status, `${url} ${JSON.stringify(payload)}`).toBe(409)
      expect(res.body.error).toBe('contract_not_managed')
    }
    expect(await txCount()).toBe(before)
    expect((await gw.store.guestbook.getContract(ext.id))!.paused).toBe(0)
    expect(await gw.store.transfers.guestbookMintedTo(extEvent.id, DAVE)).toBe(false)
  })

  test('a contract or event id that does not exist → 404', async () => {
    const before = await txCount()
    const pause = await post('/events/toggle-pause-state', { contractId: 999_999, pauseState: true })
    expect(pause.status).toBe(404)
    expect(pause.body.error).toBe('contract_not_found')
    const byAddress = await post('/events/toggle-pause-state', { contractAddress: CAROL, chainId: 31337, pauseState: true })
    expect(byAddress.status).toBe(404)
    expect(byAddress.body.error).toBe('contract_not_found')
    const event = await post('/events', { name: 'Nowhere', tokenId: '1', contractId: 999_999, metadata: JSON.stringify(metadata()) })
    expect(event.status).toBe(404)
    expect(event.body.error).toBe('contract_not_found')
    const mint = await post('/events/mint', { eventId: 999_999, recipient: DAVE })
    expect(mint.status).toBe(404)
    expect(mint.body.error).toBe('event_not_found')
    expect(await txCount()).toBe(before)
  })
})

describe('pending contracts and failed mints', () => {
  test('a contract whose deploy is not mined yet already takes events, metadata reads and mints (sent after the deploy)', async () => {
    await gw.relayer.stop()
    const deployed = await post('/events/contracts', { name: 'Later', symbol: 'LTR', chainId: 31337 })
    expect(deployed.status).toBe(200)
    const id = deployed.body.contractId as number
    const planned = (await gw.store.guestbook.getContract(id))!.plannedAddress as Address
    const created = await post('/events', { name: 'Soon', tokenId: '3', contractId: id, metadata: JSON.stringify(metadata({ name: 'Soon' })) })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    // uri() is fixed at deploy, so the metadata is served before the deploy is mined.
    const served = await call(gw, { url: `/metadata/31337/${planned}/3` })
    expect(served.status).toBe(200)
    expect(served.body.name).toBe('Soon')
    const mint = await post('/events/mint', { eventId: created.body.id, recipient: DAVE })
    expect(mint.status, JSON.stringify(mint.body)).toBe(200)
    expect(await gw.publicClient.getCode({ address: planned })).toBeUndefined()

    gw.relayer.start()
    await gw.settle()
    await expectReceiptOk(mint.body.txnHash)
    const balance = await gw.publicClient.readContract({ address: planned, abi: guestbookAbi, functionName: 'balanceOf', args: [DAVE, 3n] })
    expect(balance).toBe(1n)
    expect(await gw.store.guestbook.getContract(id)).toMatchObject({ status: 'confirmed', address: planned })
  })

  test('a mint that reverted on chain does not use up the chip: a new tap may mint again', async () => {
    expect((await post('/events/assign/legacy', { tagUIDs: [CHIP_REVERT], guestbookEventId: eventId })).status).toBe(200)
    // The guestbook itself as recipient is refused up front (no ERC-1155 receiver); a wallet that
    // turns into a reverting contract after the answer makes the mint revert on chain.
    const otp = (await tapRef(CHIP_REVERT)).guestbookEvents.find((e) => e.id === eventId)!.otp!
    const refused = await post('/events/mint/self', { recipient: address }, { 'x-service-code': otp })
    expect(refused.status).toBe(400)
    expect(refused.body.error).toBe('recipient_cannot_receive')
    const turncoat = privateKeyToAddress(generatePrivateKey())
    const res = await gw.relayer.hold(31337, async () => {
      const accepted = await post('/events/mint/self', { recipient: turncoat }, { 'x-service-code': otp })
      await gw.testClient.setCode({ address: turncoat, bytecode: '0x60006000fd' })
      return accepted
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    await gw.settle()
    const receipt = await gw.publicClient.getTransactionReceipt({ hash: res.body.txnHash })
    expect(receipt.status).toBe('reverted')
    expect((await gw.store.chainTxs.all(31337)).find((row) => row.txHash === res.body.txnHash)).toMatchObject({ status: 'mined', reverted: 1 })
    expect(await balanceOf(turncoat)).toBe(0n)
    expect((await gw.store.otps.get(otp))!.usedAt).toBeNull()

    // No token was minted with this chip, so a new tap (new OTP) to a wallet must work.
    const retry = (await tapRef(CHIP_REVERT)).guestbookEvents.find((e) => e.id === eventId)!.otp!
    const fresh = privateKeyToAddress(generatePrivateKey())
    const again = await post('/events/mint/self', { recipient: fresh }, { 'x-service-code': retry })
    expect(again.status, JSON.stringify(again.body)).toBe(200)
    await gw.settle()
    await expectReceiptOk(again.body.txnHash)
    expect(await balanceOf(fresh)).toBe(1n)
  })
})
