import { afterEach, describe, expect, test } from 'vitest'
import { SnapshotStore } from '../../src/plugins/rateLimitStore.js'
import { createTestGateway, type TestGateway } from '../helpers/gateway.js'

let gw: TestGateway | undefined
afterEach(async () => {
  await gw?.close()
  gw = undefined
})

const count = (store: SnapshotStore, key: string, timeWindow = 60_000) =>
  new Promise<{ current: number; ttl: number }>((resolve, reject) => store.incr(key, (error, result) => (error ? reject(error) : resolve(result!)), timeWindow))

describe('the rate-limit store', () => {
  test('a burst in one tick: exactly max pass, the rest are 429 (the plugin\'s own store refused all 200)', async () => {
    gw = await createTestGateway({ config: { rateLimit: { max: 120, windowMs: 60_000 } } })
    // GET /refs/:id is rate limited per client address; an unknown ref is a 404 that still counts.
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => gw!.app.inject({ url: `/refs/${'r'.repeat(20)}${i}` })))
    const statuses = answers.map((res) => res.statusCode)
    expect(statuses.filter((s) => s === 429)).toHaveLength(80)
    expect(statuses.filter((s) => s !== 429)).toHaveLength(120)
  })

  test('each answer is the count when that request was counted; a window ends after timeWindow; the least recently used key goes first past the cache size', async () => {
    let now = 1_000
    const store = new SnapshotStore({ cache: 2 }, () => now)
    expect(await count(store, 'a')).toEqual({ current: 1, ttl: 60_000 })
    now += 10_000
    expect(await count(store, 'a')).toEqual({ current: 2, ttl: 50_000 })
    now += 50_000
    expect(await count(store, 'a')).toEqual({ current: 1, ttl: 60_000 })
    await count(store, 'b')
    await count(store, 'a')
    await count(store, 'c') // evicts b, the least recently counted
    expect((await count(store, 'a')).current).toBe(3)
    expect((await count(store, 'b')).current).toBe(1)
  })
})
