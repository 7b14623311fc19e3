import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import { STATUS_POLL_FACTOR } from '../../src/routes/rateLimit.js'
import type { PostgresStore, SqliteStore } from '../../src/db/store.js'
import { type ChainGateway, createBackendChainGateway } from '../helpers/chainGateway.js'
import { type ClaimStation, setUpClaimStation, TEE } from '../helpers/claimStation.js'

let gw: ChainGateway<SqliteStore | PostgresStore>
let shop: ClaimStation

beforeAll(async () => {
  gw = await createBackendChainGateway()
  shop = await setUpClaimStation(gw, { listen: false })
}, 60_000)
afterAll(async () => {
  await gw?.close()
})
afterEach(() => {
  vi.useRealTimers()
})

const MAX = 120 // rateLimit.max's default: these tests run under the shipped settings
const PHONE = '10.0.0.5'
const FLOODER = '10.0.0.66'

const request = (remoteAddress: string, method: 'GET' | 'POST', url: string, payload?: object) =>
  gw.app.inject({ method, url, remoteAddress, ...(payload ? { payload } : {}) }).then((res) => res.statusCode)

/** A claim link opened on a phone, as the kiosk's QR code and the page give it. */
async function openedLink(counter: number): Promise<{ token: string; session: string }> {
  expect((await shop.tap(TEE, counter)).status).toBe(200)
  const { body } = await shop.handoff(await shop.lastClaimId())
  const token = new URL(body.url).pathname.split('/')[2]!
  const opened = await gw.app.inject({ method: 'POST', url: `/c/${token}/open`, remoteAddress: PHONE, payload: {} })
  expect(opened.statusCode).toBe(200)
  return { token, session: (opened.json() as { session: string }).session }
}

describe('rate limits on the claim links', () => {
  test('ten phones behind one venue address, each polling its status once a second for 3 minutes, are never refused; a flood from another address is', async () => {
    const phones = []
    for (let i = 0; i < 10; i++) phones.push(await openedLink(101 + i))
    const start = Date.now()
    // Only Date: the limiter's windows follow it; sockets and the chain keep real timers.
    vi.useFakeTimers({ toFake: ['Date'] })
    const polls: number[] = []
    const flood: number[] = []
    const statusUrl = `/c/${phones[0]!.token}/status`
    for (let second = 0; second < 180; second++) {
      vi.setSystemTime(start + second * 1000)
      for (const { token, session } of phones) polls.push(await request(PHONE, 'POST', `/c/${token}/status`, { session }))
      // In the first and the third minute, another address sends 1,300 polls within the second (one
      // after the other: the limiter's in-memory store counts a burst of simultaneous ones as all over).
      if (second === 5 || second === 125) for (let i = 0; i < 1300; i++) flood.push(await request(FLOODER, 'POST', statusUrl, { session: phones[0]!.session }))
    }
    expect(polls.length).toBe(1800)
    expect(new Set(polls)).toEqual(new Set([200]))
    // Each burst: the status bucket's allowance passes, the rest is 429.
    const allowance = MAX * STATUS_POLL_FACTOR
    const burst = [...Array(allowance).fill(200), ...Array(1300 - allowance).fill(429)]
    expect(flood).toEqual([...burst, ...burst])
  }, 60_000)

  test('the page, open, resolve and recipient have the public limit: a flood is 429 rate_limited', async () => {
    const { token, session } = await openedLink(201)
    const routes: Array<[string, 'GET' | 'POST', string, object?]> = [
      ['page', 'GET', `/c/${token}`],
      ['open', 'POST', `/c/${token}/open`, {}],
      ['resolve', 'POST', `/c/${token}/resolve`, { session, name: 'nobody.eth' }],
      ['recipient', 'POST', `/c/${token}/recipient`, { session: 'A'.repeat(22), recipient: '0x0000000000000000000000000000000000000001' }],
    ]
    for (const [name, method, url, payload] of routes) {
      const address = `10.1.0.${routes.findIndex(([n]) => n === name) + 1}`
      const statuses = []
      for (let i = 0; i < MAX + 5; i++) statuses.push(await request(address, method, url, payload))
      expect(statuses.slice(0, MAX).includes(429), name).toBe(false)
      expect(statuses.slice(MAX), name).toEqual(Array(5).fill(429))
      const refused = await gw.app.inject({ method, url, remoteAddress: address, ...(payload ? { payload } : {}) })
      expect(refused.json(), name).toMatchObject({ success: false, error: 'rate_limited' })
      expect(refused.headers['retry-after'], name).toBeDefined()
    }
    // The phone's own address was not in any of those buckets.
    expect(await request(PHONE, 'POST', `/c/${token}/status`, { session })).toBe(200)
  }, 60_000)
})
