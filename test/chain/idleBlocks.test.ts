import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ConfigSchema } from '../../src/config.js'
import { type ChainGateway, createChainGateway } from '../helpers/chainGateway.js'

/*
 * On the embedded chain blocks used to be mined only when the relayer sent
 * something, so "blockExpiry = head + 100" bounded nothing in time. It now
 * mines an empty block whenever chain.idleBlockSeconds pass without one.
 */

let gw: ChainGateway

beforeAll(async () => {
  gw = await createChainGateway({ config: { chain: { idleBlockSeconds: 1 } } })
})
afterAll(async () => gw?.close())

describe('the embedded chain while idle', () => {
  test('mines an empty block every idleBlockSeconds, so a signature’s blockExpiry is a bound in time', { timeout: 20_000 }, async () => {
    const start = await gw.publicClient.getBlockNumber()
    await new Promise((resolve) => setTimeout(resolve, 3_500))
    const later = await gw.publicClient.getBlockNumber()
    // One block a second, give or take a poll: at least 2, never a burst.
    expect(later - start).toBeGreaterThanOrEqual(2n)
    expect(later - start).toBeLessThanOrEqual(5n)
    const block = await gw.publicClient.getBlock({ blockNumber: later })
    expect(block.transactions).toHaveLength(0)
  })

  test('is on by default (12 s) and can be turned off with 0', () => {
    expect(ConfigSchema.parse({}).chain.idleBlockSeconds).toBe(12)
    expect(ConfigSchema.parse({ chain: { idleBlockSeconds: 0 } }).chain.idleBlockSeconds).toBe(0)
  })
})
