/**
 * tapgate/testing's gateway, in this process (the packed install's suites are in packedTesting.test.ts):
 * the parts the example suites do not reach.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startGateway, sweepTempDirs, type TestGateway } from '../../src/testing/index.js'
import { repoRoot } from '../helpers/processes.js'

describe('a test gateway with the embedded chain', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startGateway()
  })
  afterAll(() => gw.stop())

  test('chips of each scheme: a valid first tap, a forged URL refused as mac_mismatch, NTAG 21x unauthenticated', async () => {
    await gw.reset()
    const aes = await gw.chip()
    expect(aes.uid).toMatch(/^04[0-9A-F]{12}$/)
    const first = await aes.tap()
    expect(first).toMatchObject({ status: 200, verdict: { accepted: true, uid: aes.uid, counter: 0, authenticated: true } })
    expect(first.refId).toMatch(/^\S{16,}$/)
    expect((await gw.tap(aes.forgedUrl())).verdict).toMatchObject({ accepted: false, reason: 'mac_mismatch', words: expect.stringMatching(/authenticity/) })
    expect((await aes.tap({ counter: 5 })).verdict).toMatchObject({ accepted: true, counter: 5 })
    expect((await aes.tap({ counter: 4 })).verdict).toMatchObject({ accepted: false, reason: 'counter_replay' })

    const lrp = await gw.chip({ scheme: 'lrp' })
    expect((await lrp.tap()).verdict).toMatchObject({ accepted: true, authenticated: true })
    const mirror = await gw.chip({ scheme: 'ntag21x' })
    expect((await mirror.tap()).verdict).toMatchObject({ accepted: true, authenticated: false })
    expect(() => mirror.forgedUrl()).toThrow(/no MAC/)

    const refused = await gw.taps.list({ refused: true })
    expect(refused.map((t) => t.reason)).toEqual(['counter_replay', 'mac_mismatch'])
    expect((await gw.taps.list({ uid: aes.uid })).map((t) => t.accepted)).toEqual([false, true, false, true])
  })

  test('a snapshot and its restore take back the store, the chain and the clock together', async () => {
    await gw.reset()
    const chip = await gw.chip({ token: true })
    await gw.waitForChain()
    const before = await gw.snapshot()
    const clockAt = gw.clock.now()

    const { refId } = await chip.tap()
    const ref = (await (await fetch(`${gw.url}/refs/${refId}`)).json()) as { linkedToken: { otp: string } }
    const moved = await fetch(`${gw.url}/phygitals/transfer/pullable`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-code': ref.linkedToken.otp },
      body: JSON.stringify({ recipient: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' }),
    })
    expect(moved.status).toBe(200)
    await gw.waitForChain()
    expect(await gw.ownerOf(chip)).toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8')
    await gw.clock.advance(3_600_000)

    await gw.restore(before)
    expect(await gw.ownerOf(chip)).toBeNull() // not minted, on the chain as in the store
    expect(await gw.taps.list()).toEqual([])
    expect(gw.clock.now() - clockAt).toBeLessThan(60_000)
    // The same snapshot again: anvil spent its id at the first restore, and a new one was taken.
    expect((await chip.tap({ counter: 0 })).verdict.accepted).toBe(true)
    await gw.restore(before)
    expect(await gw.taps.list()).toEqual([])
  })

  test('the clock moves the chain: a transfer signature expires after its blocks', async () => {
    await gw.reset()
    const chip = await gw.chip({ token: true })
    const query = new URLSearchParams({ contractAddress: chip.token!.contractAddress, chainId: '31337', tokenId: chip.token!.tokenId, recipient: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' })
    const res = await fetch(`${gw.url}/phygitals/transfer-signature?${query}`, { headers: { 'x-service-api-key': gw.apiKey } })
    const body = (await res.json()) as { blockExpiry: string }
    expect(res.status, JSON.stringify(body)).toBe(200)
    const { blockExpiry } = body
    const head = async () => BigInt(((await (await fetch(gw.chainUrl!, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }) })).json()) as { result: string }).result)
    const start = await head()
    expect(BigInt(blockExpiry)).toBeGreaterThan(start)
    // 100 blocks (chain.signatureBlocks) at 12 s each: 20 minutes.
    await gw.clock.advance(20 * 60_000)
    expect(await head()).toBe(start + 100n)
    expect(await head()).toBeGreaterThanOrEqual(BigInt(blockExpiry))
    await expect(gw.clock.set(new Date(gw.clock.now() - 1000))).rejects.toThrow(/back in time/)
  })

  test('no rate limit unless asked: 200 taps in a row', async () => {
    await gw.reset()
    const chip = await gw.chip()
    const statuses = new Set<number>()
    for (let i = 0; i < 200; i++) statuses.add((await gw.inject(chip.tapUrl().replace(gw.url, ''))).statusCode)
    expect([...statuses]).toEqual([200])
  })
})

describe('a test gateway without a chain', () => {
  test('replays a recorded fixture with its seed: verdicts with whole ref ids, compared with the recording', async () => {
    await using gw = await startGateway({ chain: false, seed: path.join(repoRoot, 'fixtures/taps/seed.json') })
    const played = await gw.replay(path.join(repoRoot, 'fixtures/taps/replayed-tap.jsonl'))
    expect(played.map((t) => t.match)).toEqual([true, true, true])
    expect(played[0]!.verdict).toMatchObject({ accepted: true, refId: expect.stringMatching(/^\S{16,}$/) })
    expect(played[1]!.verdict).toMatchObject({ accepted: false, reason: 'counter_replay' })
  })

  test('a token needs the chain; stop() removes the data dir and is idempotent', async () => {
    const gw = await startGateway({ chain: false })
    expect(gw.chainUrl).toBeNull()
    await expect(gw.chip({ token: true })).rejects.toThrow(/phygital contract/)
    expect(fs.existsSync(gw.dataDir)).toBe(true)
    await Promise.all([gw.stop(), gw.stop()])
    expect(fs.existsSync(gw.dataDir)).toBe(false)
    await expect(fetch(`${gw.url}/health`)).rejects.toThrow()
  })

  test('a bad seed or setting is refused before anything is started: no data dir is made', async () => {
    const gatewayDirs = () =>
      fs
        .readdirSync(os.tmpdir())
        .filter((name) => name.startsWith(`tapgate-testing-${process.pid}-`))
        .flatMap((name) => fs.readdirSync(path.join(os.tmpdir(), name)))
    const before = gatewayDirs()
    await expect(startGateway({ chain: false, seed: { teams: [{ chips: [{ uid: 'nope' }] }] } })).rejects.toThrow(/import file is not valid/)
    await expect(startGateway({ chain: false, config: { taps: { maxCounterJump: -1 } } })).rejects.toThrow()
    expect(gatewayDirs()).toEqual(before)
  })

  test('a data dir whose process is gone is swept at the next start; a live one stays', () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tapgate-sweep-'))
    try {
      const dead = path.join(tmp, 'tapgate-testing-999999999-abc')
      const live = path.join(tmp, `tapgate-testing-${process.pid}-abc`)
      fs.mkdirSync(dead)
      fs.mkdirSync(live)
      expect(sweepTempDirs(tmp)).toBe(1)
      expect(fs.readdirSync(tmp)).toEqual([path.basename(live)])
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true })
    }
  })
})
