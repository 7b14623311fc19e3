import { describe, expect, test } from 'vitest'
import {
  aesSessionKeys,
  CardSecureSession,
  configurationData,
  createSecureSession,
  describeStatusWord,
  expectStatus,
  GET_VERSION_APDUS,
  getKeyVersion,
  nativeApdu,
  NtagStatusError,
  parseGetVersion,
  readBinary,
  selectNdefApplication,
  setConfiguration,
} from '../../src/provisioning/index.js'
import { VirtualNtag424 } from '../../station/virtual-card/ntag424.js'
import { hex, toHexU } from './provisioningVectors.js'

describe('APDU wrapping and status words', () => {
  test('native commands are wrapped 90 INS 00 00 Lc data 00, or 90 INS 00 00 00 without data', () => {
    expect(toHexU(nativeApdu(0x71, hex('0000')))).toBe('9071000002000000')
    expect(toHexU(nativeApdu(0x60))).toBe('9060000000')
    expect(() => nativeApdu(0x8d, Buffer.alloc(256))).toThrow(/at most 255/)
    expect(toHexU(selectNdefApplication())).toBe('00A4040007D276000085010100')
    expect(toHexU(readBinary(0, 0))).toBe('00B0000000')
  })

  test('each status word carries the data sheet\'s name and meaning', () => {
    expect(describeStatusWord(0x911e)).toMatchObject({ name: 'INTEGRITY_ERROR' })
    expect(describeStatusWord(0x91ad).meaning).toMatch(/too many failed/)
    expect(describeStatusWord(0x919d).meaning).toMatch(/LRP mode/)
    expect(describeStatusWord(0x6a82)).toMatchObject({ name: 'FILE_NOT_FOUND' })
    expect(describeStatusWord(0x6c07)).toMatchObject({ name: 'WRONG_LE' })
    expect(describeStatusWord(0x9133)).toMatchObject({ name: 'UNKNOWN' })
    const error = (() => {
      try {
        expectStatus(hex('917E'), 'ChangeFileSettings')
      } catch (e) {
        return e as NtagStatusError
      }
    })()
    expect(error).toBeInstanceOf(NtagStatusError)
    expect(error).toMatchObject({ sw: 0x917e, status: 'LENGTH_ERROR', command: 'ChangeFileSettings' })
    expect(error?.message).toBe(`ChangeFileSettings refused with 91 7E LENGTH_ERROR: ${describeStatusWord(0x917e).meaning}`)
  })
})

describe('GetKeyVersion', () => {
  test('plain before authenticating: 90 64 00 00 01 KK 00 → KeyVer 91 00', () => {
    const x = getKeyVersion(1)
    expect(toHexU(x.apdu)).toBe('90640000010100')
    expect(x.parse(hex('079100'))).toBe(7)
    expect(() => getKeyVersion(5)).toThrow(RangeError)
    expect(() => getKeyVersion(1).parse(hex('91AE'))).toThrow(NtagStatusError)
  })

  test('CommMode.MAC inside a session, checked against the card side', () => {
    const keys = aesSessionKeys(Buffer.alloc(16, 3), Buffer.alloc(16, 4))
    const ti = hex('0A0B0C0D')
    const session = createSecureSession({ keys, ti, keyNo: 0, cmdCtr: 5 })
    const card = new CardSecureSession({ keys, ti, keyNo: 0, cmdCtr: 5 })
    const x = getKeyVersion(3, session)
    const accepted = card.acceptCommand(0x64, x.apdu.subarray(5, -1), { headerLength: 1, commMode: 'mac' })
    expect(accepted).toEqual({ ok: true, header: hex('03'), data: Buffer.alloc(0) })
    expect(x.parse(card.respond(Buffer.from([0x42]), { commMode: 'mac' }))).toBe(0x42)
    expect(session.cmdCtr).toBe(6)
  })
})

describe('GetVersion', () => {
  test('three frames from the virtual card parse into hardware, software and UID', () => {
    const card = new VirtualNtag424({ uid: '04DE5F1EACC040', metaKey: Buffer.alloc(16), fileKey: Buffer.alloc(16) })
    card.transmit(selectNdefApplication())
    const answers = GET_VERSION_APDUS.map((apdu) => card.transmit(apdu))
    const v = parseGetVersion(answers)
    expect(v.hardware).toMatchObject({ vendorId: 0x04, type: 0x04, majorVersion: 0x30, storageSize: 0x11, protocol: 0x05 })
    expect(toHexU(v.uid!)).toBe('04DE5F1EACC040')
    expect(v.production).toBe('00000000000121')
  })

  test('a random-ID chip reports zeros: the UID is null (learn it with GetCardUID)', () => {
    const card = new VirtualNtag424({ uid: '04DE5F1EACC040', metaKey: Buffer.alloc(16), fileKey: Buffer.alloc(16), randomUid: true })
    const v = parseGetVersion(GET_VERSION_APDUS.map((apdu) => card.transmit(apdu)))
    expect(v.uid).toBeNull()
    expect(() => parseGetVersion([hex('91AF'), hex('91AF')])).toThrow(/3 frames/)
  })
})

describe('SetConfiguration', () => {
  test('the two irreversible options and their bytes; nothing is built without irreversible: true', () => {
    expect(configurationData({ option: 'lrp', irreversible: true })).toEqual({ option: 0x05, data: hex('00000000020000000000') })
    expect(configurationData({ option: 'randomId', irreversible: true })).toEqual({ option: 0x00, data: hex('02') })
    expect(() => configurationData({ option: 'lrp', irreversible: false } as unknown as { option: 'lrp'; irreversible: true })).toThrow(/irreversible/)
    const session = createSecureSession({ keys: aesSessionKeys(Buffer.alloc(16), Buffer.alloc(16)), ti: hex('00000000'), keyNo: 1 })
    expect(() => setConfiguration(session, { option: 'lrp', irreversible: true })).toThrow(/key 0/)
  })
})
