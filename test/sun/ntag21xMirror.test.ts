import { describe, expect, test } from 'vitest'
import { formatNtag21xMirror, parseNtag21xMirror } from '../../src/sun/index.js'

describe('NTAG 21x ASCII mirrors', () => {
  test('the three forms parse, unauthenticated', () => {
    expect(parseNtag21xMirror('04E141124C2880')).toEqual({ uid: '04E141124C2880', counter: null, authenticated: false })
    expect(parseNtag21xMirror('003F31')).toEqual({ uid: null, counter: 0x3f31, authenticated: false })
    expect(parseNtag21xMirror('04E141124C2880x003F31')).toEqual({ uid: '04E141124C2880', counter: 0x3f31, authenticated: false })
  })

  test('a lower-cased URL still parses, normalised to upper case', () => {
    expect(parseNtag21xMirror('04e141124c2880x003f31')).toEqual({ uid: '04E141124C2880', counter: 0x3f31, authenticated: false })
  })

  test.each(['', '04E141124C288', '04E141124C2880003F31', '04E141124C2880-003F31', '04E141124C2880x003F3', 'ZZE141124C2880', '003F31x04E141124C2880'])(
    'rejects %j',
    (text) => expect(parseNtag21xMirror(text)).toBeNull(),
  )

  test('format rejects what no chip mirrors', () => {
    expect(() => formatNtag21xMirror({})).toThrow(RangeError)
    expect(() => formatNtag21xMirror({ counter: 0x1000000 })).toThrow(RangeError)
    expect(() => formatNtag21xMirror({ uid: '04E1' })).toThrow(RangeError)
    expect(formatNtag21xMirror({ counter: 0 })).toBe('000000')
  })
})
