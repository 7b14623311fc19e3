import { inspect } from 'node:util'
import { describe, expect, test } from 'vitest'
import {
  aesCbc,
  aesSessionIv,
  aesSessionKeys,
  CardSecureSession,
  commandMacInput,
  createSecureSession,
  fileDataHeader,
  getCardUid,
  getFileSettings,
  lrpSessionKeysFromSv,
  macT,
  padM2,
  RC,
  readData,
  responseMacInput,
  SecureMessagingError,
  sessionMac,
  setConfiguration,
  unpadM2,
  writeData,
  type CommMode,
  type SecureSession,
} from '../../src/provisioning/index.js'
import { hex, toHexU, vector } from './provisioningVectors.js'

type SmInputs = { sesAuthEncKey: string; sesAuthMacKey: string; ti: string; cmdCtr: number; cmd: string; header: string; data: string; commMode: CommMode; response: string }

function sessionOf(i: SmInputs, keyNo = 0): SecureSession {
  return createSecureSession({ keys: aesSessionKeys(i.sesAuthEncKey, i.sesAuthMacKey), ti: hex(i.ti), keyNo, cmdCtr: i.cmdCtr })
}

function cardOf(i: SmInputs, keyNo = 0): CardSecureSession {
  return new CardSecureSession({ keys: aesSessionKeys(i.sesAuthEncKey, i.sesAuthMacKey), ti: hex(i.ti), keyNo, cmdCtr: i.cmdCtr })
}

/** Every intermediate value the table prints, from the primitives. */
function checkIntermediates(i: SmInputs, e: Record<string, string>): void {
  const keys = aesSessionKeys(i.sesAuthEncKey, i.sesAuthMacKey)
  const ti = hex(i.ti)
  const cmd = Number.parseInt(i.cmd, 16)
  let body = hex(i.data)
  if (e.ivCmd) expect(toHexU(aesSessionIv(keys.encKey, 'command', ti, i.cmdCtr))).toBe(e.ivCmd)
  if (e.encData && body.length > 0) {
    body = aesCbc('encrypt', keys.encKey, aesSessionIv(keys.encKey, 'command', ti, i.cmdCtr), padM2(body))
    expect(toHexU(body)).toBe(e.encData)
  }
  if (e.macInput) expect(toHexU(commandMacInput(cmd, i.cmdCtr, ti, hex(i.header), body))).toBe(e.macInput)
  const full = sessionMac(keys, commandMacInput(cmd, i.cmdCtr, ti, hex(i.header), body))
  if (e.cmac) expect(toHexU(full)).toBe(e.cmac)
  if (e.macT) expect(toHexU(macT(full))).toBe(e.macT)
  const resp = hex(i.response)
  const respBody = resp.subarray(0, resp.length - 10)
  if (e.respMacInput) expect(toHexU(responseMacInput(0x00, i.cmdCtr + 1, ti, respBody))).toBe(e.respMacInput)
  if (e.respCmac) expect(toHexU(sessionMac(keys, responseMacInput(0x00, i.cmdCtr + 1, ti, respBody)))).toBe(e.respCmac)
  if (e.respMacT) expect(toHexU(resp.subarray(resp.length - 10, resp.length - 2))).toBe(e.respMacT)
}

/** The reader builds the published C-APDU and accepts the published answer; the card accepts that C-APDU and builds that answer. */
function checkBothSides(i: SmInputs, e: Record<string, string>): Buffer {
  const cmd = Number.parseInt(i.cmd, 16)
  const session = sessionOf(i)
  const apdu = session.command(cmd, { header: hex(i.header), data: hex(i.data), commMode: i.commMode })
  expect(toHexU(apdu)).toBe(e.capdu)
  const data = session.response(hex(i.response))
  expect(session.cmdCtr).toBe(i.cmdCtr + 1)

  const card = cardOf(i)
  const accepted = card.acceptCommand(cmd, apdu.subarray(5, -1), { headerLength: hex(i.header).length, commMode: i.commMode })
  expect(accepted).toEqual({ ok: true, header: hex(i.header), data: hex(i.data) })
  expect(toHexU(card.respond(data, { commMode: i.commMode }))).toBe(i.response)
  return data
}

describe('CommMode.MAC (AES)', () => {
  test('an12196-t8-getfilesettings-commmode-mac: command and response MAC (AN12196 Table 8 erratum: the R-APDU is printed without SW1 91)', () => {
    const { inputs: i, expected: e } = vector<SmInputs>('an12196-t8-getfilesettings-commmode-mac')
    checkIntermediates(i, e)
    expect(toHexU(checkBothSides(i, e))).toBe(e.respData)
    const session = sessionOf(i)
    expect(toHexU(getFileSettings(2, session).apdu)).toBe(e.capdu)
    // Without the 91 the printed answer ends in …47 86 00 and is not a valid answer at all.
    expect(() => session.response(hex(i.response).subarray(0, -2))).toThrow()
  })
})

describe('CommMode.Full (AES)', () => {
  test('an12196-t18-writedata-ndef-full: 128 bytes to the NDEF file (AN12196 Table 18 erratum: CmdHeader printed 02 000000 530000, the APDU uses 800000 = 128 bytes)', () => {
    const { inputs: i, expected: e } = vector<SmInputs>('an12196-t18-writedata-ndef-full')
    expect(i.header).toBe(toHexU(fileDataHeader(2, 0, hex(i.data).length)))
    expect(toHexU(fileDataHeader(2, 0, 0x53))).not.toBe(i.header)
    checkIntermediates(i, e)
    checkBothSides(i, e)
    expect(toHexU(writeData({ fileNo: 2, offset: 0, data: hex(i.data), commMode: 'full' }, sessionOf(i)).apdu)).toBe(e.capdu)
  })

  test('an12196-t22-writedata-proprietary-full: 10 bytes to file 03 (AN12196 Table 22 erratum: header printed 03 000000 000000, really 0A0000; row 20 repeats Table 18\'s MAC FC222E5F7A542452)', () => {
    const { inputs: i, expected: e } = vector<SmInputs>('an12196-t22-writedata-proprietary-full')
    expect(i.header).toBe(toHexU(fileDataHeader(3, 0, 10)))
    checkIntermediates(i, e)
    checkBothSides(i, e)
    const session = sessionOf(i)
    session.command(0x8d, { header: hex(i.header), data: hex(i.data), commMode: 'full' })
    expect(() => session.response(hex('FC222E5F7A5424529100'))).toThrow(expect.objectContaining({ kind: 'response_mac' }))
    expect(session.active).toBe(false)
  })

  test('an12196-t9-full-iv-and-cbc-only: IV and CBC of the unpadded 128 bytes (AN12196 Table 9 erratum: no padding block and an inconsistent APDU; only these two values reproduce)', () => {
    const { inputs: i, expected: e } = vector('an12196-t9-full-iv-and-cbc-only')
    const keys = aesSessionKeys(i.sesAuthEncKey!, '00000000000000000000000000000000')
    const iv = aesSessionIv(keys.encKey, 'command', hex(i.ti!), Number(i.cmdCtr))
    expect(toHexU(iv)).toBe(e.ivCmd)
    expect(toHexU(aesCbc('encrypt', keys.encKey, iv, hex(i.data!)))).toBe(e.encDataNoPadding)
    // What NTAG secure messaging really sends is one block longer: padding is always added.
    expect(padM2(hex(i.data!)).length).toBe(hex(i.data!).length + 16)
  })

  test('an12196-t28-setconfiguration-randomid-full: option byte plain, data encrypted (AN12196 Table 28 erratum: the R-APDU is printed SW first)', () => {
    const { inputs: i, expected: e } = vector<SmInputs>('an12196-t28-setconfiguration-randomid-full')
    checkIntermediates(i, e)
    checkBothSides(i, e)
    const session = sessionOf(i)
    const x = setConfiguration(session, { option: 'randomId', irreversible: true })
    expect(toHexU(x.apdu)).toBe(e.capdu)
    x.parse(hex(i.response))
    expect(session.active).toBe(true)
  })

  test('an12196-t29-getcarduid-full: response IV (CmdCtr+1) and decryption (AN12196 Table 29 erratum: row 14 puts Cmd in the response MAC, the published MAC omits it; its UID differs from Tables 10 and 13)', () => {
    const { inputs: i, expected: e } = vector<SmInputs>('an12196-t29-getcarduid-full')
    checkIntermediates(i, e)
    const keys = aesSessionKeys(i.sesAuthEncKey, i.sesAuthMacKey)
    const ivResp = aesSessionIv(keys.encKey, 'response', hex(i.ti), i.cmdCtr + 1)
    expect(toHexU(ivResp)).toBe(e.ivResp)
    const encrypted = hex(i.response).subarray(0, 16)
    expect(toHexU(aesCbc('decrypt', keys.encKey, ivResp, encrypted))).toBe(e.respPlainPadded)
    expect(toHexU(unpadM2(hex(e.respPlainPadded!))!)).toBe(e.respData)
    const withCmd = sessionMac(keys, Buffer.concat([hex('51'), responseMacInput(0x00, i.cmdCtr + 1, hex(i.ti), encrypted)]))
    expect(toHexU(macT(withCmd))).not.toBe(e.respMacT)
    expect(toHexU(checkBothSides(i, e))).toBe(e.respData)
    const x = getCardUid(sessionOf(i))
    expect(toHexU(x.apdu)).toBe(e.capdu)
    expect(toHexU(x.parse(hex(i.response)))).toBe(e.respData)
  })

  test('androidcrypto-real-tag-aes-auth-then-enable-lrp: SetConfiguration 05 on a real tag, answered 91 00 without a MAC; the session ends', () => {
    const { inputs: i, expected: e } = vector('androidcrypto-real-tag-aes-auth-then-enable-lrp')
    const keys = aesSessionKeys(e.sesAuthEncKey!, e.sesAuthMacKey!)
    const ti = hex(e.ti!)
    expect(toHexU(aesSessionIv(keys.encKey, 'command', ti, 0))).toBe(e.setConfigurationIvCmd)
    expect(toHexU(padM2(hex('00000000020000000000')))).toBe(e.setConfigurationPlainPadded)
    const session = createSecureSession({ keys, ti, keyNo: 0 })
    const x = setConfiguration(session, { option: 'lrp', irreversible: true })
    expect(toHexU(x.apdu)).toBe(e.setConfigurationCapdu)
    expect(toHexU(x.apdu.subarray(6, 22))).toBe(e.setConfigurationEncData)
    const full = sessionMac(keys, hex(e.setConfigurationMacInput!))
    expect([toHexU(full), toHexU(macT(full))]).toEqual([e.setConfigurationCmac, e.setConfigurationMacT])
    x.parse(hex(i.setConfigurationResponse!))
    expect(session.active).toBe(false)
  })
})

describe('CommMode.Plain inside a session', () => {
  test('an12196-t25-writedata-cc-plain: plain WriteData to the CC file, which still advances CmdCtr (why Table 26 runs at CmdCtr 2)', () => {
    const { inputs: i, expected: e } = vector('an12196-t25-writedata-cc-plain')
    const session = createSecureSession({ keys: aesSessionKeys('4CF3CB41A22583A61E89B158D252FC53', '5529860B2FC5FB6154B7F28361D30BF9'), ti: hex('7614281A'), keyNo: 0, cmdCtr: 1 })
    expect(i.header).toBe(toHexU(fileDataHeader(1, 14, 18)))
    const x = writeData({ fileNo: 1, offset: 14, data: hex(i.data!), commMode: 'plain' }, session)
    expect(x.apdu[1]).toBe(Number.parseInt(i.cmd!, 16))
    expect(toHexU(x.apdu)).toBe(e.capdu)
    x.parse(hex('9100'))
    expect(session.cmdCtr).toBe(2)
    expect(toHexU(writeData({ fileNo: 1, offset: 14, data: hex(i.data!), commMode: 'plain' }).apdu)).toBe(e.capdu)
  })
})

describe('LRP secure messaging', () => {
  type Step = { cmd: string; header: string; data: string; commMode: CommMode; response: string }
  type SeqInputs = { key: string; sv: string; ti: string; cmdCtr: number; encCtr: number; steps: Step[] }
  type SeqExpected = { steps: { capdu: string; respData: string }[] }

  function replay(name: string): void {
    const { inputs: i, expected: e } = vector<SeqInputs, SeqExpected>(name)
    const { keys } = lrpSessionKeysFromSv(i.key, hex(i.sv))
    const session = createSecureSession({ keys, ti: hex(i.ti), keyNo: 0, cmdCtr: i.cmdCtr, encCtr: i.encCtr })
    const card = new CardSecureSession({ keys, ti: hex(i.ti), keyNo: 0, cmdCtr: i.cmdCtr, encCtr: i.encCtr })
    i.steps.forEach((step, n) => {
      const cmd = Number.parseInt(step.cmd, 16)
      const apdu = session.command(cmd, { header: hex(step.header), data: hex(step.data), commMode: step.commMode })
      expect(toHexU(apdu), `step ${n + 1} C-APDU`).toBe(e.steps[n]!.capdu)
      expect(toHexU(session.response(hex(step.response))), `step ${n + 1} data`).toBe(e.steps[n]!.respData)
      const accepted = card.acceptCommand(cmd, apdu.subarray(5, -1), { headerLength: hex(step.header).length, commMode: step.commMode })
      expect(accepted).toEqual({ ok: true, header: hex(step.header), data: hex(step.data) })
      expect(toHexU(card.respond(hex(e.steps[n]!.respData), { commMode: step.commMode })), `step ${n + 1} card answer`).toBe(step.response)
    })
    expect([session.cmdCtr, card.cmdCtr, session.encCtr]).toEqual([i.steps.length, i.steps.length, card.encCtr])
  }

  test('icedevml-lrp-cmd-getcarduid-x3: three GetCardUID, EncCtr rolling 1, 2, 3 across the answers, reader and card side', () => {
    replay('icedevml-lrp-cmd-getcarduid-x3')
  })

  test('icedevml-lrp-cmd-writedata-readdata: WriteData then ReadData in CommMode.Full, reader and card side', () => {
    replay('icedevml-lrp-cmd-writedata-readdata')
    const { inputs: i, expected: e } = vector<SeqInputs, SeqExpected>('icedevml-lrp-cmd-writedata-readdata')
    const { keys } = lrpSessionKeysFromSv(i.key, hex(i.sv))
    const session = createSecureSession({ keys, ti: hex(i.ti), keyNo: 0, encCtr: 1 })
    const w = writeData({ fileNo: 3, offset: 0, data: hex('010203'), commMode: 'full' }, session)
    expect(toHexU(w.apdu)).toBe(e.steps[0]!.capdu)
    w.parse(hex(i.steps[0]!.response))
    const r = readData({ fileNo: 3, offset: 0, length: 3, commMode: 'full' }, session)
    expect(toHexU(r.apdu)).toBe(e.steps[1]!.capdu)
    expect(toHexU(r.parse(hex(i.steps[1]!.response)))).toBe('010203')
  })
})

describe('session rules', () => {
  const keys = aesSessionKeys(Buffer.alloc(16, 1), Buffer.alloc(16, 2))
  const ti = hex('01020304')

  test('a refusal ends the session and names the status word; the error answer carries no MAC', () => {
    const session = createSecureSession({ keys, ti, keyNo: 0 })
    session.command(0xc4, { header: hex('01'), data: Buffer.alloc(21), commMode: 'full' })
    expect(() => session.response(hex('911E'))).toThrow(expect.objectContaining({ name: 'NtagStatusError', status: 'INTEGRITY_ERROR' }))
    expect(session.active).toBe(false)
    expect(() => session.command(0x51, { commMode: 'full' })).toThrow(expect.objectContaining({ kind: 'session' }))
  })

  test('one command at a time: a second command before the answer, or an answer with no command, is refused', () => {
    const session = createSecureSession({ keys, ti, keyNo: 0 })
    session.command(0x51, { commMode: 'full' })
    expect(() => session.command(0x51, { commMode: 'full' })).toThrow(SecureMessagingError)
    const fresh = createSecureSession({ keys, ti, keyNo: 0 })
    expect(() => fresh.response(hex('9100'))).toThrow(expect.objectContaining({ kind: 'sequence' }))
  })

  test('a Full answer with a good MAC but bad padding is refused as padding; a short answer as length', () => {
    const card = new CardSecureSession({ keys, ti, keyNo: 0 })
    const reader = createSecureSession({ keys, ti, keyNo: 0 })
    reader.command(0x51, { commMode: 'full' })
    card.acceptCommand(0x51, Buffer.alloc(8), { headerLength: 0, commMode: 'mac' })
    const answer = card.respond(Buffer.alloc(16, 0xaa), { commMode: 'mac' }) // 16 bytes that are not E(…‖80 00…)
    expect(() => reader.response(answer)).toThrow(expect.objectContaining({ kind: 'padding' }))
    const r2 = createSecureSession({ keys, ti, keyNo: 0 })
    r2.command(0x51, { commMode: 'full' })
    expect(() => r2.response(hex('01029100'))).toThrow(expect.objectContaining({ kind: 'length' }))
  })

  test('the card refuses a command with a wrong MAC and answers a bare 91 1E, ending its session', () => {
    const reader = createSecureSession({ keys, ti, keyNo: 0 })
    const card = new CardSecureSession({ keys, ti, keyNo: 0 })
    const apdu = reader.command(0x51, { commMode: 'full' })
    apdu[apdu.length - 2]! ^= 0x01
    expect(card.acceptCommand(0x51, apdu.subarray(5, -1), { headerLength: 0, commMode: 'full' })).toEqual({ ok: false, reason: 'mac' })
    expect(toHexU(card.fail(RC.integrityError))).toBe('911E')
    expect(card.active).toBe(false)
  })

  test('CmdCtr FFFF: no further command', () => {
    const session = createSecureSession({ keys, ti, keyNo: 0, cmdCtr: 0xffff })
    expect(() => session.command(0x51, { commMode: 'full' })).toThrow(/exhausted/)
  })

  test('a session never serialises or prints its keys', () => {
    const session = createSecureSession({ keys, ti, keyNo: 0 })
    const card = new CardSecureSession({ keys, ti, keyNo: 0 })
    for (const text of [JSON.stringify(session), inspect(session, { depth: 5, showHidden: true }), JSON.stringify(card), inspect(card, { depth: 5, showHidden: true })]) {
      expect(text).not.toMatch(/(1, ?){15}1|(2, ?){15}2|01 01 01 01|02 02 02 02/)
      expect(text).not.toMatch(/encKey|macKey/)
    }
    expect(inspect(session)).toMatch(/keyNo/) // the inspection did look inside
  })
})
