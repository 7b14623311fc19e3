import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { buildApp } from '../../src/app.js'
import { ConfigSchema } from '../../src/config.js'
import { openStore } from '../../src/db/store.js'
import { MEDIA_RETRY_MS, mediaPath } from '../../src/media/mediaCache.js'
import { mediaKey } from '../../src/media/mediaUrl.js'
import { createTestGateway, makeTempDir, type TestGateway } from '../helpers/gateway.js'
import { JPEG, PNG, serve, startOrigin, SVG, type Origin } from './origin.js'

let gw: TestGateway
let origin: Origin
afterEach(async () => {
  await gw?.close()
  await origin?.stop()
})

const SANDBOX_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"

/** The gateway, with the loopback origin (its port only) opened by media.allowHosts. */
async function setup(media: Record<string, unknown> = {}) {
  origin = await startOrigin()
  gw = await createTestGateway({ config: { media: { allowHosts: [origin.host], ...media } } })
}

/** Records a URL as a card would (mediaPath in a store.tx) and returns its /media path. */
const record = async (url: string) => (await gw.store.tx((tx) => mediaPath(tx, url, gw.clock.now)))!
const keyOf = (p: string) => p.slice('/media/'.length)
const get = (url: string) => gw.app.inject({ url })
const row = async (p: string) => (await gw.store.media.get(keyOf(p)))!

describe('GET /media/:key', () => {
  test('an image is fetched once, cached, and served with its type and the immutable, sandboxed headers', async () => {
    await setup()
    origin.route('/a.png', serve('image/png', PNG))
    const p = await record(origin.url('/a.png'))
    expect(p).toBe(`/media/${mediaKey(origin.url('/a.png'))}`)

    for (let i = 0; i < 3; i++) {
      const res = await get(p)
      expect(res.statusCode).toBe(200)
      expect(res.rawPayload.equals(PNG)).toBe(true)
      expect(res.headers['content-type']).toBe('image/png')
      expect(res.headers['cache-control']).toBe('public, max-age=86400, immutable')
      expect(res.headers['x-content-type-options']).toBe('nosniff')
      expect(res.headers['content-security-policy']).toBe(SANDBOX_CSP)
    }
    expect(origin.hits.get('/a.png')).toBe(1)
    expect(await row(p)).toMatchObject({ contentType: 'image/png', bytes: PNG.length, fetchedAt: gw.clock.now, failedAt: null, error: null })
  })

  test('prefetch and page loads at the same time share one fetch', async () => {
    await setup()
    origin.route('/slow.png', serve('image/png', PNG, 150))
    const p = await record(origin.url('/slow.png'))
    gw.app.services.media.prefetch(keyOf(p))
    gw.app.services.media.prefetch(keyOf(p))
    const answers = await Promise.all([get(p), get(p), get(p)])
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 200])
    await gw.app.services.media.idle()
    gw.app.services.media.prefetch(keyOf(p)) // cached: no fetch
    await gw.app.services.media.idle()
    expect(origin.hits.get('/slow.png')).toBe(1)
  })

  test('a prefetched image is served offline, by a restarted gateway, after its origin is gone', async () => {
    origin = await startOrigin()
    origin.route('/card.png', serve('image/png', PNG))
    const dataDir = makeTempDir()
    const config = ConfigSchema.parse({ logLevel: 'silent', demo: false, dataDir, media: { allowHosts: [origin.host] } })
    const start = async () => {
      const store = openStore({ dataDir })
      const app = await buildApp({ config, store })
      return { app, store }
    }
    const first = await start()
    const p = (await first.store.tx((tx) => mediaPath(tx, origin.url('/card.png'), Date.now())))!
    first.app.services.media.prefetch(keyOf(p))
    await first.app.services.media.idle()
    await first.app.close()
    await first.store.close()
    await origin.stop()

    const second = await start()
    try {
      const res = await second.app.inject({ url: p })
      expect(res.statusCode).toBe(200)
      expect(res.rawPayload.equals(PNG)).toBe(true)
      expect(res.headers['content-type']).toBe('image/png')
    } finally {
      await second.app.close()
      await second.store.close()
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
    expect(origin.hits.get('/card.png')).toBe(1)
  })

  test('files: <dataDir>/media is 0700, an image 0600, no temp file left behind', async () => {
    await setup()
    origin.route('/a.png', serve('image/png', PNG))
    const p = await record(origin.url('/a.png'))
    expect((await get(p)).statusCode).toBe(200)
    const dir = path.join(gw.dataDir, 'media')
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
    expect(fs.statSync(path.join(dir, keyOf(p))).mode & 0o777).toBe(0o600)
    expect(fs.readdirSync(dir)).toEqual([keyOf(p)])
  })

  test('a cached file that went missing (or was cut short) is fetched again', async () => {
    await setup()
    origin.route('/a.png', serve('image/png', PNG))
    const p = await record(origin.url('/a.png'))
    expect((await get(p)).statusCode).toBe(200)
    const file = path.join(gw.dataDir, 'media', keyOf(p))
    fs.rmSync(file)
    expect((await get(p)).rawPayload.equals(PNG)).toBe(true)
    fs.writeFileSync(file, PNG.subarray(0, 10))
    expect((await get(p)).rawPayload.equals(PNG)).toBe(true)
    expect(origin.hits.get('/a.png')).toBe(3)
  })

  test('an SVG is served as image/svg+xml under the sandbox CSP, so its script never runs on our origin', async () => {
    await setup()
    origin.route('/logo.svg', serve('image/svg+xml; charset=utf-8', SVG))
    const res = await get(await record(origin.url('/logo.svg')))
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('image/svg+xml')
    expect(res.headers['content-security-policy']).toBe(SANDBOX_CSP)
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    expect(res.body).toBe(SVG)
  })

  test('data: URLs are decoded, not fetched: base64 and percent-encoded', async () => {
    await setup()
    const png = await get(await record(`data:image/png;base64,${PNG.toString('base64')}`))
    expect(png.statusCode).toBe(200)
    expect(png.headers['content-type']).toBe('image/png')
    expect(png.rawPayload.equals(PNG)).toBe(true)

    const svg = await get(await record(`data:image/svg+xml;charset=utf-8,${encodeURIComponent(SVG)}`))
    expect(svg.statusCode).toBe(200)
    expect(svg.headers['content-security-policy']).toBe(SANDBOX_CSP)
    expect(svg.body).toBe(SVG)

    // Declared PNG, but HTML: refused like a fetched one.
    const fake = await record(`data:image/png;base64,${Buffer.from('<html>hi</html>').toString('base64')}`)
    expect((await get(fake)).json()).toMatchObject({ error: 'media_unavailable' })
    expect((await row(fake)).error).toMatch(/not the image\/png/)
  })

  test('ipfs:// goes through media.ipfsGateway, in both URL forms (the configured gateway needs no allowHosts entry)', async () => {
    origin = await startOrigin()
    gw = await createTestGateway({ config: { media: { ipfsGateway: `${origin.base}/ipfs` } } })
    const cid = 'bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi'
    origin.route(`/ipfs/${cid}/front.png`, serve('image/png', PNG))
    origin.route(`/ipfs/${cid}`, serve('image/jpeg', JPEG))

    const front = await get(await record(`ipfs://${cid}/front.png`))
    expect(front.statusCode).toBe(200)
    expect(front.rawPayload.equals(PNG)).toBe(true)
    const legacy = await get(await record(`ipfs://ipfs/${cid}`))
    expect(legacy.statusCode).toBe(200)
    expect(legacy.headers['content-type']).toBe('image/jpeg')
    expect(origin.hits.get(`/ipfs/${cid}/front.png`)).toBe(1)
    expect(origin.hits.get(`/ipfs/${cid}`)).toBe(1)
  })

  test('redirects: up to 3 are followed, a 4th is refused', async () => {
    await setup()
    origin.route('/img.png', serve('image/png', PNG))
    for (let i = 1; i <= 4; i++) origin.route(`/r${i}`, (_req, res) => res.writeHead(302, { location: i === 1 ? '/img.png' : `/r${i - 1}` }).end())
    expect((await get(await record(origin.url('/r3')))).statusCode).toBe(200)
    const tooMany = await record(origin.url('/r4'))
    const res = await get(tooMany)
    expect(res.statusCode).toBe(404)
    expect(res.json()).toMatchObject({ error: 'media_unavailable' })
    expect((await row(tooMany)).error).toBe('More than 3 redirects')

    // A redirect may not leave http(s).
    origin.route('/to-file', (_req, res) => res.writeHead(301, { location: 'file:///etc/passwd' }).end())
    const toFile = await record(origin.url('/to-file'))
    expect((await get(toFile)).statusCode).toBe(404)
    expect((await row(toFile)).error).toMatch(/^Not an http\(s\) URL/)
  })

  test('an origin 404 → 404 media_unavailable and the row keeps the error; retried no sooner than 60 s later', async () => {
    await setup()
    const p = await record(origin.url('/gone.png'))
    const res = await get(p)
    expect(res.statusCode).toBe(404)
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    expect(res.json()).toEqual({ success: false, error: 'media_unavailable', message: expect.any(String) })
    expect(await row(p)).toMatchObject({ fetchedAt: null, failedAt: gw.clock.now, error: `HTTP 404 from ${new URL(origin.base).host}` })

    origin.route('/gone.png', serve('image/png', PNG))
    gw.clock.now += MEDIA_RETRY_MS - 1
    expect((await get(p)).statusCode).toBe(404)
    gw.app.services.media.prefetch(keyOf(p))
    await gw.app.services.media.idle()
    expect(origin.hits.get('/gone.png')).toBe(1)

    gw.clock.now += 1
    const retried = await get(p)
    expect(retried.statusCode).toBe(200)
    expect(origin.hits.get('/gone.png')).toBe(2)
    expect(await row(p)).toMatchObject({ fetchedAt: gw.clock.now, failedAt: null, error: null })
  })

  test('a silent origin is given up on after media.fetchTimeoutMs', async () => {
    await setup({ fetchTimeoutMs: 300 })
    origin.route('/hang.png', () => {}) // never answers
    const p = await record(origin.url('/hang.png'))
    const started = Date.now()
    const res = await get(p)
    expect(Date.now() - started).toBeLessThan(2000)
    expect(res.statusCode).toBe(404)
    expect((await row(p)).error).toBe('No image within 300 ms')

    // A body that starts but never ends is cut off too.
    origin.route('/trickle.png', (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' })
      res.write(PNG.subarray(0, 8))
    })
    const trickle = await record(origin.url('/trickle.png'))
    expect((await get(trickle)).statusCode).toBe(404)
    expect((await row(trickle)).error).toBe('No image within 300 ms')
  })

  test('an image above media.maxBytes is refused, declared or streamed', async () => {
    await setup({ maxBytes: 1000 })
    const big = Buffer.concat([PNG, Buffer.alloc(2000)])
    origin.route('/declared.png', serve('image/png', big))
    origin.route('/streamed.png', (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' }) // chunked: no content-length
      res.write(PNG)
      const more = setInterval(() => res.write(Buffer.alloc(500)), 5)
      res.on('close', () => clearInterval(more))
    })
    for (const name of ['/declared.png', '/streamed.png']) {
      const p = await record(origin.url(name))
      const res = await get(p)
      expect(res.statusCode).toBe(404)
      expect((await row(p)).error).toBe('Larger than 1000 bytes')
    }
    expect(fs.existsSync(path.join(gw.dataDir, 'media')) ? fs.readdirSync(path.join(gw.dataDir, 'media')) : []).toEqual([])
  })

  test('only the image types we show, checked against the bytes', async () => {
    await setup()
    origin.route('/page.html', serve('text/html', '<html><body>hi</body></html>'))
    origin.route('/lie.png', serve('image/png', '<html><script>alert(1)</script></html>'))
    origin.route('/svg-lie.svg', serve('image/svg+xml', '<html><script>alert(1)</script></html>'))
    origin.route('/bmp.bmp', serve('image/bmp', Buffer.from('BM\0\0\0\0')))
    origin.route('/octet', serve('application/octet-stream', PNG))
    origin.route('/mislabelled.png', serve('image/png', JPEG))

    const refused: Record<string, RegExp> = {
      '/page.html': /^Not an image type the kiosk shows: text\/html$/,
      '/lie.png': /not the image\/png/,
      '/svg-lie.svg': /not the image\/svg\+xml/,
      '/bmp.bmp': /image\/bmp/,
    }
    for (const [name, error] of Object.entries(refused)) {
      const p = await record(origin.url(name))
      expect((await get(p)).statusCode, name).toBe(404)
      expect((await row(p)).error, name).toMatch(error)
    }
    // An unlabelled raster image is what its magic says; a mislabelled one is served as what it is.
    expect((await get(await record(origin.url('/octet')))).headers['content-type']).toBe('image/png')
    expect((await get(await record(origin.url('/mislabelled.png')))).headers['content-type']).toBe('image/jpeg')
  })

  test('an origin that is not there → media_unavailable, the reason on the row', async () => {
    await setup()
    const p = await record(origin.url('/a.png'))
    await origin.stop()
    expect((await get(p)).json()).toMatchObject({ error: 'media_unavailable' })
    expect((await row(p)).error).toMatch(/^Cannot fetch from 127\.0\.0\.1:\d+: ECONNREFUSED$/)
  })

  test('unknown keys and anything but 64 lower-case hex digits → 404 media_not_found, never a file', async () => {
    await setup()
    // A file the key must never reach.
    fs.mkdirSync(path.join(gw.dataDir, 'media'), { recursive: true })
    fs.writeFileSync(path.join(gw.dataDir, 'media', 'x'), 'secret')
    const known = keyOf(await record(origin.url('/a.png')))
    for (const key of [
      'a'.repeat(64),
      known.toUpperCase(),
      `${known}0`,
      'x',
      '..%2Ftapgate.sqlite',
      '..%2F..%2F..%2Fetc%2Fpasswd',
      '%2E%2E%2Fsecret.key',
      `..%2Fmedia%2F${known}`,
    ]) {
      const res = await get(`/media/${key}`)
      expect(res.statusCode, key).toBe(404)
      expect(res.json(), key).toMatchObject({ error: 'media_not_found' })
    }
    expect(origin.hits.size).toBe(0)
  })

  test('closing the gateway aborts a fetch in flight and leaves its row untouched', async () => {
    await setup({ fetchTimeoutMs: 20_000 })
    origin.route('/hang.png', () => {})
    const p = await record(origin.url('/hang.png'))
    const pending = get(p)
    while (!origin.hits.get('/hang.png')) await new Promise((resolve) => setTimeout(resolve, 5))
    const started = Date.now()
    await gw.app.close()
    expect(Date.now() - started).toBeLessThan(2000)
    await pending.catch(() => undefined)
    expect(await row(p)).toMatchObject({ fetchedAt: null, failedAt: null, error: null })
  })

  test('is rate limited per client address like the other public routes: a flood is 429, another address is still served', async () => {
    await setup()
    origin.route('/a.png', serve('image/png', PNG))
    const p = await record(origin.url('/a.png'))
    const from = (remoteAddress: string, url = p) => gw.app.inject({ url, remoteAddress })
    const statuses: number[] = []
    for (let i = 0; i < 125; i++) statuses.push((await from('10.0.0.9', i % 2 === 0 ? p : `/media/${'0'.repeat(64)}`)).statusCode)
    expect(statuses.slice(0, 120).every((s) => s === 200 || s === 404)).toBe(true)
    expect(statuses.slice(120)).toEqual([429, 429, 429, 429, 429])
    expect((await from('10.0.0.9')).json()).toMatchObject({ success: false, error: 'rate_limited' })
    expect((await from('10.0.0.10')).statusCode).toBe(200)
    expect(origin.hits.get('/a.png')).toBe(1)
  })

  test('is not in the OpenAPI document', async () => {
    await setup()
    const doc = (await get('/openapi.json')).json() as { paths: Record<string, unknown> }
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/media'))).toBe(false)
  })
})
