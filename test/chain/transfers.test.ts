import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'
import { createApiKey } from '../../src/auth/apiKeys.js'
import { importData, parseImportFile } from '../../src/importer/importData.js'
import { loadGatewaySecret } from '../../src/keys/gatewaySecret.js'
import { type ChainGateway, contractOf, createChainGateway, phygitalTeam } from '../helpers/chainGateway.js'
import { ALICE, BOB, call, tapChip } from '../helpers/gateway.js'

let gw: ChainGateway
let apiKey: string
let contract: Address

beforeAll(async () => {
  gw = await createChainGateway()
  const secret = loadGatewaySecret({ dataDir: gw.dataDir })
  const summary = importData(gw.store, parseImportFile({ teams: [phygitalTeam('T', [{ tokenId: '1', chips: ['04AA000000000A'] }])] }), { config: gw.config, now: Date.now(), secret })
  apiKey = gw.store.tx(() => createApiKey(gw.store, { teamId: summary.teams[0]!.id, label: 't', now: Date.now() })).apiKey
  contract = contractOf(gw, summary.teams[0]!.id)
  gw.relayer.wake(31337)
  await gw.settle()
})
afterAll(async () => gw?.close())

const ownerOf = (tokenId: bigint) => gw.publicClient.readContract({ address: contract, abi: phygitalTokenAbi, functionName: 'ownerOf', args: [tokenId] })

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
    const ref = tapChip({ store: gw.store, clock: { now: Date.now() } }, '04AA000000000A')
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
