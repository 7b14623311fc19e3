import { describe, expect, test } from 'vitest'
import {
  aesCbc,
  aesSessionIv,
  aesSessionKeys,
  CardSecureSession,
  changeFileSettings,
  commandMacInput,
  createSecureSession,
  decodeChangeFileSettingsData,
  decodeFileSettings,
  encodeFileSettings,
  encodeGetFileSettingsAnswer,
  FACTORY_NDEF_SETTINGS,
  FileSettingsError,
  getFileSettings,
  macT,
  padM2,
  responseMacInput,
  sessionMac,
  validateFileSettings,
  type FileSettings,
} from '../../src/provisioning/index.js'
import { hex, toHexU, vector } from './provisioningVectors.js'

type T19Inputs = { sesAuthEncKey: string; sesAuthMacKey: string; ti: string; cmdCtr: number; fileNo: number; settings: FileSettings; response: string }

describe('ChangeFileSettings', () => {
  test('an12196-t19-changefilesettings-sdm-full: encoded from a structured settings object, then encrypted and MACed byte for byte', () => {
    const { inputs: i, expected: e } = vector<T19Inputs>('an12196-t19-changefilesettings-sdm-full')
    const data = encodeFileSettings(i.settings, { fileNo: i.fileNo, mode: 'aes' })
    expect(toHexU(data)).toBe(e.cmdData)
    const keys = aesSessionKeys(i.sesAuthEncKey, i.sesAuthMacKey)
    const ti = hex(i.ti)
    const iv = aesSessionIv(keys.encKey, 'command', ti, i.cmdCtr)
    expect(toHexU(iv)).toBe(e.ivCmd)
    const enc = aesCbc('encrypt', keys.encKey, iv, padM2(data))
    expect(toHexU(enc)).toBe(e.encData)
    const macInput = commandMacInput(0x5f, i.cmdCtr, ti, Buffer.from([i.fileNo]), enc)
    expect(toHexU(macInput)).toBe(e.macInput)
    expect([toHexU(sessionMac(keys, macInput)), toHexU(macT(sessionMac(keys, macInput)))]).toEqual([e.cmac, e.macT])

    const session = createSecureSession({ keys, ti, keyNo: 0, cmdCtr: i.cmdCtr })
    const x = changeFileSettings(session, { fileNo: i.fileNo, settings: i.settings })
    expect(toHexU(x.apdu)).toBe(e.capdu)
    const respMacInput = responseMacInput(0x00, i.cmdCtr + 1, ti, Buffer.alloc(0))
    expect(toHexU(respMacInput)).toBe(e.respMacInput)
    expect(toHexU(sessionMac(keys, respMacInput))).toBe(e.respCmac)
    expect(toHexU(macT(sessionMac(keys, respMacInput)))).toBe(e.respMacT)
    expect(i.response).toBe(`${e.respMacT}9100`)
    x.parse(hex(i.response))
    expect(session.cmdCtr).toBe(i.cmdCtr + 1)

    const card = new CardSecureSession({ keys, ti, keyNo: 0, cmdCtr: i.cmdCtr })
    const accepted = card.acceptCommand(0x5f, x.apdu.subarray(5, -1), { headerLength: 1, commMode: 'full' })
    if (!accepted.ok) throw new Error(accepted.reason)
    expect(decodeChangeFileSettingsData(accepted.data)).toEqual(i.settings)
    expect(toHexU(card.respond(undefined, { commMode: 'full' }))).toBe(i.response)
  })

  test('an12196-t19-changefilesettings-sdm-full: wire order is SDMMACInputOffset then SDMMACOffset (AN12196 Table 19 label erratum: printed "SDMMACOffset, SDMMACInputOffset"; equal there)', () => {
    const { inputs: i } = vector<T19Inputs>('an12196-t19-changefilesettings-sdm-full')
    const apart: FileSettings = { ...i.settings, offsets: { piccData: 32, macInput: 0x40, mac: 0x43 } }
    expect(toHexU(encodeFileSettings(apart, { fileNo: 2, mode: 'aes' }))).toBe('4000E0C1F121200000400000430000')
  })

  test('the same settings in LRP mode: PICCData is 48 characters, so a MAC at 0x43 overlaps it and is refused before any byte is sent', () => {
    const { inputs: i } = vector<T19Inputs>('an12196-t19-changefilesettings-sdm-full')
    expect(() => encodeFileSettings(i.settings, { fileNo: 2, mode: 'lrp' })).toThrow(/overlap/)
    expect(encodeFileSettings({ ...i.settings, offsets: { piccData: 32, macInput: 83, mac: 83 } }, { fileNo: 2, mode: 'lrp' }).length).toBe(15)
  })

  test('the CommMode follows the current Change right: Full for a key (and only with that key), plain when free', () => {
    const { inputs: i } = vector<T19Inputs>('an12196-t19-changefilesettings-sdm-full')
    const keys = aesSessionKeys(i.sesAuthEncKey, i.sesAuthMacKey)
    const plain = changeFileSettings(createSecureSession({ keys, ti: hex(i.ti), keyNo: 3 }), { fileNo: 2, settings: i.settings, currentChange: 'E' })
    expect(toHexU(plain.apdu)).toBe('905F00001002' + '4000E0C1F121200000430000430000' + '00')
    expect(() => changeFileSettings(createSecureSession({ keys, ti: hex(i.ti), keyNo: 3 }), { fileNo: 2, settings: i.settings })).toThrow(/key 0/)
    expect(() => changeFileSettings(createSecureSession({ keys, ti: hex(i.ti), keyNo: 0 }), { fileNo: 2, settings: i.settings, currentChange: 'F' })).toThrow(FileSettingsError)
  })
})

describe('GetFileSettings', () => {
  test('getfilesettings-factory-ndef-file: the factory NDEF file decodes and re-encodes (AN12196 §6.4 prints this value garbled)', () => {
    const { inputs: i, expected: e } = vector<{ data: string }, { fileType: number; fileSize: number; settings: FileSettings }>('getfilesettings-factory-ndef-file')
    const decoded = decodeFileSettings(hex(i.data))
    expect(decoded).toEqual(e)
    expect(decoded.settings).toEqual(FACTORY_NDEF_SETTINGS)
    expect(toHexU(encodeGetFileSettingsAnswer(decoded.fileType, decoded.fileSize, decoded.settings))).toBe(i.data)
    expect(toHexU(encodeFileSettings(decoded.settings, { fileNo: 2, mode: 'aes' }))).toBe('00E0EE')
  })

  test('getfilesettings-an12196-t8-encfiledata: SDM with encrypted file data decodes, validates and re-encodes to the same bytes', () => {
    const { inputs: i, expected: e } = vector<{ data: string }, { fileType: number; fileSize: number; settings: FileSettings }>('getfilesettings-an12196-t8-encfiledata')
    const decoded = decodeFileSettings(hex(i.data))
    expect(decoded).toEqual(e)
    expect(validateFileSettings(decoded.settings, { fileNo: 2, mode: 'aes' })).toEqual([])
    expect(toHexU(encodeGetFileSettingsAnswer(decoded.fileType, decoded.fileSize, decoded.settings))).toBe(i.data)
    // ChangeFileSettings carries the same record without FileType and FileSize.
    const raw = hex(i.data)
    expect(toHexU(encodeFileSettings(decoded.settings, { fileNo: 2, mode: 'aes' }))).toBe(toHexU(Buffer.concat([raw.subarray(1, 4), raw.subarray(7)])))
  })

  test('an12196-t8-getfilesettings-commmode-mac: GetFileSettings in a session, decoded after its MAC is checked', () => {
    const { inputs: i } = vector<{ sesAuthEncKey: string; sesAuthMacKey: string; ti: string; cmdCtr: number; response: string }>('an12196-t8-getfilesettings-commmode-mac')
    const session = createSecureSession({ keys: aesSessionKeys(i.sesAuthEncKey, i.sesAuthMacKey), ti: hex(i.ti), keyNo: 0, cmdCtr: i.cmdCtr })
    const x = getFileSettings(2, session)
    expect(x.parse(hex(i.response)).settings.sdmAccessRights).toEqual({ metaRead: '0', fileRead: '0', ctrRet: 'E' })
    expect(toHexU(getFileSettings(2).apdu)).toBe('90F50000010200')
  })

  test('decoding refuses truncated records, trailing bytes, RFU bits and RFU access conditions (AN12196 Table 12 erratum: an answer with FileOption 43 and only two offsets, as reconstructed here, cannot be decoded)', () => {
    expect(() => decodeFileSettings(hex('0000E0EE0001'))).toThrow(FileSettingsError)
    expect(() => decodeFileSettings(hex('0000E0EE00010000'))).toThrow(/follow/)
    expect(() => decodeFileSettings(hex('0080E0EE000100'))).toThrow(/RFU bits/)
    expect(() => decodeFileSettings(hex('000075EE000100'))).toThrow(/RFU access condition/)
    // Table 12: SDM with MetaRead a key and FileRead a key needs PICCData, MACInput and MAC offsets; two are not enough.
    expect(() => decodeFileSettings(hex('0043EEEE000100C1F121200000430000'))).toThrow(/3-byte fields/)
  })
})

describe('validation before anything is written', () => {
  const base: FileSettings = {
    sdm: true,
    commMode: 'plain',
    accessRights: { read: 'E', write: '0', readWrite: '0', change: '0' },
    sdmOptions: { uid: true, readCtr: true, readCtrLimit: false, encFileData: false, ascii: true },
    sdmAccessRights: { metaRead: '1', fileRead: '2', ctrRet: 'F' },
    offsets: { piccData: 32, macInput: 67, mac: 67 },
  }
  const problems = (s: FileSettings, fileNo = 2): string[] => validateFileSettings(s, { fileNo, mode: 'aes' })

  test('a valid SDM record has no problems', () => {
    expect(problems(base)).toEqual([])
  })

  test.each<[string, FileSettings, RegExp, number?]>([
    ['overlapping mirrors', { ...base, offsets: { piccData: 32, macInput: 40, mac: 40 } }, /PICCData .* and the MAC .* overlap \(91 9E\)/],
    ['a mirror past the end of the file', { ...base, offsets: { piccData: 32, macInput: 245, mac: 245 } }, /runs past the end of the 256-byte file/],
    ['MAC input after the MAC', { ...base, offsets: { piccData: 32, macInput: 80, mac: 67 } }, /SDMMACInputOffset 80 is after SDMMACOffset 67/],
    ['a missing offset', { ...base, offsets: { piccData: 32, mac: 67 } }, /SDMMACInputOffset is missing.*91 7E/],
    ['an offset the options do not call for', { ...base, offsets: { ...base.offsets, uid: 100 } }, /UIDOffset is given, but/],
    ['SDM on the proprietary file', base, /SDM is possible on the NDEF file \(02\) only/, 3],
    ['Change F', { ...base, accessRights: { ...base.accessRights, change: 'F' } }, /freeze the settings forever/],
    ['binary encoding', { ...base, sdmOptions: { ...base.sdmOptions!, ascii: false } }, /ASCII must be set/],
    ['MetaRead F with the UID option', { ...base, sdmAccessRights: { ...base.sdmAccessRights!, metaRead: 'F' }, offsets: { macInput: 67, mac: 67 } }, /MetaRead F mirrors nothing/],
    ['MetaRead with nothing to mirror', { ...base, sdmOptions: { ...base.sdmOptions!, uid: false, readCtr: false } }, /set the UID or SDMReadCtr option/],
    ['CtrRet without the counter', { ...base, sdmOptions: { ...base.sdmOptions!, readCtr: false }, sdmAccessRights: { ...base.sdmAccessRights!, ctrRet: '1' } }, /CtrRet names a key or E/],
    ['file data without UID and counter', { ...base, sdmOptions: { ...base.sdmOptions!, readCtr: false, encFileData: true }, offsets: { piccData: 32, macInput: 67, encData: 67, encLength: 32, mac: 99 } }, /SDMENCFileData needs/],
    ['file data not a multiple of 32', { ...base, sdmOptions: { ...base.sdmOptions!, encFileData: true }, offsets: { piccData: 32, macInput: 67, encData: 67, encLength: 40, mac: 120 } }, /positive multiple of 32/],
    ['file data running into the MAC', { ...base, sdmOptions: { ...base.sdmOptions!, encFileData: true }, offsets: { piccData: 32, macInput: 67, encData: 67, encLength: 32, mac: 90 } }, /runs into SDMMACOffset 90/],
    ['a counter limit without the counter', { ...base, sdmOptions: { ...base.sdmOptions!, readCtr: false, readCtrLimit: true }, readCtrLimit: 10 }, /SDMReadCtrLimit needs the SDMReadCtr option/],
    ['SDM fields with SDM off', { ...FACTORY_NDEF_SETTINGS, offsets: { mac: 1 } }, /SDM is off/],
  ])('%s is refused with a clear reason', (_what, settings, reason, fileNo) => {
    const found = problems(settings, fileNo)
    expect(found.join('\n')).toMatch(reason)
    expect(() => encodeFileSettings(settings, { fileNo: fileNo ?? 2, mode: 'aes' })).toThrow(FileSettingsError)
  })

  test('every broken rule is listed, not only the first', () => {
    const s: FileSettings = { ...base, accessRights: { ...base.accessRights, change: 'F' }, sdmOptions: { ...base.sdmOptions!, ascii: false } }
    const error = (() => {
      try {
        encodeFileSettings(s, { fileNo: 3, mode: 'aes' })
      } catch (e) {
        return e as FileSettingsError
      }
    })()
    expect(error?.problems.length).toBe(3)
  })
})
