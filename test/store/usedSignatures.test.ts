import { expect, it } from 'vitest'
import { describeStores } from '../helpers/stores.js'

describeStores('usedSignatures', ({ store }) => {
  it('accepts a digest once', async () => {
    const s = store()
    expect(await s.usedSignatures.use('digest-a', 1)).toBe(true)
    expect(await s.usedSignatures.use('digest-a', 2)).toBe(false)
    expect(await s.usedSignatures.use('digest-b', 2)).toBe(true)
  })

  const racers = 20
  for (const isolation of ['read committed', 'serializable'] as const) {
    it(`accepts a digest for one of ${racers} racing requests (${isolation})`, async () => {
      const s = store()
      const outcomes = await Promise.all(Array.from({ length: racers }, (_, i) => s.tx((tx) => tx.usedSignatures.use('digest-race', i), { isolation })))
      expect(outcomes.filter(Boolean)).toHaveLength(1)
      expect(await s.usedSignatures.use('digest-race', 99)).toBe(false)
    })
  }
})
