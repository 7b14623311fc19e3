import { describe, expect, test } from 'vitest'
import { createTestOriginalityKey, NXP_NTAG424_ORIGINALITY_PUBLIC_KEY, readSig, signOriginality, verifyOriginality } from '../../src/provisioning/index.js'
import { hex, toHexU, vector } from './provisioningVectors.js'

type SigInputs = { uid: string; publicKey: string; signature: string }
type SigExpected = { capdu: string; sw: string; valid: boolean }

describe('originality signature (ECDSA secp224r1 over the raw UID)', () => {
  test('an12196-t30-read-sig-originality: Read_Sig APDU, 91 90 answer, and NXP\'s signature verifies with NXP\'s key', () => {
    const { inputs: i, expected: e } = vector<SigInputs, SigExpected>('an12196-t30-read-sig-originality')
    expect(NXP_NTAG424_ORIGINALITY_PUBLIC_KEY).toBe(i.publicKey)
    const x = readSig()
    expect(toHexU(x.apdu)).toBe(e.capdu)
    const signature = x.parse(Buffer.concat([hex(i.signature), hex(e.sw)]))
    expect(toHexU(signature)).toBe(i.signature)
    expect(verifyOriginality({ uid: i.uid, signature })).toBe(e.valid)
    expect(verifyOriginality({ uid: hex(i.uid), signature: i.signature, publicKey: i.publicKey })).toBe(true)
  })

  test('an12196-t30-read-sig-originality: negatives: another UID, a flipped signature bit, another key, malformed input', () => {
    const { inputs: i } = vector<SigInputs>('an12196-t30-read-sig-originality')
    const otherUid = hex(i.uid)
    otherUid[6]! ^= 0x01
    expect(verifyOriginality({ uid: otherUid, signature: i.signature })).toBe(false)
    const flipped = hex(i.signature)
    flipped[40]! ^= 0x10
    expect(verifyOriginality({ uid: i.uid, signature: flipped })).toBe(false)
    expect(verifyOriginality({ uid: i.uid, signature: i.signature, publicKey: createTestOriginalityKey().publicKey })).toBe(false)
    expect(verifyOriginality({ uid: i.uid, signature: hex(i.signature).subarray(1) })).toBe(false)
    expect(verifyOriginality({ uid: 'zz', signature: i.signature })).toBe(false)
    expect(verifyOriginality({ uid: i.uid, signature: i.signature, publicKey: '04' + '00'.repeat(56) })).toBe(false)
  })

  test('a software card signs with a test key that only an explicit trust verifies; NXP\'s key rejects it', () => {
    const key = createTestOriginalityKey()
    const uid = hex('04DE5F1EACC040')
    const signature = signOriginality(uid, key.privateKey)
    expect(signature.length).toBe(56)
    expect(verifyOriginality({ uid, signature, publicKey: key.publicKey })).toBe(true)
    expect(verifyOriginality({ uid, signature })).toBe(false)
    // A fixed private key gives a fixed public key (tests can pin it).
    expect(createTestOriginalityKey(key.privateKey).publicKey.equals(key.publicKey)).toBe(true)
    expect(() => signOriginality(uid.subarray(1), key.privateKey)).toThrow(/7-byte UID/)
  })

  test('Read_Sig answers other than 91 90 / 91 00 are refusals; a short signature is a length error', () => {
    expect(() => readSig().parse(hex('91AE'))).toThrow(expect.objectContaining({ status: 'AUTHENTICATION_ERROR' }))
    expect(() => readSig().parse(hex('00119190'))).toThrow(expect.objectContaining({ kind: 'length' }))
  })
})
