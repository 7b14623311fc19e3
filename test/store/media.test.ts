import { expect, it } from 'vitest'
import type { Isolation } from '../../src/db/types.js'
import { describeStores } from '../helpers/stores.js'

describeStores('media', ({ store }) => {
  const empty = { contentType: null, bytes: null, fetchedAt: null, failedAt: null, error: null }

  it('inserts an image URL once and returns its row', async () => {
    const s = store()
    expect(await s.media.insert({ key: 'k1', url: 'https://img.example/a.png', now: 1_700_000_000_000 })).toBe(true)
    expect(await s.media.insert({ key: 'k1', url: 'https://img.example/a.png', now: 5 })).toBe(false)
    expect(await s.media.get('k1')).toEqual({ key: 'k1', url: 'https://img.example/a.png', ...empty, createdAt: 1_700_000_000_000 })
    expect(await s.media.get('nope')).toBeUndefined()
  })

  it('records a failure, then a success clears it', async () => {
    const s = store()
    await s.media.insert({ key: 'k1', url: 'https://img.example/a.png', now: 1 })
    await s.media.insert({ key: 'k2', url: 'https://img.example/b.png', now: 1 })
    await s.media.setFailed('k1', { error: 'HTTP 404', now: 2 })
    expect(await s.media.get('k1')).toEqual({ key: 'k1', url: 'https://img.example/a.png', ...empty, failedAt: 2, error: 'HTTP 404', createdAt: 1 })
    await s.media.setFetched('k1', { contentType: 'image/png', bytes: 3_000_000_000, now: 3 })
    expect(await s.media.get('k1')).toEqual({
      key: 'k1', url: 'https://img.example/a.png', contentType: 'image/png', bytes: 3_000_000_000, fetchedAt: 3, failedAt: null, error: null, createdAt: 1,
    })
    // A later failure (a refetch) keeps what was fetched: the old bytes still serve.
    await s.media.setFailed('k1', { error: 'timeout', now: 4 })
    expect(await s.media.get('k1')).toMatchObject({ contentType: 'image/png', fetchedAt: 3, failedAt: 4, error: 'timeout' })
    // The other row is untouched; an unknown key changes nothing.
    await s.media.setFetched('nope', { contentType: 'image/png', bytes: 1, now: 5 })
    await s.media.setFailed('nope', { error: 'x', now: 5 })
    expect(await s.media.get('k2')).toEqual({ key: 'k2', url: 'https://img.example/b.png', ...empty, createdAt: 1 })
    expect(await s.media.get('nope')).toBeUndefined()
  })

  for (const isolation of ['read committed', 'serializable'] as Isolation[]) {
    it(`names one row when 20 cards show the same new image at once (${isolation})`, async () => {
      const s = store()
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, i) => s.tx((tx) => tx.media.insert({ key: 'k1', url: 'https://img.example/a.png', now: 100 + i }), { isolation })),
      )
      expect(outcomes.filter(Boolean)).toHaveLength(1)
      const row = await s.media.get('k1')
      // The row is the winner's: its created_at is the one racer that got true.
      expect(row?.createdAt).toBe(100 + outcomes.indexOf(true))
    })
  }
})
