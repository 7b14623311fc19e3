// Issue 18, "the relayer across gateways": one active sender per (chain, account) by a lease row with a
// fencing epoch. Two relayers on one data dir (one real SQLite file, one real anvil), as two `tapgate
// serve` processes on one data dir run them; each with its own connection, chains and holder id.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type Address } from 'viem'
import { type Chains, createChains } from '../../src/chain/chains.js'
import { startEmbeddedChain } from '../../src/chain/embeddedChain.js'
import { openStore, type SqliteStore } from '../../src/db/store.js'
import { createSenderLease } from '../../src/relayer/lease.js'
import { queueTx } from '../../src/outbox/queueTx.js'
import { createRelayer, type Relayer } from '../../src/relayer/relayer.js'
import { createChainGateway, OTHER, type ChainGateway } from '../helpers/chainGateway.js'

const LEASE_MS = 1000
const POLL_MS = 100
const CHAIN = 31337

let gw: ChainGateway
let relayerAddress: Address

type Peer = { store: SqliteStore; chains: Chains; relayer: Relayer; broadcasts: () => number; close(): Promise<void> }

/**
 * A loopback HTTP proxy in front of the real anvil that counts the eth_sendRawTransaction calls
 * passing through it: what one relayer really broadcast, whether or not it recorded it.
 */
async function countingProxy(target: string): Promise<{ url: string; broadcasts: () => number; close(): Promise<void> }> {
  let broadcasts = 0
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const calls = [JSON.parse(body.toString('utf8')) as { method: string } | { method: string }[]].flat()
      broadcasts += calls.filter((call) => call.method === 'eth_sendRawTransaction').length
      const upstream = http.request(target, { method: 'POST', headers: { 'content-type': 'application/json' } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json' })
        answer.pipe(res)
      })
      upstream.on('error', () => res.destroy())
      upstream.end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    broadcasts: () => broadcasts,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

/** A second relayer on the gateway's data dir: its own connection, its own handle on the shared anvil (through a counting proxy). */
async function peer(): Promise<Peer> {
  const store = openStore({ dataDir: gw.dataDir })
  const embedded = await startEmbeddedChain({ dataDir: gw.dataDir })
  const proxy = await countingProxy(embedded.url)
  const chains = createChains({ config: gw.config, embedded: { ...embedded, url: proxy.url } })
  const log = { info() {}, warn() {}, error(obj: object, msg?: string) { console.error('relayer B:', msg, obj) } }
  const relayer = createRelayer({ store, chains, config: gw.config, log })
  relayer.start()
  return {
    store,
    chains,
    relayer,
    broadcasts: proxy.broadcasts,
    async close() {
      await relayer.stop()
      await chains.close()
      await proxy.close()
      await store.close()
    },
  }
}

/** `n` plain calls queued in the outbox through `store` (as a request on that gateway would). */
function queue(store: SqliteStore, chains: Chains, n: number): Promise<number[]> {
  const chain = chains.get(CHAIN)!
  return store.tx(async (tx) => {
    const ids: number[] = []
    for (let i = 0; i < n; i++)
      ids.push((await queueTx(tx, chain, { kind: 'metadata_refresh', to: OTHER, data: '0x', gas: 21_000n, now: Date.now(), fallbackMaxFeeGwei: 50 })).id)
    return ids
  })
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(10)
  }
}

const leaseOf = () => gw.store.relayerLeases.get(CHAIN, relayerAddress)

/** Every outbox row of the chain mined and successful, and the chain's nonce count equals the outbox's: each landed once. */
async function landedExactlyOnce(ids: number[]) {
  for (const id of ids) expect(await gw.store.chainTxs.get(id)).toMatchObject({ status: 'mined', reverted: 0 })
  const onChain = await gw.publicClient.getTransactionCount({ address: relayerAddress })
  expect(onChain).toBe(await gw.store.chainTxs.peekNonce(CHAIN, relayerAddress))
  expect((await gw.store.chainTxs.all(CHAIN)).length).toBe(onChain)
}

const sentBy = (ids: number[]) => new Set(ids.map((id) => gw.store.db.prepare<[number], { by: string }>('SELECT sent_by AS by FROM chain_txs WHERE id = ?').get(id)!.by))

beforeAll(async () => {
  gw = await createChainGateway({ config: { chain: { pollIntervalMs: POLL_MS, leaseSeconds: LEASE_MS / 1000 } } })
  relayerAddress = gw.chains.get(CHAIN)!.relayer.address
  await until('relayer A to take the lease', async () => ((await leaseOf())?.holder === gw.relayer.holder ? true : undefined))
}, 60_000)
afterAll(async () => {
  await gw?.close()
})

describe('the relayer lease across relayers on one data dir', () => {
  let b: Peer

  test('two relayers: only the lease holder sends, even what the other queued and woke itself for', { timeout: 30_000 }, async () => {
    b = await peer()
    expect(b.relayer.holder).not.toBe(gw.relayer.holder)
    await sleep(3 * POLL_MS) // B has polled (and found A's lease live)
    const ids = await queue(b.store, b.chains, 30)
    b.relayer.wake(CHAIN)
    await gw.settle()
    await landedExactlyOnce(ids)
    expect(await gw.store.chainTxs.sentBy(CHAIN)).toEqual(new Map([[gw.relayer.holder, 30]]))
    expect(b.broadcasts()).toBe(0)
    expect(await leaseOf()).toMatchObject({ holder: gw.relayer.holder, epoch: 1 })
  })

  test('the holder dies (stops renewing): the other takes over within lease time + one poll and sends the queue once', { timeout: 30_000 }, async () => {
    // A's loop frozen for good, as a killed gateway's: no renewals, no release.
    let thaw!: () => void
    const frozen = new Promise<void>((resolve) => (thaw = resolve))
    let heldNow!: () => void
    const isHeld = new Promise<void>((resolve) => (heldNow = resolve))
    const hold = gw.relayer.hold(CHAIN, async () => {
      heldNow()
      await frozen
    })
    await isHeld
    const diedAt = Date.now()
    const ids = await queue(gw.store, gw.chains, 20)
    await until('B to take the lease', async () => ((await leaseOf())?.holder === b.relayer.holder ? true : undefined))
    const takeoverMs = Date.now() - diedAt
    console.log(`takeover after a holder died: ${takeoverMs} ms (lease ${LEASE_MS} ms, poll ${POLL_MS} ms)`)
    expect(takeoverMs).toBeLessThanOrEqual(LEASE_MS + POLL_MS + 400)
    expect((await leaseOf())!.epoch).toBe(2)
    await b.relayer.waitIdle({ chainId: CHAIN, timeoutMs: 15_000 })
    await landedExactlyOnce(ids)
    expect(sentBy(ids)).toEqual(new Set([b.relayer.holder]))
    expect(b.broadcasts()).toBe(20)

    // A comes back: B's lease is live, so A only follows; what it queues is still sent by B.
    thaw()
    await hold
    const more = await queue(gw.store, gw.chains, 5)
    gw.relayer.wake(CHAIN)
    await gw.settle()
    await landedExactlyOnce(more)
    expect(sentBy(more)).toEqual(new Set([b.relayer.holder]))
    expect(await leaseOf()).toMatchObject({ holder: b.relayer.holder, epoch: 2 })
  })

  test('the holder stops (close): it hands the lease over, and the other sends within one poll', { timeout: 30_000 }, async () => {
    await b.close()
    const stoppedAt = Date.now()
    const ids = await queue(gw.store, gw.chains, 10)
    await until('A to take the lease back', async () => ((await leaseOf())?.holder === gw.relayer.holder ? true : undefined))
    const takeoverMs = Date.now() - stoppedAt
    console.log(`takeover after the holder stopped: ${takeoverMs} ms (poll ${POLL_MS} ms)`)
    expect(takeoverMs).toBeLessThan(LEASE_MS)
    expect((await leaseOf())!.epoch).toBe(3)
    await gw.settle()
    await landedExactlyOnce(ids)
    expect(sentBy(ids)).toEqual(new Set([gw.relayer.holder]))
  })

  test("a fenced-out holder's write is refused: A loses an expired lease to B, then A's pending write does nothing", async () => {
    const other = openStore({ dataDir: gw.dataDir })
    try {
      const key = { chainId: 424242, sender: '0x000000000000000000000000000000000000beef' }
      const a = createSenderLease(gw.store, { ...key, holder: 'a' }, 200)
      const b = createSenderLease(other, { ...key, holder: 'b' }, 200)
      expect(await a.acquire()).toBe(true)
      expect(a.epoch).toBe(1)
      expect(await b.acquire()).toBe(false)
      expect(await a.acquire()).toBe(true) // renewing keeps the epoch
      expect(a.epoch).toBe(1)
      const id = await gw.store.chainTxs.insert({
        ...key,
        nonce: 0,
        kind: 'metadata_refresh',
        toAddress: OTHER,
        data: '0x',
        gas: 21_000,
        maxFeePerGas: '1',
        maxPriorityFeePerGas: '1',
        rawTx: '0x01',
        txHash: '0x'.padEnd(66, 'f'),
        createdAt: Date.now(),
      })
      // A is paused past its lease (a GC pause, a frozen VM); B takes the expired lease.
      const until = Date.now() + 250
      while (Date.now() < until) {
        // busy wait: the lease runs on the database's clock, which a fake timer cannot move
      }
      expect(await b.acquire()).toBe(true)
      expect(b.epoch).toBe(2)
      // A wakes up and records what it did under epoch 1: refused, nothing written.
      expect(await a.write((tx) => tx.chainTxs.markSent(id, Date.now(), 'a'))).toEqual({ fenced: true })
      expect(await gw.store.chainTxs.get(id)).toMatchObject({ status: 'queued', sentAt: null })
      expect(a.epoch).toBeNull()
      expect(await a.acquire()).toBe(false) // B's lease is live: A stays out until it can take it again
      expect(await b.write((tx) => tx.chainTxs.markSent(id, Date.now(), 'b'))).toEqual({ fenced: false, value: true })
      expect(await gw.store.chainTxs.get(id)).toMatchObject({ status: 'sent' })
    } finally {
      await other.close()
    }
  })
})
