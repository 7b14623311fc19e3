import { describe, expect, test } from 'vitest'
import {
  aesCmac,
  an10922Input,
  deriveBoltCardKeys,
  deriveSdmBackendMetaKey,
  deriveSdmBackendTagKey,
  DiversificationInputError,
  diversifyAn10922,
  toHex,
} from '../../src/sun/index.js'

describe('AN10922 AES-128', () => {
  test('builds M from UID, AID and system identifier as in the application note', () => {
    const m = an10922Input({ uid: '04782E21801D80', aid: '3042F5', systemIdentifier: Buffer.from('NXP Abu', 'ascii') })
    expect(toHex(m)).toBe('04782E21801D803042F54E585020416275')
    expect(toHex(diversifyAn10922({ masterKey: '00112233445566778899AABBCCDDEEFF', m }))).toBe('A8DD63A3B89D54B37CA802473FDA9175')
  })

  test('pads short inputs to two blocks, unlike plain CMAC; a 31-byte M is unpadded', () => {
    const key = '00112233445566778899AABBCCDDEEFF'
    const short = Buffer.from('04782E21801D80', 'hex')
    expect(toHex(diversifyAn10922({ masterKey: key, m: short }))).not.toBe(toHex(aesCmac(key, Buffer.concat([Buffer.from([1]), short]))))
    const full = Buffer.alloc(31, 0x5a)
    expect(toHex(diversifyAn10922({ masterKey: key, m: full }))).toBe(toHex(aesCmac(key, Buffer.concat([Buffer.from([1]), full]))))
  })

  test('M must be 1 to 31 bytes', () => {
    expect(() => diversifyAn10922({ masterKey: '00112233445566778899AABBCCDDEEFF', m: '' })).toThrow(DiversificationInputError)
    expect(() => diversifyAn10922({ masterKey: '00112233445566778899AABBCCDDEEFF', m: Buffer.alloc(32) })).toThrow(DiversificationInputError)
  })
})

describe('sdm-backend "standard" scheme (tests/test_kdf.py)', () => {
  test.each([
    ['C9EB67DF090AFF47C3B19A2516680B9D', 'A13086F194D7BDFD108DD11716EA2BDF', '03030303030303', '85F7CC459A5B4B2F5D1A5019DED61C88'],
    ['B95F4C27E3D0BC333792EA968545217F', '3A553C40846FDA656FAA0FCE4F45FDBD', '05050505050505', '89AE686DE793FDF48057EE6E78505CFC'],
  ])('master %s: meta key and slot-2 tag key', (masterKey, metaKey, uid, tagKey) => {
    expect(toHex(deriveSdmBackendMetaKey({ masterKey }))).toBe(metaKey)
    expect(toHex(deriveSdmBackendTagKey({ masterKey, uid, keyNo: 2 }))).toBe(tagKey)
  })

  test('the all-zero master yields all-zero keys (factory chips)', () => {
    const masterKey = '00000000000000000000000000000000'
    expect(toHex(deriveSdmBackendMetaKey({ masterKey }))).toBe(masterKey)
    expect(toHex(deriveSdmBackendTagKey({ masterKey, uid: '010203040506AB', keyNo: 1 }))).toBe(masterKey)
  })
})

describe('Bolt Card deterministic keys', () => {
  test('K1 depends on the issuer key only; the others on the card', () => {
    const a = deriveBoltCardKeys({ issuerKey: '00000000000000000000000000000001', uid: '04A39493CC8680', version: 1 })
    const b = deriveBoltCardKeys({ issuerKey: '00000000000000000000000000000001', uid: '04A39493CC8681', version: 1 })
    const c = deriveBoltCardKeys({ issuerKey: '00000000000000000000000000000001', uid: '04A39493CC8680', version: 2 })
    expect(toHex(a.k1)).toBe(toHex(b.k1))
    expect(toHex(a.k2)).not.toBe(toHex(b.k2))
    expect(toHex(a.k2)).not.toBe(toHex(c.k2))
    expect(toHex(a.id)).toBe(toHex(c.id))
  })
})
