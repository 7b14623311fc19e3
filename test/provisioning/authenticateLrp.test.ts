import { describe, expect, test } from 'vitest'
import {
  authenticateEv2First,
  authenticateLrpFirst,
  authenticateLrpNonFirst,
  CardLrpAuthentication,
  getCardUid,
  LRP_PCD_CAP2,
  lrpAuthSessionKeys,
  lrpSessionVector,
  parseAuthenticateFirstData,
  SecureMessagingError,
} from '../../src/provisioning/index.js'
import { lricbDecrypt } from '../../src/sun/index.js'
import { hex, toHexU, vector } from './provisioningVectors.js'

type LrpInputs = { key: string; keyNo: number; rndA: string; piccPart1: string; piccPart2: string }

describe('AuthenticateLRPFirst', () => {
  test('an12321-t2-authenticate-lrp-first: SV, update keys, PCDResponse, PICCData, PICCResponse (reader side; the sources disagree on the part-1 key byte, so part 1 is not compared)', () => {
    const { inputs: i, expected: e } = vector<LrpInputs>('an12321-t2-authenticate-lrp-first')
    const auth = authenticateLrpFirst({ keyNo: i.keyNo, key: i.key, rndA: hex(i.rndA) })
    expect(toHexU(auth.command)).toBe('9071000008030602000000000000')
    const part2 = auth.part2(hex(i.piccPart1))
    expect(toHexU(part2)).toBe(e.capduPart2)
    expect(toHexU(auth.rndB!)).toBe(e.rndB)
    expect(toHexU(part2.subarray(21, 37))).toBe(e.pcdResponse)
    const m = lrpAuthSessionKeys(i.key, hex(i.rndA), hex(e.rndB!))
    expect(toHexU(lrpSessionVector(hex(i.rndA), hex(e.rndB!)))).toBe(e.sv)
    expect([toHexU(m.sv), toHexU(m.macUpdateKey), toHexU(m.encUpdateKey)]).toEqual([e.sv, e.sesAuthMacUpdateKey, e.sesAuthEncUpdateKey])
    expect(toHexU(lricbDecrypt({ key: m.keys.lrp, updatedKey: 1, counter: Buffer.alloc(4), pad: false }, hex(i.piccPart2).subarray(0, 16)))).toBe(e.piccDataPlain)
    expect(toHexU(hex(i.piccPart2).subarray(16, 32))).toBe(e.piccResponse)
    const session = auth.finish(hex(i.piccPart2))
    expect([session.mode, toHexU(session.ti), toHexU(session.pdCap2!), toHexU(session.pcdCap2!), session.cmdCtr, session.encCtr]).toEqual([
      'lrp',
      e.ti,
      e.pdCap2,
      e.pcdCap2,
      0,
      1,
    ])
  })

  test('an12321-t2-authenticate-lrp-first: card side, RndB and TI injected, answers byte for byte', () => {
    const { inputs: i, expected: e } = vector<LrpInputs>('an12321-t2-authenticate-lrp-first')
    const request = parseAuthenticateFirstData(Buffer.concat([Buffer.from([i.keyNo, 6]), LRP_PCD_CAP2]))
    expect(request).toMatchObject({ keyNo: 3, lrp: true })
    const card = CardLrpAuthentication.first({ key: i.key, keyNo: i.keyNo, rndB: hex(e.rndB!), ti: hex(e.ti!), pcdCap2: request!.pcdCap2 })
    expect(toHexU(card.part1Response)).toBe(i.piccPart1)
    const { response, session } = card.answer(hex(e.capduPart2!).subarray(5, -1))
    expect(toHexU(response)).toBe(i.piccPart2)
    expect([toHexU(session!.ti), session!.encCtr]).toEqual([e.ti, 1])
  })

  test('an12321-t2-authenticate-lrp-first: a tampered PICCResponse is refused (mutual_auth) and a wrong key gets 91 AE from the card', () => {
    const { inputs: i } = vector<LrpInputs>('an12321-t2-authenticate-lrp-first')
    const auth = authenticateLrpFirst({ keyNo: i.keyNo, key: i.key, rndA: hex(i.rndA) })
    auth.part2(hex(i.piccPart1))
    const tampered = hex(i.piccPart2)
    tampered[31]! ^= 0x01
    expect(() => auth.finish(tampered)).toThrow(expect.objectContaining({ kind: 'mutual_auth' }))

    const card = CardLrpAuthentication.first({ key: Buffer.alloc(16, 0x22), keyNo: 0 })
    const reader = authenticateLrpFirst({ keyNo: 0, key: Buffer.alloc(16) })
    const { response, session } = card.answer(reader.part2(card.part1Response).subarray(5, -1))
    expect([toHexU(response), session]).toEqual(['91AE', null])
    expect(() => reader.finish(response)).toThrow(expect.objectContaining({ status: 'AUTHENTICATION_ERROR' }))
  })

  test('the parts in order, each once: finish before part2, part2 twice and finish twice are sequence errors', () => {
    const card = CardLrpAuthentication.first({ key: Buffer.alloc(16), keyNo: 0 })
    const reader = authenticateLrpFirst({ keyNo: 0, key: Buffer.alloc(16) })
    expect(() => reader.finish(hex('9100'))).toThrow(expect.objectContaining({ kind: 'sequence', message: 'AuthenticateLRPFirst: finish called out of order' }))
    const part2 = reader.part2(card.part1Response)
    expect(() => reader.part2(card.part1Response)).toThrow(expect.objectContaining({ kind: 'sequence', message: 'AuthenticateLRPFirst: part2 called out of order' }))
    const session = reader.finish(card.answer(part2.subarray(5, -1)).response)
    expect(session.active).toBe(true)
    expect(() => reader.finish(hex('9100'))).toThrow(expect.objectContaining({ kind: 'sequence' }))
  })

  test('a chip in AES mode answers AuthenticateLRPFirst with an AES challenge: reported as a mode error', () => {
    const aesAnswer = hex('A04C124213C186F22399D33AC2A3021591AF')
    expect(() => authenticateLrpFirst({ keyNo: 0, key: Buffer.alloc(16) }).part2(aesAnswer)).toThrow(expect.objectContaining({ kind: 'mode' }))
  })

  test('johnnyb-lrp-session-key-ti-getcarduid-mac: session master key, PICCData decryption, first command MAC', () => {
    const { inputs: i, expected: e } = vector('johnnyb-lrp-session-key-ti-getcarduid-mac')
    const m = lrpAuthSessionKeys(i.key!, hex(i.rndA!), hex(i.rndB!))
    expect(toHexU(m.masterKey)).toBe(e.sesAuthMasterKey)
    expect(toHexU(lricbDecrypt({ key: m.keys.lrp, updatedKey: 1, counter: Buffer.alloc(4), pad: false }, hex(i.piccDataEncrypted!)))).toBe(e.piccDataPlain)
    // The same through the reader: the card's part-2 answer is PICCData ‖ PICCResponse; build it with the card side.
    const card = CardLrpAuthentication.first({ key: i.key!, keyNo: 0, rndB: hex(i.rndB!), ti: hex(e.ti!) })
    const reader = authenticateLrpFirst({ keyNo: 0, key: i.key!, rndA: hex(i.rndA!) })
    const { response } = card.answer(reader.part2(card.part1Response).subarray(5, -1))
    expect(toHexU(response.subarray(0, 16))).toBe(i.piccDataEncrypted)
    const session = reader.finish(response)
    expect(toHexU(getCardUid(session).apdu)).toBe(e.getCardUidCapdu)
  })
})

describe('AuthenticateLRPNonFirst', () => {
  test('ntag424-rs-hw-lrp-first-and-nonfirst-key0: hardware transcript, First then NonFirst with TI kept, CmdCtr 10 kept, EncCtr reset to 0', () => {
    type Part = { rndA: string; piccPart1: string; piccPart2: string }
    const { inputs: i, expected: e } = vector<{ key: string; keyNo: number; first: Part; nonFirst: Part; commandsBetween: number }, Record<string, Record<string, string | number>>>(
      'ntag424-rs-hw-lrp-first-and-nonfirst-key0',
    )
    const first = authenticateLrpFirst({ keyNo: i.keyNo, key: i.key, rndA: hex(i.first.rndA) })
    expect(toHexU(first.command)).toBe(e.first!.capduPart1)
    expect(toHexU(first.part2(hex(i.first.piccPart1)))).toBe(e.first!.capduPart2)
    const s = first.finish(hex(i.first.piccPart2))
    expect(toHexU(s.ti)).toBe(e.first!.ti)
    for (let n = 0; n < i.commandsBetween; n++) s.response((s.command(0x60, { commMode: 'plain' }), hex('9100')))
    const nonFirst = authenticateLrpNonFirst({ session: s, keyNo: i.keyNo, key: i.key, rndA: hex(i.nonFirst.rndA) })
    expect(s.active).toBe(false)
    expect(toHexU(nonFirst.command)).toBe(e.nonFirst!.capduPart1)
    expect(toHexU(nonFirst.part2(hex(i.nonFirst.piccPart1)))).toBe(e.nonFirst!.capduPart2)
    const s2 = nonFirst.finish(hex(i.nonFirst.piccPart2))
    expect([toHexU(s2.ti), s2.cmdCtr, s2.encCtr]).toEqual([e.first!.ti, e.nonFirst!.cmdCtr, 0])

    // The card side of the same NonFirst answers the captured bytes.
    const cardFirst = CardLrpAuthentication.first({ key: i.key, keyNo: 0, rndB: hex(i.first.piccPart1).subarray(1, 17), ti: hex(e.first!.ti as string) })
    const { session: cardSession } = cardFirst.answer(hex(e.first!.capduPart2 as string).subarray(5, -1))
    for (let n = 0; n < i.commandsBetween; n++) cardSession!.respond(undefined, { commMode: 'plain' })
    const card = CardLrpAuthentication.nonFirst({ key: i.key, keyNo: 0, rndB: hex(i.nonFirst.piccPart1).subarray(1, 17), session: cardSession! })
    expect(toHexU(card.part1Response)).toBe(i.nonFirst.piccPart1)
    const answer = card.answer(hex(e.nonFirst!.capduPart2 as string).subarray(5, -1))
    expect(toHexU(answer.response)).toBe(i.nonFirst.piccPart2)
    expect([answer.session!.cmdCtr, answer.session!.encCtr]).toEqual([10, 0])
  })

  test('NonFirst needs an active LRP session', () => {
    const card = CardLrpAuthentication.first({ key: Buffer.alloc(16), keyNo: 0 })
    const reader = authenticateEv2First({ keyNo: 0, key: Buffer.alloc(16) })
    expect(() => reader.part2(card.part1Response)).toThrow(SecureMessagingError) // 17 bytes: an LRP answer to an AES request
    const lrp = authenticateLrpFirst({ keyNo: 0, key: Buffer.alloc(16) })
    const session = lrp.finish(card.answer(lrp.part2(card.part1Response).subarray(5, -1)).response)
    session.end('test')
    expect(() => authenticateLrpNonFirst({ session, keyNo: 0, key: Buffer.alloc(16) })).toThrow(expect.objectContaining({ kind: 'session' }))
  })
})
