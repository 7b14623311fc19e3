import { describe, expect, test } from 'vitest'
import {
  aesCbc,
  aesSessionIv,
  aesSessionKeys,
  authenticateEv2First,
  CardEv2Authentication,
  CardSecureSession,
  changeKey,
  changeKeyData,
  commandMacInput,
  crc32nk,
  createSecureSession,
  decodeChangeKeyData,
  macT,
  padM2,
  sessionMac,
} from '../../src/provisioning/index.js'
import { hex, toHexU, vector } from './provisioningVectors.js'

type ChangeKeyInputs = {
  sesAuthEncKey: string
  sesAuthMacKey: string
  ti: string
  cmdCtr: number
  keyNo: number
  authKeyNo: number
  oldKey: string
  newKey: string
  keyVersion: number
  response: string
}

function replay(name: string): { sessionEnded: boolean } {
  const { inputs: i, expected: e } = vector<ChangeKeyInputs, Record<string, string | boolean>>(name)
  const keys = aesSessionKeys(i.sesAuthEncKey, i.sesAuthMacKey)
  const ti = hex(i.ti)
  const data = changeKeyData({ keyNo: i.keyNo, newKey: i.newKey, oldKey: i.oldKey, keyVersion: i.keyVersion }, i.authKeyNo)
  expect(toHexU(padM2(data))).toBe(e.keyData)
  const iv = aesSessionIv(keys.encKey, 'command', ti, i.cmdCtr)
  expect(toHexU(iv)).toBe(e.ivCmd)
  const enc = aesCbc('encrypt', keys.encKey, iv, padM2(data))
  expect(toHexU(enc)).toBe(e.encData)
  const macInput = commandMacInput(0xc4, i.cmdCtr, ti, Buffer.from([i.keyNo]), enc)
  expect(toHexU(macInput)).toBe(e.macInput)
  expect(toHexU(sessionMac(keys, macInput))).toBe(e.cmac)
  expect(toHexU(macT(sessionMac(keys, macInput)))).toBe(e.macT)

  const session = createSecureSession({ keys, ti, keyNo: i.authKeyNo, cmdCtr: i.cmdCtr })
  const x = changeKey(session, { keyNo: i.keyNo, newKey: i.newKey, oldKey: i.oldKey, keyVersion: i.keyVersion })
  expect(toHexU(x.apdu)).toBe(e.capdu)
  const ownKey = i.keyNo === i.authKeyNo
  // Case 2 (the session's own key) answers a bare 91 00; case 1 answers MACt ‖ 91 00.
  expect(e.respNoMac ?? false).toBe(ownKey)
  expect(i.response).toBe(ownKey ? '9100' : `${e.respMacT}9100`)
  const result = x.parse(hex(i.response))

  // The card side: accept the APDU, recover the key, answer as published.
  const card = new CardSecureSession({ keys, ti, keyNo: i.authKeyNo, cmdCtr: i.cmdCtr })
  const accepted = card.acceptCommand(0xc4, x.apdu.subarray(5, -1), { headerLength: 1, commMode: 'full' })
  expect(accepted.ok).toBe(true)
  if (!accepted.ok) return result
  expect(decodeChangeKeyData(i.keyNo, i.authKeyNo, accepted.data, i.oldKey)).toEqual({ ok: true, newKey: hex(i.newKey), keyVersion: i.keyVersion })
  expect(toHexU(card.respond(undefined, { commMode: 'mac', mac: !ownKey }))).toBe(i.response)
  expect(card.active).toBe(!ownKey)
  return result
}

describe('ChangeKey', () => {
  test('an12196-t26-changekey-key2-case1: key 2 while authenticated with key 0, XOR with the old key and CRC32NK, answered with a MAC', () => {
    const result = replay('an12196-t26-changekey-key2-case1')
    expect(result).toEqual({ sessionEnded: false })
    const { inputs: i, expected: e } = vector<ChangeKeyInputs>('an12196-t26-changekey-key2-case1')
    expect(toHexU(crc32nk(hex(i.newKey)))).toBe(e.crc32nk)
    // The answer's MAC is checked: a flipped bit is refused and ends the session.
    const session = createSecureSession({ keys: aesSessionKeys(i.sesAuthEncKey, i.sesAuthMacKey), ti: hex(i.ti), keyNo: 0, cmdCtr: i.cmdCtr })
    const x = changeKey(session, { keyNo: 2, newKey: i.newKey, oldKey: i.oldKey, keyVersion: 1 })
    const bad = hex(i.response)
    bad[0]! ^= 0x80
    expect(() => x.parse(bad)).toThrow(expect.objectContaining({ kind: 'response_mac' }))
  })

  test('an12196-t27-changekey-key0-case2: key 0 while authenticated with key 0, NewKey ‖ KeyVer, answered 91 00 without MAC; the session ends', () => {
    const result = replay('an12196-t27-changekey-key0-case2')
    expect(result).toEqual({ sessionEnded: true })
    const { inputs: i } = vector<ChangeKeyInputs>('an12196-t27-changekey-key0-case2')
    const session = createSecureSession({ keys: aesSessionKeys(i.sesAuthEncKey, i.sesAuthMacKey), ti: hex(i.ti), keyNo: 0, cmdCtr: i.cmdCtr })
    changeKey(session, { keyNo: 0, newKey: i.newKey, keyVersion: 1 }).parse(hex('9100'))
    expect(session.active).toBe(false)
    expect(() => session.command(0x51, { commMode: 'full' })).toThrow(/ended/)
    // A MAC where none belongs is not taken as success.
    const again = createSecureSession({ keys: aesSessionKeys(i.sesAuthEncKey, i.sesAuthMacKey), ti: hex(i.ti), keyNo: 0, cmdCtr: i.cmdCtr })
    expect(() => changeKey(again, { keyNo: 0, newKey: i.newKey, keyVersion: 1 }).parse(hex('01020304050607089100'))).toThrow(expect.objectContaining({ kind: 'length' }))
  })

  test('the card keeps the key when the old key is wrong (CRC32NK over data ⊕ old key fails: 91 1E)', () => {
    const newKey = hex('F3847D627727ED3BC9C4CC050489B966')
    const data = changeKeyData({ keyNo: 2, newKey, oldKey: Buffer.alloc(16), keyVersion: 1 }, 0)
    expect(decodeChangeKeyData(2, 0, data, Buffer.alloc(16, 0x01))).toEqual({ ok: false, reason: 'crc' })
    expect(decodeChangeKeyData(2, 0, data.subarray(0, 20), Buffer.alloc(16))).toEqual({ ok: false, reason: 'length' })
  })

  test('ChangeKey is refused before any APDU without key 0, without the old key of keys 1–4, or with a version out of range', () => {
    const keys = aesSessionKeys(Buffer.alloc(16), Buffer.alloc(16))
    const ti = hex('00000000')
    expect(() => changeKey(createSecureSession({ keys, ti, keyNo: 3 }), { keyNo: 1, newKey: Buffer.alloc(16), oldKey: Buffer.alloc(16), keyVersion: 1 })).toThrow(/key 0/)
    const session = createSecureSession({ keys, ti, keyNo: 0 })
    expect(() => changeKey(session, { keyNo: 1, newKey: Buffer.alloc(16), keyVersion: 1 })).toThrow(/oldKey/)
    expect(() => changeKey(session, { keyNo: 1, newKey: Buffer.alloc(16), oldKey: Buffer.alloc(16), keyVersion: 256 })).toThrow(RangeError)
    expect(session.cmdCtr).toBe(0)
    expect(() => changeKey(session, { keyNo: 1, newKey: Buffer.alloc(16), oldKey: Buffer.alloc(16), keyVersion: 1 })).not.toThrow() // nothing was left pending
  })

  test('keys 1–4 then key 0, end to end against the card side: the card holds the new keys and versions', () => {
    const factory = Buffer.alloc(16)
    const newKeys = [1, 2, 3, 4, 0].map((n) => Buffer.alloc(16, 0x10 + n))
    const cardKeys = new Map<number, { key: Buffer; version: number }>([0, 1, 2, 3, 4].map((n) => [n, { key: factory, version: 0 }]))
    const cardAuth = CardEv2Authentication.first({ key: factory, keyNo: 0 })
    const reader = authenticateEv2First({ keyNo: 0, key: factory })
    const answer = cardAuth.answer(reader.part2(cardAuth.part1Response).subarray(5, -1))
    const session = reader.finish(answer.response)
    const card = answer.session!
    for (const keyNo of [1, 2, 3, 4, 0]) {
      const newKey = newKeys[keyNo === 0 ? 4 : keyNo - 1]!
      const x = changeKey(session, { keyNo, newKey, oldKey: cardKeys.get(keyNo)!.key, keyVersion: 7 })
      const accepted = card.acceptCommand(0xc4, x.apdu.subarray(5, -1), { headerLength: 1, commMode: 'full' })
      if (!accepted.ok) throw new Error(`card refused ChangeKey ${keyNo}: ${accepted.reason}`)
      const decoded = decodeChangeKeyData(accepted.header[0]!, card.keyNo, accepted.data, cardKeys.get(keyNo)!.key)
      if (!decoded.ok) throw new Error(`card could not decode ChangeKey ${keyNo}: ${decoded.reason}`)
      cardKeys.set(keyNo, { key: decoded.newKey, version: decoded.keyVersion })
      expect(x.parse(card.respond(undefined, { commMode: 'mac', mac: keyNo !== 0 }))).toEqual({ sessionEnded: keyNo === 0 })
    }
    expect([...cardKeys.entries()].map(([n, k]) => [n, toHexU(k.key), k.version])).toEqual([0, 1, 2, 3, 4].map((n) => [n, toHexU(newKeys[n === 0 ? 4 : n - 1]!), 7]))
    expect(session.active).toBe(false)
    expect(card.active).toBe(false)
  })
})

describe('CRC32NK', () => {
  test('crc32nk-an12196-t26: the diversified key of Table 26', () => {
    const { inputs: i, expected: e } = vector('crc32nk-an12196-t26')
    expect(toHexU(crc32nk(hex(i.key!)))).toBe(e.crc32nk)
  })

  test('crc32nk-factory-zero-key: what a reset to the factory key sends', () => {
    const { inputs: i, expected: e } = vector('crc32nk-factory-zero-key')
    expect(toHexU(crc32nk(hex(i.key!)))).toBe(e.crc32nk)
  })

  test('CRC32NK is the standard CRC-32 without its final XOR, least significant byte first', () => {
    // CRC-32/IEEE of "123456789" is CBF43926; without the final XOR it is 340BC6D9, sent LSB first.
    expect(toHexU(crc32nk(Buffer.from('123456789', 'ascii')))).toBe('D9C60B34')
  })
})
