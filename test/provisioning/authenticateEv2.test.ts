import { describe, expect, test } from 'vitest'
import {
  aesCbc,
  authenticateEv2First,
  authenticateEv2NonFirst,
  CardEv2Authentication,
  createSecureSession,
  aesSessionKeys,
  ev2SessionKeys,
  NtagStatusError,
  parseAuthenticateFirstData,
  SecureMessagingError,
  type SecureSession,
} from '../../src/provisioning/index.js'
import { hex, toHexU, vector } from './provisioningVectors.js'

/** RndA' / RndB': rotated left by one byte. */
const rotl = (b: Buffer): Buffer => Buffer.concat([b.subarray(1), b.subarray(0, 1)])

type AuthFirstInputs = { key: string; keyNo: number; rndA: string; piccPart1: string; piccPart2: string }
type AuthFirstExpected = Record<string, string>

/** The reader's side, byte for byte: part 1, part 2, the decrypted answer, SV1/SV2 and the session keys. */
function readerSideFirst(name: string): SecureSession {
  const { inputs: i, expected: e } = vector<AuthFirstInputs, AuthFirstExpected>(name)
  const auth = authenticateEv2First({ keyNo: i.keyNo, key: i.key, rndA: hex(i.rndA) })
  expect(toHexU(auth.command)).toBe(e.capduPart1)
  expect(toHexU(auth.part2(hex(i.piccPart1)))).toBe(e.capduPart2)
  expect(toHexU(auth.rndB!)).toBe(e.rndB)
  // The card's answer decrypts (AES-CBC, IV 0) to TI ‖ RndA' ‖ PDcap2 ‖ PCDcap2.
  const part2Plain = aesCbc('decrypt', hex(i.key), Buffer.alloc(16), hex(i.piccPart2).subarray(0, 32))
  expect(toHexU(part2Plain)).toBe(e.part2Plain)
  expect(toHexU(part2Plain.subarray(4, 20))).toBe(toHexU(rotl(hex(i.rndA))))
  const session = auth.finish(hex(i.piccPart2))
  expect(toHexU(session.ti)).toBe(e.ti)
  expect(toHexU(session.pdCap2!)).toBe(e.pdCap2)
  expect(toHexU(session.pcdCap2!)).toBe(e.pcdCap2)
  expect(session.cmdCtr).toBe(0)
  const keys = ev2SessionKeys(i.key, hex(i.rndA), hex(e.rndB!))
  expect(toHexU(keys.sv1)).toBe(e.sv1)
  expect(toHexU(keys.sv2)).toBe(e.sv2)
  expect(toHexU(keys.encKey)).toBe(e.sesAuthEncKey)
  expect(toHexU(keys.macKey)).toBe(e.sesAuthMacKey)
  return session
}

/** The card's side with the published RndB and TI: it must send the published answers, byte for byte. */
function cardSideFirst(name: string): void {
  const { inputs: i, expected: e } = vector<AuthFirstInputs, AuthFirstExpected>(name)
  const request = parseAuthenticateFirstData(hex(e.capduPart1!).subarray(5, -1))
  expect(request).toEqual({ keyNo: i.keyNo, pcdCap2: hex(e.pcdCap2!), lrp: false })
  const card = CardEv2Authentication.first({ key: i.key, keyNo: request!.keyNo, rndB: hex(e.rndB!), ti: hex(e.ti!), pcdCap2: request!.pcdCap2 })
  expect(toHexU(card.part1Response)).toBe(i.piccPart1)
  const { response, session } = card.answer(hex(e.capduPart2!).subarray(5, -1))
  expect(toHexU(response)).toBe(i.piccPart2)
  expect(session).not.toBeNull()
  expect(toHexU(session!.ti)).toBe(e.ti)
}

describe('AuthenticateEV2First (AES)', () => {
  test('an12196-t14-authenticate-ev2-first-key0: reader side, RndA injected, byte for byte', () => {
    const { expected: e } = vector<AuthFirstInputs, AuthFirstExpected>('an12196-t14-authenticate-ev2-first-key0')
    readerSideFirst('an12196-t14-authenticate-ev2-first-key0')
    expect(toHexU(rotl(hex(e.rndB!)))).toBe(e.rndBRotated)
    // RndB' travels encrypted after RndA in part 2.
    const part2 = aesCbc('decrypt', Buffer.alloc(16), Buffer.alloc(16), hex(e.capduPart2!).subarray(5, -1))
    expect(toHexU(part2.subarray(16))).toBe(e.rndBRotated)
  })

  test('an12196-t14-authenticate-ev2-first-key0: card side, RndB and TI injected, byte for byte', () => {
    cardSideFirst('an12196-t14-authenticate-ev2-first-key0')
  })

  test('an12196-t20-authenticate-ev2-first-key3: both sides (AN12196 Table 20 erratum: row 18 prints D(K0, …) although key 3 is used; both are the zero key)', () => {
    readerSideFirst('an12196-t20-authenticate-ev2-first-key3')
    cardSideFirst('an12196-t20-authenticate-ev2-first-key3')
    expect(authenticateEv2First({ keyNo: 3, key: Buffer.alloc(16) }).command[5]).toBe(3)
  })

  test('androidcrypto-real-tag-aes-auth-then-enable-lrp: a real tag\'s handshake, reader and card side', () => {
    const { inputs: i, expected: e } = vector<Record<string, string> & { keyNo: number }>('androidcrypto-real-tag-aes-auth-then-enable-lrp')
    const auth = authenticateEv2First({ keyNo: i.keyNo, key: i.key!, rndA: hex(i.rndA!) })
    expect(toHexU(auth.command)).toBe(e.capduPart1)
    expect(toHexU(auth.part2(hex(i.piccPart1!)))).toBe(e.capduPart2)
    expect(toHexU(auth.rndB!)).toBe(e.rndB)
    expect(toHexU(auth.finish(hex(i.piccPart2!)).ti)).toBe(e.ti)
    const keys = ev2SessionKeys(i.key!, hex(i.rndA!), hex(e.rndB!))
    expect([toHexU(keys.encKey), toHexU(keys.macKey)]).toEqual([e.sesAuthEncKey, e.sesAuthMacKey])
    const card = CardEv2Authentication.first({ key: i.key!, keyNo: 0, rndB: hex(e.rndB!), ti: hex(e.ti!) })
    expect(toHexU(card.part1Response)).toBe(i.piccPart1)
    expect(toHexU(card.answer(hex(e.capduPart2!).subarray(5, -1)).response)).toBe(i.piccPart2)
  })
})

describe('AuthenticateEV2NonFirst (AES)', () => {
  type NonFirstInputs = { key: string; keyNo: number; rndA: string; piccPart1: string; piccPart2: string }
  test('an12196-t24-authenticate-ev2-nonfirst-key0: TI and CmdCtr carried over from Table 20, reader and card side', () => {
    const { inputs: i, expected: e } = vector<NonFirstInputs>('an12196-t24-authenticate-ev2-nonfirst-key0')
    // Table 20's session after Table 22's WriteData: TI 7614281A, CmdCtr 1.
    const before = createSecureSession({ keys: aesSessionKeys('7A93D6571E4B180FCA6AC90C9A7488D4', 'FC4AF159B62E549B5812394CAB1918CC'), ti: hex('7614281A'), keyNo: 3, cmdCtr: 1 })
    const auth = authenticateEv2NonFirst({ session: before, keyNo: i.keyNo, key: i.key, rndA: hex(i.rndA) })
    expect(before.active).toBe(false)
    expect(toHexU(auth.command)).toBe(e.capduPart1)
    expect(toHexU(auth.part2(hex(i.piccPart1)))).toBe(e.capduPart2)
    expect(toHexU(auth.rndB!)).toBe(e.rndB)
    const session = auth.finish(hex(i.piccPart2))
    expect([toHexU(session.ti), session.cmdCtr, session.keyNo]).toEqual(['7614281A', 1, 0])
    const keys = ev2SessionKeys(i.key, hex(i.rndA), hex(e.rndB!))
    expect([toHexU(keys.sv1), toHexU(keys.sv2), toHexU(keys.encKey), toHexU(keys.macKey)]).toEqual([e.sv1, e.sv2, e.sesAuthEncKey, e.sesAuthMacKey])
    // The answer is E(K, RndA') only: no TI, no capabilities.
    expect(toHexU(aesCbc('decrypt', hex(i.key), Buffer.alloc(16), hex(i.piccPart2).subarray(0, 16)))).toBe(e.rndAPrime)
    expect(toHexU(rotl(hex(i.rndA)))).toBe(e.rndAPrime)

    const cardBefore = CardEv2Authentication.first({ key: i.key, keyNo: 3, rndB: Buffer.alloc(16), ti: hex('7614281A') })
    const { session: cardSession } = cardBefore.answer(authenticateEv2First({ keyNo: 3, key: i.key }).part2(cardBefore.part1Response).subarray(5, -1))
    cardSession!.respond(undefined, { commMode: 'plain' }) // one command (Table 22) before NonFirst
    const card = CardEv2Authentication.nonFirst({ key: i.key, keyNo: 0, rndB: hex(e.rndB!), session: cardSession! })
    expect(toHexU(card.part1Response)).toBe(i.piccPart1)
    const answer = card.answer(hex(e.capduPart2!).subarray(5, -1))
    expect(toHexU(answer.response)).toBe(i.piccPart2)
    expect([toHexU(answer.session!.ti), answer.session!.cmdCtr]).toEqual(['7614281A', 1])
  })

  test('ntag424-rs-hw-aes-first-key0-nonfirst-key3: hardware transcript, PCDcap2 000000 sent (LenCap 03), NonFirst keeps CmdCtr 14', () => {
    type Part = { keyNo: number; rndA: string; piccPart1: string; piccPart2: string }
    const { inputs: i, expected: e } = vector<{ key: string; pcdCap2: string; first: Part; nonFirst: Part; commandsBetween: number }, Record<string, Record<string, string | number>>>(
      'ntag424-rs-hw-aes-first-key0-nonfirst-key3',
    )
    const first = authenticateEv2First({ keyNo: i.first.keyNo, key: i.key, rndA: hex(i.first.rndA), pcdCap2: hex(i.pcdCap2) })
    expect(toHexU(first.command)).toBe(e.first!.capduPart1)
    expect(toHexU(first.part2(hex(i.first.piccPart1)))).toBe(e.first!.capduPart2)
    const s = first.finish(hex(i.first.piccPart2))
    expect(toHexU(s.ti)).toBe(e.first!.ti)
    // Stand-in for the 14 commands of the capture: plain commands advance CmdCtr too.
    for (let n = 0; n < i.commandsBetween; n++) s.response((s.command(0x60, { commMode: 'plain' }), hex('9100')))
    const nonFirst = authenticateEv2NonFirst({ session: s, keyNo: i.nonFirst.keyNo, key: i.key, rndA: hex(i.nonFirst.rndA) })
    expect(toHexU(nonFirst.command)).toBe(e.nonFirst!.capduPart1)
    expect(toHexU(nonFirst.part2(hex(i.nonFirst.piccPart1)))).toBe(e.nonFirst!.capduPart2)
    const s2 = nonFirst.finish(hex(i.nonFirst.piccPart2))
    expect([toHexU(s2.ti), s2.cmdCtr, s2.keyNo]).toEqual([e.first!.ti, e.nonFirst!.cmdCtr, 3])
  })
})

describe('AES authentication failures', () => {
  const key = Buffer.alloc(16)
  const other = Buffer.alloc(16, 0x11)

  test('a wrong key: the card answers 91 AE and opens no session; the reader reports AUTHENTICATION_ERROR', () => {
    const card = CardEv2Authentication.first({ key, keyNo: 0 })
    const reader = authenticateEv2First({ keyNo: 0, key: other })
    const { response, session } = card.answer(reader.part2(card.part1Response).subarray(5, -1))
    expect(session).toBeNull()
    expect(toHexU(response)).toBe('91AE')
    expect(() => reader.finish(response)).toThrow(expect.objectContaining({ name: 'NtagStatusError', status: 'AUTHENTICATION_ERROR', sw: 0x91ae }))
    // One answer per authentication: a replayed part 2 is not a second attempt.
    const replay = authenticateEv2First({ keyNo: 0, key }).part2(card.part1Response)
    expect(toHexU(card.answer(replay.subarray(5, -1)).response)).toBe('91CA')
  })

  test('an answer without proof of the key (RndA\' not RndA rotated) is refused as mutual_auth', () => {
    const card = CardEv2Authentication.first({ key, keyNo: 0 })
    const reader = authenticateEv2First({ keyNo: 0, key })
    const part2 = reader.part2(card.part1Response)
    const { response } = card.answer(part2.subarray(5, -1))
    const forged = Buffer.from(response)
    forged[5]! ^= 0x01
    expect(() => reader.finish(forged)).toThrow(SecureMessagingError)
    expect(() => authenticateEv2First({ keyNo: 0, key }).finish(response)).toThrow(expect.objectContaining({ kind: 'sequence' }))
  })

  test('91 9D to part 1 (a chip in LRP mode) and 91 AD (authentication delay) are the card\'s refusals, by name', () => {
    expect(() => authenticateEv2First({ keyNo: 0, key }).part2(hex('919D'))).toThrow(expect.objectContaining({ status: 'PERMISSION_DENIED' }))
    const delay = (() => {
      try {
        authenticateEv2First({ keyNo: 0, key }).part2(hex('91AD'))
      } catch (e) {
        return e
      }
    })()
    expect(delay).toBeInstanceOf(NtagStatusError)
    expect((delay as NtagStatusError).message).toMatch(/AUTHENTICATION_DELAY/)
  })

  test('the reader refuses PCDcap2 asking for LRP and key numbers outside 0–4', () => {
    expect(() => authenticateEv2First({ keyNo: 0, key, pcdCap2: hex('02') })).toThrow(/LRP/)
    expect(() => authenticateEv2First({ keyNo: 5, key })).toThrow(RangeError)
    expect(parseAuthenticateFirstData(hex('0001'))).toBeNull()
  })

  test('a session ends when NonFirst starts, and only an active AES session can start it', () => {
    const card = CardEv2Authentication.first({ key, keyNo: 0 })
    const reader = authenticateEv2First({ keyNo: 0, key })
    const session = reader.finish(card.answer(reader.part2(card.part1Response).subarray(5, -1)).response)
    authenticateEv2NonFirst({ session, keyNo: 0, key })
    expect(() => authenticateEv2NonFirst({ session, keyNo: 0, key })).toThrow(expect.objectContaining({ kind: 'session' }))
  })
})
