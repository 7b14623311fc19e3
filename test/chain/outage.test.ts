// Issue 4 acceptance: with a configured RPC that goes away and comes back,
// accepted work lands; a stuck transaction is replaced with higher fees and
// the new hash is recorded. Real anvils on loopback, the real relayer.
import { type Address, createPublicClient, type Hex, http } from 'viem'
import { privateKeyToAddress } from 'viem/accounts'
import { afterEach, describe, expect, test } from 'vitest'
import { guestbookAbi } from '../../contracts/artifacts/Guestbook.js'
import { createApiKey } from '../../src/auth/apiKeys.js'
import { type AnvilProcess, spawnAnvil } from '../../src/chain/spawnAnvil.js'
import { importData, parseImportFile } from '../../src/importer/importData.js'
import { loadGatewaySecret } from '../../src/keys/gatewaySecret.js'
import { type ChainGateway, createChainGateway } from '../helpers/chainGateway.js'
import { call } from '../helpers/gateway.js'

/** anvil dev account 3: funded on every fresh anvil; the relayer key of the configured chain. */
const RELAYER_KEY: Hex = '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6'
const CHAIN_ID = 31338

const anvils: AnvilProcess[] = []
let gw: ChainGateway | undefined

afterEach(async () => {
  await gw?.close()
  gw = undefined
  for (const anvil of anvils.splice(0)) await anvil.stop()
})

async function anvil(options: { port?: number; args?: string[] } = {}): Promise<AnvilProcess> {
  const process = await spawnAnvil({ chainId: CHAIN_ID, ...options })
  anvils.push(process)
  return process
}

const rpc = async <T>(url: string, method: string, params: unknown[] = []): Promise<T> => {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })
  const body = (await res.json()) as { result: T; error?: { message: string } }
  if (body.error) throw new Error(body.error.message)
  return body.result
}

/** A gateway whose only chain is CHAIN_ID at `url`, with a team that has a guestbook (deployed by the relayer) and one event. */
async function gatewayOn(url: string, chain: Record<string, unknown> = {}) {
  gw = await createChainGateway({
    config: { chain: { embedded: false, ...chain }, chains: { [CHAIN_ID]: { rpcUrl: url, relayerKeyEnv: 'TEST_RELAYER_KEY' } } },
    env: { TEST_RELAYER_KEY: RELAYER_KEY },
  })
  const summary = await importData(
    gw.store,
    parseImportFile({
      teams: [
        {
          name: 'Outage',
          guestbookContracts: [
            {
              name: 'Outage book',
              symbol: 'OB',
              chainId: CHAIN_ID,
              events: [{ name: 'Day 1', tokenId: '1', metadata: { name: 'Day 1', collection: 'c', description: 'd', image: 'https://example.com/i.png', attributes: [] } }],
            },
          ],
        },
      ],
    }),
    { config: gw.config, now: Date.now(), secret: loadGatewaySecret({ dataDir: gw.dataDir }), signers: new Map(gw.chains.list().map((c) => [c.chainId, c])) },
  )
  const teamId = summary.teams[0]!.id
  const apiKey = (await createApiKey(gw.store, { teamId, label: 'outage', now: Date.now() })).apiKey
  const contract = (await gw.store.guestbook.listContracts(teamId))[0]!
  const event = (await gw.store.guestbook.listEvents(teamId))[0]!
  return { gw, apiKey, contractId: contract.id, guestbook: contract.plannedAddress as Address, eventId: event.id }
}

const recipient = (i: number) => privateKeyToAddress(`0x${(i + 1).toString(16).padStart(64, '5')}` as Hex)

describe('a configured chain whose RPC goes away and comes back', () => {
  test('requests are accepted while it is down and land once it is back, each once', { timeout: 60_000 }, async () => {
    const first = await anvil()
    const { gw, apiKey, contractId, guestbook, eventId } = await gatewayOn(first.url)
    gw.relayer.wake(CHAIN_ID)
    await gw.settle()
    expect((await gw.store.guestbook.getContract(contractId))!.status).toBe('confirmed')

    // The node goes away (its chain state kept, as a real network's would be).
    const state = await rpc<string>(first.url, 'anvil_dumpState')
    await first.stop()

    const accepted: Hex[] = []
    for (let i = 0; i < 10; i++) {
      const res = await call(gw, { method: 'POST', url: '/events/mint', headers: { 'x-service-api-key': apiKey }, payload: { eventId, recipient: recipient(i) } })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      accepted.push(res.body.txnHash)
    }
    const pause = await call(gw, {
      method: 'POST',
      url: '/events/toggle-pause-state',
      headers: { 'x-service-api-key': apiKey },
      payload: { contractId, pauseState: true },
    })
    expect(pause.status).toBe(200)
    const deploy = await call(gw, {
      method: 'POST',
      url: '/events/contracts',
      headers: { 'x-service-api-key': apiKey },
      payload: { name: 'Queued while down', symbol: 'QD', chainId: CHAIN_ID },
    })
    expect(deploy.status).toBe(200)

    // The relayer notices and keeps everything queued.
    await expect.poll(() => gw.relayer.status()[0]?.reachable, { timeout: 10_000 }).toBe(false)
    expect(await gw.store.chainTxs.open(CHAIN_ID)).toHaveLength(12)
    expect((await call(gw, { url: '/health' })).body.chains).toEqual([expect.objectContaining({ chainId: CHAIN_ID, reachable: false, pending: 12 })])

    // Back on the same address with the same chain.
    const second = await anvil({ port: first.port })
    await rpc(second.url, 'anvil_loadState', [state])
    await gw.settle(30_000)

    const client = createPublicClient({ transport: http(second.url) })
    for (let i = 0; i < 10; i++)
      expect(await client.readContract({ address: guestbook, abi: guestbookAbi, functionName: 'balanceOf', args: [recipient(i), 1n] })).toBe(1n)
    expect(await client.readContract({ address: guestbook, abi: guestbookAbi, functionName: 'transfersPaused' })).toBe(true)
    const receipts = await Promise.all(accepted.map((hash) => client.getTransactionReceipt({ hash })))
    expect(receipts.every((r) => r.status === 'success')).toBe(true)
    const queuedContract = (await gw.store.guestbook.getContract(deploy.body.contractId))!
    expect(queuedContract.status).toBe('confirmed')
    expect(await client.getCode({ address: queuedContract.address as Address })).toMatch(/^0x[0-9a-f]{100,}/)
    expect(gw.relayer.status()[0]?.reachable).toBe(true)
  })

  test('a transaction stuck without a receipt is replaced with higher fees; the new hash is the one recorded', { timeout: 60_000 }, async () => {
    const node = await anvil({ args: ['--no-mining'] })
    const { gw, contractId } = await gatewayOn(node.url, { replaceAfterSeconds: 1, feeBumpPercent: 20 })
    const deploy = (await gw.store.guestbook.getContract(contractId))!
    const initial = (await gw.store.chainTxs.get(deploy.deployTxId!))!
    gw.relayer.wake(CHAIN_ID)

    // Sent, never mined: after replaceAfterSeconds the relayer re-signs the same nonce with fees up by feeBumpPercent.
    await expect.poll(async () => (await gw.store.chainTxs.attemptHashes(initial.id)).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2)
    const replaced = (await gw.store.chainTxs.get(initial.id))!
    expect(replaced.txHash).not.toBe(initial.initialTxHash)
    expect(replaced.initialTxHash).toBe(initial.txHash)
    expect(BigInt(replaced.maxFeePerGas)).toBeGreaterThanOrEqual((BigInt(initial.maxFeePerGas) * 120n) / 100n)
    expect(replaced.nonce).toBe(initial.nonce)

    // The node mines; the outbox records whichever version was mined, and it is a version we signed.
    await rpc(node.url, 'evm_mine')
    await gw.settle(10_000)
    const mined = (await gw.store.chainTxs.get(initial.id))!
    expect(mined.status).toBe('mined')
    expect(await gw.store.chainTxs.attemptHashes(initial.id)).toContain(mined.txHash)
    expect(mined.txHash).not.toBe(initial.initialTxHash)
    expect((await gw.store.guestbook.getContract(contractId))!.status).toBe('confirmed')
  })
})
