import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { buildApp } from '../../src/app.js'
import { ConfigSchema } from '../../src/config.js'
import { openStore } from '../../src/db/store.js'
import { mediaPath } from '../../src/media/mediaCache.js'
import { createTestGateway, makeTempDir, type TestGateway } from '../helpers/gateway.js'
import { PNG, serve, startOrigin, type Origin } from './origin.js'

let gw: TestGateway
let origin: Origin
afterEach(async () => {
  await gw?.close()
  await origin?.stop()
})

/** A 1,000-byte PNG (the magic is what the fetcher checks), one per name so each has its own key. */
const image = (name: string) => Buffer.concat([PNG, Buffer.from(name.padEnd(1000 - PNG.length, '.'))])
const NAMES = ['a', 'b', 'c', 'd']

/** The cap holds two 1,000-byte images, not three. */
const CAP = { maxBytes: 1200, cacheMaxBytes: 2500 }

describe('media.cacheMaxBytes', () => {
  test('past the cap the least recently used image (served or fetched) is deleted, and fetched again when asked for', async () => {
    origin = await startOrigin()
    for (const name of NAMES) origin.route(`/${name}.png`, serve('image/png', image(name)))
    gw = await createTestGateway({ config: { media: { allowHosts: [origin.host], ...CAP } } })
    const paths: Record<string, string> = {}
    for (const name of NAMES) paths[name] = (await gw.store.tx((tx) => mediaPath(tx, origin.url(`/${name}.png`), gw.clock.now)))!
    const show = async (name: string) => {
      gw.clock.now += 1000
      const res = await gw.app.inject({ url: paths[name]! })
      expect(res.statusCode, name).toBe(200)
      expect(res.rawPayload.equals(image(name)), name).toBe(true)
      await gw.app.services.media.idle()
    }
    const cached = () => fs.readdirSync(path.join(gw.dataDir, 'media')).map((key) => NAMES.find((name) => paths[name]!.endsWith(key))).sort()
    const fetches = () => NAMES.map((name) => origin.hits.get(`/${name}.png`) ?? 0)

    await show('a')
    await show('b')
    await show('a') // a is now more recent than b
    expect(cached()).toEqual(['a', 'b'])
    await show('c') // over the cap: b goes, not a
    expect(cached()).toEqual(['a', 'c'])
    expect(fetches()).toEqual([1, 1, 1, 0])

    await show('b') // fetched again; a is now the least recently used
    expect(cached()).toEqual(['b', 'c'])
    expect(fetches()).toEqual([1, 2, 1, 0])
    // The row still knows the evicted image: the card shows it again, fetched anew.
    expect(await gw.store.media.get(paths.a!.slice('/media/'.length))).toMatchObject({ contentType: 'image/png', bytes: 1000 })
  })

  test('the order survives a restart: a new process reads it from the files', async () => {
    origin = await startOrigin()
    for (const name of NAMES) origin.route(`/${name}.png`, serve('image/png', image(name)))
    const dataDir = makeTempDir()
    const config = ConfigSchema.parse({ logLevel: 'silent', demo: false, dataDir, media: { allowHosts: [origin.host], ...CAP } })
    let clock = Date.now() - 3_600_000
    const run = async (names: string[]) => {
      const store = openStore({ dataDir })
      const app = await buildApp({ config, store, now: () => clock })
      try {
        for (const name of names) {
          clock += 120_000
          const p = (await store.tx((tx) => mediaPath(tx, origin.url(`/${name}.png`), clock)))!
          expect((await app.inject({ url: p })).statusCode).toBe(200)
          await app.services.media.idle()
        }
      } finally {
        await app.close()
        await store.close()
      }
    }
    try {
      await run(['a', 'b', 'a'])
      await run(['c'])
      expect(fs.readdirSync(path.join(dataDir, 'media')).length).toBe(2)
      expect(origin.hits.get('/a.png')).toBe(1)
      // b was the least recently used when the second process filled the cap: a is still cached.
      await run(['a'])
      expect(origin.hits.get('/a.png')).toBe(1)
      await run(['b'])
      expect(origin.hits.get('/b.png')).toBe(2)
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
