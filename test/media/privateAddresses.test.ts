import { afterEach, describe, expect, test } from 'vitest'
import { mediaPath } from '../../src/media/mediaCache.js'
import { freePort } from '../helpers/freePort.js'
import { createTestGateway, type TestGateway } from '../helpers/gateway.js'
import { PNG, serve, startOrigin, type Origin } from './origin.js'

let gw: TestGateway | undefined
const origins: Origin[] = []
afterEach(async () => {
  await gw?.close()
  gw = undefined
  await Promise.all(origins.splice(0).map((o) => o.stop()))
})

/** An image server holding what must not leak: every test asserts it was never reached. */
async function secretOrigin(address: '127.0.0.1' | '::1' = '127.0.0.1') {
  const origin = await startOrigin(address)
  origins.push(origin)
  origin.route('/secret.png', serve('image/png', PNG))
  return origin
}

const hits = (origin: Origin) => [...origin.hits.values()].reduce((a, b) => a + b, 0)
const refused = (url: string) => `Refused: ${new URL(url).hostname} is not a public address (media.allowHosts lists exceptions)`

/** Records an image URL as a card would, asks for it, and returns the answer and the row's error. */
async function fetchThrough(url: string) {
  const p = (await gw!.store.tx((tx) => mediaPath(tx, url, gw!.clock.now)))!
  const res = await gw!.app.inject({ url: p })
  const error = res.statusCode === 200 ? undefined : (res.json() as { error: string }).error
  return { status: res.statusCode, error, rowError: (await gw!.store.media.get(p.slice('/media/'.length)))!.error }
}

describe('the media fetcher stays off loopback and the LAN', () => {
  test('loopback in every notation is refused before any connection: IPv4, IPv6, IPv4-mapped, decimal, hex, octal, short, localhost', async () => {
    const v4 = await secretOrigin()
    const v6 = await secretOrigin('::1')
    gw = await createTestGateway()
    const urls = [
      `http://127.0.0.1:${v4.port}/secret.png`,
      `http://2130706433:${v4.port}/secret.png`,
      `http://0x7f000001:${v4.port}/secret.png`,
      `http://0177.0.0.1:${v4.port}/secret.png`,
      `http://127.1:${v4.port}/secret.png`,
      `http://[::ffff:127.0.0.1]:${v4.port}/secret.png`,
      `http://[::ffff:7f00:1]:${v4.port}/secret.png`,
      `http://[64:ff9b::127.0.0.1]:${v4.port}/secret.png`,
      `http://0.0.0.0:${v4.port}/secret.png`,
      `http://[::1]:${v6.port}/secret.png`,
      `http://[::]:${v6.port}/secret.png`,
      // A name: the system resolver (/etc/hosts) answers loopback.
      `http://localhost:${v4.port}/secret.png`,
    ]
    for (const url of urls) {
      const answer = await fetchThrough(url)
      expect(answer, url).toEqual({ status: 404, error: 'media_unavailable', rowError: refused(url) })
    }
    expect(hits(v4) + hits(v6)).toBe(0)
  })

  test('private, CGNAT, link-local (cloud metadata), unique-local, multicast and reserved addresses are refused without a connection', async () => {
    // A short deadline: the code before this fix tried to connect to each of these.
    gw = await createTestGateway({ config: { media: { fetchTimeoutMs: 300 } } })
    for (const url of [
      'http://10.0.0.1/a.png',
      'http://172.16.5.4/a.png',
      'http://192.168.1.20/a.png',
      'http://100.64.0.1/a.png',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00::1]/a.png',
      'http://[fe80::1]/a.png',
      'http://224.0.0.1/a.png',
      'http://240.0.0.1/a.png',
      'http://198.18.0.1/a.png',
      'http://[::ffff:192.168.1.1]/a.png',
      'http://[2001:db8::1]/a.png',
    ]) {
      const started = Date.now()
      expect(await fetchThrough(url), url).toEqual({ status: 404, error: 'media_unavailable', rowError: refused(url) })
      expect(Date.now() - started, url).toBeLessThan(250)
    }
  })

  test('a redirect from an allowed server to another loopback port is refused, in any notation', async () => {
    const allowed = await secretOrigin()
    const inner = await secretOrigin()
    gw = await createTestGateway({ config: { media: { allowHosts: [allowed.host] } } })
    const targets = [
      `http://127.0.0.1:${inner.port}/secret.png`,
      `http://localhost:${inner.port}/secret.png`,
      `http://0x7f000001:${inner.port}/secret.png`,
      `http://[::ffff:127.0.0.1]:${inner.port}/secret.png`,
    ]
    targets.forEach((target, i) => allowed.route(`/r${i}`, (_req, res) => res.writeHead(302, { location: target }).end()))
    for (const [i, target] of targets.entries()) {
      expect(await fetchThrough(allowed.url(`/r${i}`)), target).toEqual({ status: 404, error: 'media_unavailable', rowError: refused(target) })
    }
    expect(hits(inner)).toBe(0)
    // The allowed server itself, reached through a redirect to its own address, is fine.
    allowed.route('/again', (_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${allowed.port}/secret.png` }).end())
    expect((await fetchThrough(allowed.url('/again'))).status).toBe(200)
  })

  test('a refused address tells nothing about its port: an open and a closed one give the same error, directly or through a redirect', async () => {
    const open = await secretOrigin()
    const closed = await freePort()
    const front = await secretOrigin()
    gw = await createTestGateway({ config: { media: { allowHosts: [front.host] } } })
    const direct = [await fetchThrough(`http://127.0.0.1:${open.port}/secret.png`), await fetchThrough(`http://127.0.0.1:${closed}/secret.png`)]
    expect(direct[0]).toEqual(direct[1])
    expect(direct[0]!.rowError).toBe(refused('http://127.0.0.1/'))

    front.route('/to-open', (_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${open.port}/secret.png` }).end())
    front.route('/to-closed', (_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${closed}/secret.png` }).end())
    const redirected = [await fetchThrough(front.url('/to-open')), await fetchThrough(front.url('/to-closed'))]
    expect(redirected[0]).toEqual(redirected[1])
    expect(redirected[0]!.rowError).toBe(refused('http://127.0.0.1/'))
    expect(hits(open)).toBe(0)
  })

  test('media.allowHosts opens exactly what it names: an address and port, a CIDR range, a host name', async () => {
    const origin = await secretOrigin()
    const image = (host: string) => `http://${host}:${origin.port}/secret.png`

    gw = await createTestGateway()
    expect((await fetchThrough(image('127.0.0.1'))).rowError).toBe(refused(image('127.0.0.1')))
    await gw.close()

    // Address and port: that port only.
    gw = await createTestGateway({ config: { media: { allowHosts: [origin.host] } } })
    expect((await fetchThrough(image('127.0.0.1'))).status).toBe(200)
    expect((await fetchThrough(`http://127.0.0.1:${await freePort()}/secret.png`)).rowError).toBe(refused(image('127.0.0.1')))
    await gw.close()

    // A range, from the environment's comma list as from the file.
    gw = await createTestGateway({ config: { media: { allowHosts: '10.0.0.0/8, 127.0.0.0/8' } } })
    expect((await fetchThrough(image('127.0.0.1'))).status).toBe(200)
    await gw.close()

    // A name matches the URL's host, not the address it resolves to.
    gw = await createTestGateway({ config: { media: { allowHosts: ['localhost'] } } })
    expect((await fetchThrough(image('localhost'))).status).toBe(200)
    expect((await fetchThrough(image('127.0.0.1'))).rowError).toBe(refused(image('127.0.0.1')))
    expect(origin.hits.get('/secret.png')).toBe(3)
  })
})
