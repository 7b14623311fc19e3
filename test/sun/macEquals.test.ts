import { describe, expect, test, vi } from 'vitest'

// Wrap the real timingSafeEqual so the tests can see every MAC comparison go through it.
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>()
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) }
})

const { timingSafeEqual } = await import('node:crypto')
const { createSunVerifier, generateSunMessage, macEquals } = await import('../../src/sun/index.js')

const KEY = '00000000000000000000000000000000'

describe('macEquals', () => {
  test('equal and unequal MACs of the same length', () => {
    expect(macEquals(Buffer.from('94EED9EE65337086', 'hex'), Buffer.from('94EED9EE65337086', 'hex'))).toBe(true)
    expect(macEquals(Buffer.from('94EED9EE65337086', 'hex'), Buffer.from('94EED9EE65337087', 'hex'))).toBe(false)
  })

  test('unequal lengths return false instead of throwing, still through timingSafeEqual', () => {
    vi.mocked(timingSafeEqual).mockClear()
    expect(macEquals(Buffer.alloc(8), Buffer.alloc(7))).toBe(false)
    expect(macEquals(Buffer.alloc(8), Buffer.alloc(0))).toBe(false)
    expect(macEquals(Buffer.alloc(8), Buffer.alloc(16))).toBe(false)
    expect(timingSafeEqual).toHaveBeenCalledTimes(3)
  })

  test('verification compares the SDMMAC in constant time, in both modes and for plain mirrors', () => {
    const verifier = createSunVerifier({ metaKey: KEY, fileKey: KEY })
    for (const mode of ['aes', 'lrp'] as const) {
      const msg = generateSunMessage({ metaKey: KEY, fileKey: KEY, mode, uid: '04DE5F1EACC040', counter: 1 })
      vi.mocked(timingSafeEqual).mockClear()
      expect(verifier.verify(msg).valid).toBe(true)
      expect(timingSafeEqual).toHaveBeenCalledTimes(1)
      const [a, b] = vi.mocked(timingSafeEqual).mock.calls[0]!
      expect([a.byteLength, b.byteLength]).toEqual([8, 8])
    }
    vi.mocked(timingSafeEqual).mockClear()
    verifier.verifyPlainMirror({ uid: '04DE5F1EACC040', ctr: '00003D', cmac: '94EED9EE65337086' })
    expect(timingSafeEqual).toHaveBeenCalledTimes(1)
  })
})
