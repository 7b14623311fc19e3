import { afterEach, describe, expect, test } from 'vitest'
import { createAddressPolicy } from '../../src/media/allowHosts.js'
import { fetchImage, MediaFetchError } from '../../src/media/fetchImage.js'
import type { Resolve } from '../../src/media/guardedGet.js'
import { PNG, serve, startOrigin, type Origin } from './origin.js'

let origin: Origin
afterEach(async () => {
  await origin?.stop()
})

const limits = { timeoutMs: 2000, maxBytes: 100_000, maxRedirects: 3, userAgent: 'tapgate-test' }

/** A DNS under the test's control (there is no network here): names → addresses, every question recorded. */
function fakeDns(answers: Record<string, string[]>) {
  const asked: string[] = []
  const resolve: Resolve = async (hostname) => {
    asked.push(hostname)
    const addresses = answers[hostname]
    if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
  }
  return { resolve, asked }
}

async function failure(promise: Promise<unknown>): Promise<MediaFetchError> {
  const error = await promise.then(
    () => new Error('fetched'),
    (e: unknown) => e,
  )
  if (!(error instanceof MediaFetchError)) throw error
  return error
}

describe('fetchImage checks the address it connects to', () => {
  test('a name that resolves to loopback is refused, and nothing connects', async () => {
    origin = await startOrigin()
    origin.route('/a.png', serve('image/png', PNG))
    const dns = fakeDns({ 'images.example': ['127.0.0.1'], 'lan.example': ['192.168.1.7', '10.1.2.3'] })
    const permits = createAddressPolicy([])
    for (const name of ['images.example', 'lan.example']) {
      const error = await failure(fetchImage(new URL(`http://${name}:${origin.port}/a.png`), { ...limits, permits, resolve: dns.resolve }))
      expect(error).toMatchObject({ code: 'refused', message: `Refused: ${name} is not a public address (media.allowHosts lists exceptions)` })
    }
    expect(dns.asked).toEqual(['images.example', 'lan.example'])
    expect(origin.hits.size).toBe(0)
  })

  test('the socket goes to the address that was checked, resolved once per hop (no second lookup to rebind)', async () => {
    origin = await startOrigin()
    const hosts: string[] = []
    origin.route('/a.png', (req, res) => {
      hosts.push(req.headers.host ?? '')
      serve('image/png', PNG)(req, res)
    })
    // Only 127.0.0.1 on the origin's port is allowed: of the answers, the fetcher must pick it and
    // connect there, not to the first answer and not to whatever a second lookup would say.
    const dns = fakeDns({ 'mixed.example': ['10.9.9.9', '127.0.0.1'] })
    const image = await fetchImage(new URL(`http://mixed.example:${origin.port}/a.png`), { ...limits, permits: createAddressPolicy([origin.host]), resolve: dns.resolve })
    expect(image.body.equals(PNG)).toBe(true)
    // The request still names the host (virtual hosting, TLS SNI), though the name exists only in our resolver.
    expect(hosts).toEqual([`mixed.example:${origin.port}`])
    expect(dns.asked).toEqual(['mixed.example'])
  })

  test('a redirect to a name that resolves to loopback is refused, though the first host was allowed by name', async () => {
    origin = await startOrigin()
    origin.route('/a.png', serve('image/png', PNG))
    origin.route('/hop', (_req, res) => res.writeHead(302, { location: `http://rebind.example:${origin.port}/a.png` }).end())
    const dns = fakeDns({ 'images.example': ['127.0.0.1'], 'rebind.example': ['127.0.0.1'] })
    const permits = createAddressPolicy(['images.example'])
    const error = await failure(fetchImage(new URL(`http://images.example:${origin.port}/hop`), { ...limits, permits, resolve: dns.resolve }))
    expect(error.code).toBe('refused')
    expect(dns.asked).toEqual(['images.example', 'rebind.example'])
    expect(origin.hits.get('/hop')).toBe(1)
    expect(origin.hits.get('/a.png')).toBeUndefined()
  })

  test('a name the resolver does not know is a network error naming the host', async () => {
    const dns = fakeDns({})
    const error = await failure(fetchImage(new URL('http://nowhere.example/a.png'), { ...limits, permits: createAddressPolicy([]), resolve: dns.resolve }))
    expect(error).toMatchObject({ code: 'network', message: 'Cannot fetch from nowhere.example: ENOTFOUND' })
  })
})
