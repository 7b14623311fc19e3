import { afterEach, describe, expect, test } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { createTestGateway, type TestGateway } from '../helpers/gateway.js'

let gw: TestGateway | undefined
afterEach(async () => {
  await gw?.close()
  gw = undefined
})

/** Two requests from each of two clients behind one proxy (app.inject comes from 127.0.0.1), limit 2 per client. */
async function statuses(trustProxy: boolean | string[] | undefined): Promise<{ first: number[]; second: number[] }> {
  gw = await createTestGateway({ config: { rateLimit: { max: 2 }, ...(trustProxy === undefined ? {} : { trustProxy }) } })
  const get = (client: string) =>
    gw!.app.inject({ url: '/refs/AAAAAAAAAAAAAAAAAAAAA', headers: { 'x-forwarded-for': client } }).then((r) => r.statusCode)
  const first = [await get('203.0.113.1'), await get('203.0.113.1')]
  const second = [await get('203.0.113.2'), await get('203.0.113.2')]
  return { first, second }
}

describe('trustProxy', () => {
  test('trusted: two X-Forwarded-For clients get a rate-limit bucket each', async () => {
    expect(await statuses(true)).toEqual({ first: [404, 404], second: [404, 404] })
  })

  test('not trusted (the default): every client behind the proxy shares one bucket', async () => {
    expect(await statuses(undefined)).toEqual({ first: [404, 404], second: [429, 429] })
  })

  test('a list of proxy addresses/CIDRs that includes the proxy trusts it', async () => {
    expect(await statuses(['10.0.0.0/8', '127.0.0.1'])).toEqual({ first: [404, 404], second: [404, 404] })
  })

  test('a list that leaves the proxy out trusts nobody: one shared bucket', async () => {
    expect(await statuses(['10.0.0.0/8'])).toEqual({ first: [404, 404], second: [429, 429] })
  })

  test('TAPGATE_TRUST_PROXY: true/false or a comma list of addresses and CIDRs; a hop count is refused', () => {
    const load = (value: string) => loadConfig({ env: { TAPGATE_TRUST_PROXY: value } }).trustProxy
    expect(loadConfig({ env: {} }).trustProxy).toBe(false)
    expect(load('true')).toBe(true)
    expect(load('false')).toBe(false)
    // Fastify 5 fails closed on a hop count (it cannot tell the proxy from a direct client): it would trust nobody.
    expect(() => load('2')).toThrow(/TAPGATE_TRUST_PROXY: A hop count is not supported .* list the proxy's addresses/)
    expect(load('127.0.0.1, 10.0.0.0/8,::1,fd00::/8')).toEqual(['127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8'])
    expect(() => load('yes please')).toThrow(/TAPGATE_TRUST_PROXY: Must be true, false, or a comma-separated list of IP addresses and CIDR ranges \(got "yes please"\)/)
    expect(() => load('10.0.0.0/33')).toThrow(/TAPGATE_TRUST_PROXY/)
  })

  test('the config file takes the same forms, with a list as a JSON array', () => {
    const parse = (trustProxy: unknown) => loadConfig({ env: {}, overrides: { trustProxy } }).trustProxy
    expect(() => parse(3)).toThrow(/--trustProxy: A hop count is not supported/)
    expect(parse(['192.168.1.10'])).toEqual(['192.168.1.10'])
    expect(parse('192.168.1.10,192.168.1.11')).toEqual(['192.168.1.10', '192.168.1.11'])
    expect(parse(true)).toBe(true)
    expect(() => parse(['not an ip'])).toThrow(/--trustProxy/)
  })
})
