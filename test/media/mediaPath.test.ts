import { describe, expect, test } from 'vitest'
import { mediaPath } from '../../src/media/mediaCache.js'
import { checkImage, sniffRaster } from '../../src/media/imageType.js'
import { decodeDataPayload, ipfsGatewayUrl, mediaKey, parseMediaUrl } from '../../src/media/mediaUrl.js'
import { testDir, testStore } from '../helpers/gateway.js'
import { JPEG, PNG } from './origin.js'

const NOW = Date.parse('2026-11-21T10:00:00.000Z')

describe('mediaPath', () => {
  test('records a usable URL once and names it by sha256(url)', async () => {
    const store = testStore(testDir())
    const url = 'https://example.com/token.png'
    const first = await store.tx((tx) => mediaPath(tx, url, NOW))
    const again = await store.tx((tx) => mediaPath(tx, `  ${url}\n`, NOW + 1000))
    expect(first).toBe(`/media/${mediaKey(url)}`)
    expect(mediaKey(url)).toMatch(/^[0-9a-f]{64}$/)
    expect(again).toBe(first)
    expect(await store.media.get(mediaKey(url))).toEqual({
      key: mediaKey(url),
      url,
      contentType: null,
      bytes: null,
      fetchedAt: null,
      failedAt: null,
      error: null,
      createdAt: NOW,
    })
    expect(store.db.prepare('SELECT count(*) AS n FROM media').get()).toEqual({ n: 1 })
  })

  test('null, without a row, for what no page could show', async () => {
    const store = testStore(testDir())
    for (const url of [
      null,
      undefined,
      '',
      '   ',
      '/relative.png',
      'token.png',
      'ftp://example.com/a.png',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'https://',
      'https://user:pw@example.com/a.png',
      'ipfs://',
      'ipfs:///bafy',
      'ipfs://bafy/../../admin',
      'ipfs://bafy/%2e%2e/x',
      'ipfs://bafy\\x',
      'data:text/html,<script>alert(1)</script>',
      'data:image/bmp;base64,Qk0=',
      'data:image/png;base64',
      'ar://abc',
    ]) {
      expect(await store.tx((tx) => mediaPath(tx, url, NOW)), String(url)).toBeNull()
    }
    expect(store.db.prepare('SELECT count(*) AS n FROM media').get()).toEqual({ n: 0 })
  })

  test('accepts http, https, ipfs:// and data:image/…', async () => {
    const store = testStore(testDir())
    for (const url of [
      'http://example.com/a.png',
      'HTTPS://Example.com/a.png?size=2',
      'ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/1.png',
      'ipfs://ipfs/QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG',
      'data:image/png;base64,iVBORw0KGgo=',
      'data:image/svg+xml,%3Csvg%3E%3C/svg%3E',
      'data:image/JPG;base64,/9j/',
    ]) {
      expect(await store.tx((tx) => mediaPath(tx, url, NOW)), url).toMatch(/^\/media\/[0-9a-f]{64}$/)
    }
  })
})

describe('media URLs', () => {
  test('ipfs paths join the gateway with or without its trailing slash', () => {
    const source = parseMediaUrl('ipfs://ipfs/bafy/a b.png'.replace(' ', '%20'))
    expect(source).toEqual({ kind: 'ipfs', path: 'bafy/a%20b.png' })
    expect(ipfsGatewayUrl('https://ipfs.io/ipfs/', 'bafy/1.png').href).toBe('https://ipfs.io/ipfs/bafy/1.png')
    expect(ipfsGatewayUrl('http://127.0.0.1:8080/ipfs', 'bafy').href).toBe('http://127.0.0.1:8080/ipfs/bafy')
  })

  test('data: payloads: base64 (spaces and percent-escapes allowed) and raw bytes', () => {
    const decode = (url: string) => {
      const source = parseMediaUrl(url)
      if (source?.kind !== 'data') throw new Error('not data')
      return decodeDataPayload(source)
    }
    expect(decode(`data:image/png;base64,${PNG.toString('base64')}`).equals(PNG)).toBe(true)
    const spaced = PNG.toString('base64').replace(/(.{10})/g, '$1 ').replaceAll('+', '%2B')
    expect(decode(`data:image/png;base64,${spaced}`).equals(PNG)).toBe(true)
    expect(decode('data:image/svg+xml,<svg>é%3C/svg%3E').toString('utf8')).toBe('<svg>é</svg>')
    expect([...decode('data:image/gif,GIF89a%FF%00')].slice(6)).toEqual([0xff, 0x00])
  })
})

describe('image types', () => {
  test('magic numbers', () => {
    expect(sniffRaster(PNG)).toBe('image/png')
    expect(sniffRaster(JPEG)).toBe('image/jpeg')
    expect(sniffRaster(Buffer.from('GIF89a\x01\x00'))).toBe('image/gif')
    expect(sniffRaster(Buffer.from('RIFF\x10\x00\x00\x00WEBPVP8 '))).toBe('image/webp')
    const ftyp = (major: string, compat: string[]) => {
      const box = Buffer.from(`\0\0\0\0ftyp${major}\0\0\0\0${compat.join('')}`, 'latin1')
      box.writeUInt32BE(box.length, 0)
      return box
    }
    expect(sniffRaster(ftyp('avif', ['mif1']))).toBe('image/avif')
    expect(sniffRaster(ftyp('mif1', ['miaf', 'avif']))).toBe('image/avif')
    expect(sniffRaster(ftyp('heic', ['mif1', 'heic']))).toBeNull()
    expect(sniffRaster(ftyp('isom', ['mp41']))).toBeNull()
    expect(sniffRaster(Buffer.from('<svg/>'))).toBeNull()
    expect(sniffRaster(Buffer.alloc(0))).toBeNull()
  })

  test('checkImage', () => {
    expect(checkImage('image/png', PNG)).toEqual({ ok: true, type: 'image/png' })
    expect(checkImage('IMAGE/JPG; q=1', JPEG)).toEqual({ ok: true, type: 'image/jpeg' })
    expect(checkImage(null, PNG)).toEqual({ ok: true, type: 'image/png' })
    expect(checkImage('image/svg+xml', Buffer.from('\uFEFF <!-- hi --><svg viewBox="0 0 1 1"></svg>'))).toEqual({ ok: true, type: 'image/svg+xml' })
    // An SVG needs its type: an unlabelled or a PNG-labelled one is not guessed.
    expect(checkImage(null, Buffer.from('<svg></svg>')).ok).toBe(false)
    expect(checkImage('image/png', Buffer.from('<svg></svg>')).ok).toBe(false)
    expect(checkImage('image/svg+xml', Buffer.from([0x1f, 0x8b, 0x08, 0x00])).ok).toBe(false)
    expect(checkImage('text/plain', PNG).ok).toBe(false)
    expect(checkImage('image/webp', Buffer.alloc(0)).ok).toBe(false)
  })
})
