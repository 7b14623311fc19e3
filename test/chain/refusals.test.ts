import { type Address, getAddress, type Hex, keccak256, toHex, zeroAddress } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'
import { guestbookAbi } from '../../contracts/artifacts/Guestbook.js'
import { createApiKey } from '../../src/auth/apiKeys.js'
import { importData, parseImportFile } from '../../src/importer/importData.js'
import { loadGatewaySecret } from '../../src/keys/gatewaySecret.js'
import { type ChainGateway, contractOf, createChainGateway, phygitalTeam } from '../helpers/chainGateway.js'
import { ALICE, call, metadata, tapChip } from '../helpers/gateway.js'

/*
 * Recipients that can never receive, and writes that revert anyway: refused
 * with a 400 before any OTP, registration or transaction is spent; when the
 * chain still reverts, the OTP or claim registration is given back.
 */

let gw: ChainGateway
let headers: { 'x-service-api-key': string }
let contract: Address
let guestbook: Address
let eventId: number

const GB_CHIPS = ['04DD0000000001', '04DD0000000002', '04DD0000000003', '04DD0000000004']
const fresh = (label: string) => getAddress(keccak256(toHex(`refusals ${label}`)).slice(0, 42))
/** Runtime code that answers every call with 0x150b7a02…: an ERC-721 receiver, but not an ERC-1155 one. */
const ERC721_ONLY_RECEIVER: Hex = '0x63150b7a0260e01b60005260206000f3'
/** Runtime code that reverts on every call: receives nothing. */
const REVERTER: Hex = '0x60006000fd'

beforeAll(async () => {
  gw = await createChainGateway({ config: { rateLimit: { max: 100_000 } } })
  const secret = loadGatewaySecret({ dataDir: gw.dataDir })
  const team = phygitalTeam('R', [
    ...['1', '2', '3', '4', '5'].map((tokenId) => ({ tokenId, chips: [`04DE00000000${tokenId.padStart(2, '0')}`] })),
    { tokenId: '20', chips: ['04DE0000000020'], twoTapClaim: { delaySeconds: 0, windowSeconds: 3600 } },
  ])
  const summary = await importData(
    gw.store,
    parseImportFile({
      teams: [
        {
          ...team,
          chips: [...(team.chips as object[]), ...GB_CHIPS.map((uid) => ({ uid }))],
          guestbookContracts: [{ name: 'R book', symbol: 'RBK', chainId: 31337, events: [{ name: 'R event', tokenId: '1', metadata: metadata(), chips: GB_CHIPS }] }],
        },
      ],
    }),
    { config: gw.config, now: Date.now(), secret },
  )
  const teamId = summary.teams[0]!.id
  headers = { 'x-service-api-key': (await gw.store.tx((tx) => createApiKey(tx, { teamId, label: 'r', now: Date.now() }))).apiKey }
  contract = await contractOf(gw, teamId)
  gw.relayer.wake(31337)
  await gw.settle()
  const [book] = await gw.store.guestbook.listContracts(teamId)
  guestbook = book!.address as Address
  eventId = (await gw.store.guestbook.listEvents(teamId, book!.id))[0]!.id
})
afterAll(async () => gw?.close())

const tokenKey = (tokenId: string) => ({ contractAddress: contract, chainId: 31337, tokenId })
const post = (url: string, payload: object, h: Record<string, string> = headers) => call(gw, { method: 'POST', url, headers: h, payload })
const query = (p: Record<string, string>) => new URLSearchParams(p).toString()
const txCount = async () => (await gw.store.chainTxs.all(31337)).length
const otpUsedAt = async (code: string) => (await gw.store.otps.get(code))!.usedAt
const ownerOf = (tokenId: bigint) => gw.publicClient.readContract({ address: contract, abi: phygitalTokenAbi, functionName: 'ownerOf', args: [tokenId] })
const gbBalance = (who: Address) => gw.publicClient.readContract({ address: guestbook, abi: guestbookAbi, functionName: 'balanceOf', args: [who, 1n] })

async function refOtps(uid: string): Promise<{ token?: string; guestbook?: string }> {
  const ref = await tapChip({ store: gw.store, clock: { now: Date.now() } }, uid)
  const res = await call(gw, { url: `/refs/${ref}` })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return { token: res.body.linkedToken?.otp, guestbook: res.body.guestbookEvents?.find((e: { id: number }) => e.id === eventId)?.otp }
}

function expectError(res: { status: number; body: { error?: string } }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  expect(res.body.error).toBe(code)
}

/** Every write and signature endpoint for `recipient`, with fresh OTPs; returns the answers and the OTPs. */
async function everyEndpoint(recipient: string, chipOf: { token: string; tagUid: string; gbChip: string }) {
  const tokenOtp = (await refOtps(chipOf.tagUid)).token!
  const signatureOtp = (await refOtps(chipOf.tagUid)).token!
  const gbOtp = (await refOtps(chipOf.gbChip)).guestbook!
  const answers = {
    transfer: await post('/phygitals/transfer', { ...tokenKey(chipOf.token), recipient }),
    pullable: await post('/phygitals/transfer/pullable', { recipient }, { 'x-service-code': tokenOtp }),
    selfService: await post('/phygitals/transfer/self-service', { tagUID: chipOf.tagUid, recipient }),
    signature: await call(gw, { url: `/phygitals/transfer-signature?${query({ ...tokenKey(chipOf.token), chainId: '31337', recipient })}`, headers }),
    signaturePullable: await call(gw, { url: `/phygitals/transfer-signature/pullable?${query({ recipient })}`, headers: { 'x-service-code': signatureOtp } }),
    mint: await post('/events/mint', { eventId, recipient }),
    mintSelf: await post('/events/mint/self', { recipient }, { 'x-service-code': gbOtp }),
  }
  return { answers, otps: [tokenOtp, signatureOtp, gbOtp] }
}

describe('recipients that can never receive', () => {
  test('the zero address is 400 recipient_cannot_receive on every transfer, signature and mint endpoint; nothing is spent', async () => {
    const before = await txCount()
    for (const zero of [zeroAddress, zeroAddress.toUpperCase().replace('0X', '0x')]) {
      const { answers, otps } = await everyEndpoint(zero, { token: '1', tagUid: '04DE0000000001', gbChip: GB_CHIPS[0]! })
      for (const [endpoint, res] of Object.entries(answers)) {
        expect(res.status, `${endpoint}: ${JSON.stringify(res.body)}`).toBe(400)
        expect(res.body.error, endpoint).toBe('recipient_cannot_receive')
      }
      for (const otp of otps) expect(await otpUsedAt(otp)).toBeNull()
    }
    expect(await txCount()).toBe(before)
    expect(await gw.store.transfers.guestbookMintedByChip(eventId, GB_CHIPS[0]!)).toBe(false)

    // The OTPs are still good for a recipient that can receive.
    const otp = (await refOtps('04DE0000000001')).token!
    expect((await post('/phygitals/transfer/pullable', { recipient: zeroAddress }, { 'x-service-code': otp })).status).toBe(400)
    const ok = await post('/phygitals/transfer/pullable', { recipient: ALICE }, { 'x-service-code': otp })
    expect(ok.status, JSON.stringify(ok.body)).toBe(200)
    await gw.settle()
    expect(await ownerOf(1n)).toBe(ALICE)
  })

  test('a contract that does not accept the token is 400 recipient_cannot_receive before anything is spent', async () => {
    const before = await txCount()
    // The phygital contract itself implements neither receiver interface.
    const { answers, otps } = await everyEndpoint(contract, { token: '2', tagUid: '04DE0000000002', gbChip: GB_CHIPS[1]! })
    for (const [endpoint, res] of Object.entries(answers)) {
      expect(res.status, `${endpoint}: ${JSON.stringify(res.body)}`).toBe(400)
      expect(res.body.error, endpoint).toBe('recipient_cannot_receive')
    }
    for (const otp of otps) expect(await otpUsedAt(otp)).toBeNull()
    expect(await txCount()).toBe(before)

    // A contract that accepts ERC-721 but not ERC-1155 gets the phygital, not the guestbook token.
    const wallet = fresh('erc721 receiver')
    await gw.testClient.setCode({ address: wallet, bytecode: ERC721_ONLY_RECEIVER })
    const transfer = await post('/phygitals/transfer', { ...tokenKey('2'), recipient: wallet })
    expect(transfer.status, JSON.stringify(transfer.body)).toBe(200)
    expectError(await post('/events/mint', { eventId, recipient: wallet }), 400, 'recipient_cannot_receive')
    await gw.settle()
    expect(await ownerOf(2n)).toBe(wallet)
    expect(await gw.store.transfers.guestbookMintedTo(eventId, wallet)).toBe(false)
  })
})

describe('a write that reverts anyway gives back what it spent', () => {
  test("a relayed transfer whose recipient turned out unable to receive: the OTP is given back, the token stays, the OTP then works", async () => {
    const otp = (await refOtps('04DE0000000003')).token!
    const victim = fresh('becomes a reverter')
    // Nothing sends while the recipient is still a plain address; it gets code after the 200.
    const accepted = await gw.relayer.hold(31337, async () => {
      const res = await post('/phygitals/transfer/pullable', { recipient: victim }, { 'x-service-code': otp })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(await otpUsedAt(otp)).not.toBeNull()
      await gw.testClient.setCode({ address: victim, bytecode: REVERTER })
      return res.body.initialTxHash as Hex
    })
    await gw.settle()
    expect((await gw.publicClient.getTransactionReceipt({ hash: accepted })).status).toBe('reverted')
    expect(await otpUsedAt(otp)).toBeNull()
    // Not re-signed over and over: the one reverted transaction is all there is.
    const transfer = gw.store.db.prepare('SELECT resigned FROM transfers WHERE chain_tx_id = (SELECT id FROM chain_txs WHERE initial_tx_hash = ?)').get(accepted) as { resigned: number }
    expect(transfer.resigned).toBe(0)
    await expect(ownerOf(3n)).rejects.toThrow(/ERC721NonexistentToken/)
    expect((await gw.store.tokens.findByChip('04DE0000000003'))!.minted).toBe(0)

    const again = await post('/phygitals/transfer/pullable', { recipient: ALICE }, { 'x-service-code': otp })
    expect(again.status, JSON.stringify(again.body)).toBe(200)
    await gw.settle()
    expect(await ownerOf(3n)).toBe(ALICE)
  })

  test('a 2-tap transfer that reverts gives the claim registration back', async () => {
    const recipient = fresh('2-tap reverter')
    const registered = await post('/phygitals/claim-registration', { ...tokenKey('20'), recipient })
    expect(registered.status, JSON.stringify(registered.body)).toBe(200)
    const registration = () =>
      gw.store.db.prepare('SELECT used_at AS usedAt FROM claim_registrations WHERE recipient = ? ORDER BY id DESC').get(recipient) as { usedAt: number | null }
    await gw.relayer.hold(31337, async () => {
      const res = await post('/phygitals/transfer', { ...tokenKey('20'), recipient })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(registration().usedAt).not.toBeNull()
      await gw.testClient.setCode({ address: recipient, bytecode: REVERTER })
    })
    await gw.settle()
    expect(registration().usedAt).toBeNull()

    // The recipient fixed its wallet: the same registration carries the transfer.
    await gw.testClient.setCode({ address: recipient, bytecode: '0x' })
    const again = await post('/phygitals/transfer', { ...tokenKey('20'), recipient })
    expect(again.status, JSON.stringify(again.body)).toBe(200)
    await gw.settle()
    expect(await ownerOf(20n)).toBe(recipient)
  })

  test('a guestbook mint that reverts gives the OTP back; it then mints to another recipient', async () => {
    const otp = (await refOtps(GB_CHIPS[2]!)).guestbook!
    const victim = fresh('guestbook reverter')
    const txnHash = await gw.relayer.hold(31337, async () => {
      const res = await post('/events/mint/self', { recipient: victim }, { 'x-service-code': otp })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      await gw.testClient.setCode({ address: victim, bytecode: REVERTER })
      return res.body.txnHash as Hex
    })
    await gw.settle()
    expect((await gw.publicClient.getTransactionReceipt({ hash: txnHash })).status).toBe('reverted')
    expect(await otpUsedAt(otp)).toBeNull()
    expect(await gw.store.transfers.guestbookMintedByChip(eventId, GB_CHIPS[2]!)).toBe(false)

    const other = fresh('guestbook wallet')
    const again = await post('/events/mint/self', { recipient: other }, { 'x-service-code': otp })
    expect(again.status, JSON.stringify(again.body)).toBe(200)
    await gw.settle()
    expect(await gbBalance(other)).toBe(1n)
  })
})

describe('chain ids', () => {
  test('a chain id this gateway has no configuration for is the caller’s mistake: 400 chain_not_configured, nothing recorded', async () => {
    const before = await txCount()
    const contracts = gw.store.db.prepare('SELECT count(*) AS n FROM guestbook_contracts').get() as { n: number }
    const res = await post('/events/contracts', { name: 'Polygon book', symbol: 'PBK', chainId: 137 })
    expectError(res, 400, 'chain_not_configured')
    expect(res.body.message).toMatch(/137/)
    expect(await txCount()).toBe(before)
    expect(gw.store.db.prepare('SELECT count(*) AS n FROM guestbook_contracts').get()).toEqual(contracts)
  })
})
