import { describe, expect, test } from 'vitest'
import { aesCmac, aesCmacSubkeys, toHex } from '../../src/sun/index.js'

// RFC 4493 §4 test vectors.
const KEY = '2B7E151628AED2A6ABF7158809CF4F3C'
const M = Buffer.from(
  '6BC1BEE22E409F96E93D7E117393172AAE2D8A571E03AC9C9EB76FAC45AF8E5130C81C46A35CE411E5FBC1191A0A52EFF69F2445DF4F9B17AD2B417BE66C3710',
  'hex',
)

describe('aesCmac (RFC 4493)', () => {
  test('subkeys', () => {
    const { K1, K2 } = aesCmacSubkeys(KEY)
    expect([toHex(K1), toHex(K2)]).toEqual(['FBEED618357133667C85E08F7236A8DE', 'F7DDAC306AE266CCF90BC11EE46D513B'])
  })

  test.each([
    [0, 'BB1D6929E95937287FA37D129B756746'],
    [16, '070A16B46B4D4144F79BDD9DD04A287C'],
    [40, 'DFA66747DE9AE63030CA32611497C827'],
    [64, '51F0BEBF7E3B9D92FC49741779363CFE'],
  ])('example with a %i-byte message', (length, mac) => {
    expect(toHex(aesCmac(KEY, M.subarray(0, length)))).toBe(mac)
  })

  test('a string message is its UTF-8 bytes', () => {
    expect(toHex(aesCmac(KEY, 'abc'))).toBe(toHex(aesCmac(KEY, Buffer.from('abc'))))
  })
})
