import { describe, expect, test } from 'vitest'
import { VirtualNtag424 } from '../../station/virtual-card/ntag424.js'
import {
  encodeFileSettings,
  FileSettingsError,
  ndefWritePlan,
  NdefUrlError,
  planNdefUrl,
  sdmFileSettings,
  selectFile,
  updateBinary,
  type NdefUrlOptions,
} from '../../src/provisioning/index.js'
import { createSunVerifier, extractSunFields, type SunMode } from '../../src/sun/index.js'
import { hex, toHexU, vector } from './provisioningVectors.js'

type TemplateInputs = { template: string; uriPrefixCode: number; mode: SunMode }
type TemplateExpected = { url: string; ndefFile?: string; piccDataOffset: number; macInputOffset: number; macOffset: number; capduIsoUpdateBinary?: string }

describe('planNdefUrl: the published templates', () => {
  test('an12196-t15-t17-ndef-template: file bytes and offsets 0x20 / 0x43 (AN12196 Table 16 erratum: the UID offset is printed "20 (49d)"; 0x20 is 32)', () => {
    const { inputs: i, expected: e } = vector<TemplateInputs, TemplateExpected>('an12196-t15-t17-ndef-template')
    const plan = planNdefUrl(i.template, { mode: i.mode, uriPrefixCode: i.uriPrefixCode })
    expect(plan.url).toBe(e.url)
    expect(toHexU(plan.ndefFile)).toBe(e.ndefFile)
    expect(plan.offsets).toEqual({ piccData: e.piccDataOffset, macInput: e.macInputOffset, mac: e.macOffset })
    expect(plan.offsets.piccData).toBe(0x20)
    expect(plan.offsets.piccData).not.toBe(49)
    expect(plan.sunLayout).toEqual({ piccOffset: 32, macInputOffset: 67, macOffset: 67, mode: 'aes', uriPrefixCode: 4 })
    // Without an explicit code the planner picks the same one: https:// is 0x04.
    expect(toHexU(planNdefUrl(i.template).ndefFile)).toBe(e.ndefFile)
  })

  test('an12196-t15-t17-ndef-template: ISOUpdateBinary of the file (AN12196 Table 17 sends a trailing Le 00; ISO 7816-4 has none for UPDATE BINARY)', () => {
    const { inputs: i, expected: e } = vector<TemplateInputs, TemplateExpected>('an12196-t15-t17-ndef-template')
    const plan = planNdefUrl(i.template, { mode: i.mode, uriPrefixCode: i.uriPrefixCode })
    expect(toHexU(updateBinary(0, plan.ndefFile))).toBe(e.capduIsoUpdateBinary)
    expect(toHexU(selectFile(0xe104))).toBe('00A4000C02E104')
  })

  test('an12196-t15-t17-ndef-template: the NDEF file\'s SDM settings for AN12196\'s key map encode to Table 19\'s CmdData', () => {
    const { inputs: i } = vector<TemplateInputs>('an12196-t15-t17-ndef-template')
    const { expected: t19 } = vector('an12196-t19-changefilesettings-sdm-full')
    const settings = sdmFileSettings(planNdefUrl(i.template), { metaRead: '2', fileRead: '1', ctrRet: '1' })
    expect(toHexU(encodeFileSettings(settings, { fileNo: 2, mode: 'aes' }))).toBe(t19.cmdData)
  })

  test('boltcard-manual-ndef-offsets: URI code 00 keeps lnurlw:// in the file; p at 41, c at 76', () => {
    const { inputs: i, expected: e } = vector<TemplateInputs, TemplateExpected>('boltcard-manual-ndef-offsets')
    const plan = planNdefUrl(i.template, { mode: i.mode, uriPrefixCode: i.uriPrefixCode })
    expect(plan.url).toBe(e.url)
    expect(plan.offsets).toEqual({ piccData: e.piccDataOffset, macInput: e.macInputOffset, mac: e.macOffset })
    expect(plan.uriPrefix).toEqual({ code: 0, prefix: '' })
    // The Bolt Card app's rule: indexOf('p=') + 9 (2 NLEN + 5 header + 2 for "p=").
    expect(plan.offsets.piccData).toBe(plan.url.indexOf('p=') + 9)
  })
})

describe('planNdefUrl: chip and gateway agree', () => {
  const uid = '04DE5F1EACC040'
  const metaKey = '00112233445566778899AABBCCDDEEFF'
  const fileKey = 'FFEEDDCCBBAA99887766554433221100'

  test.each<[string, NdefUrlOptions, Uint8Array?]>([
    ['https://choose.url.com/ntag424?e={picc}&c={mac}', {}],
    ['lnurlw://card.yourdomain.com/ln?p={picc}&c={mac}', { uriPrefixCode: 0 }],
    ['https://example.com/t/{picc}/{mac}', { mode: 'lrp' }],
    ['https://www.example.com/?{macin}e={picc}&c={mac}', {}],
    ['https://example.com/?e={picc}&{macin}d={enc}&c={mac}', { encLength: 64 }, Buffer.alloc(32, 0x5a)],
    ['https://example.com/?e={picc}&{macin}d={enc}&c={mac}', { mode: 'lrp', encLength: 32 }, Buffer.alloc(16, 0x33)],
  ])('%s %j: the virtual card mirrors at the plan\'s offsets, and the verifier reads its tap with the plan\'s layout', (template, options, fileData) => {
    const plan = planNdefUrl(template, options)
    const card = new VirtualNtag424({ uid, metaKey, fileKey, mode: options.mode, url: template, uriPrefixCode: options.uriPrefixCode, fileData })
    const { mode: _mode, uriPrefixCode, piccOffset, macInputOffset, macOffset, encOffset, encLength } = card.settings
    expect({ piccData: piccOffset, macInput: macInputOffset, mac: macOffset, encData: encOffset, encLength }).toEqual({ ...plan.offsets })
    expect(uriPrefixCode).toBe(plan.uriPrefix.code)
    expect(plan.sunLayout).toEqual({ piccOffset, macInputOffset, macOffset, encOffset, encLength, mode: plan.mode, uriPrefixCode })

    const url = card.urlAt(41)
    expect(url.length).toBe(plan.url.length)
    const fields = extractSunFields(url, plan.sunLayout!)
    expect(fields.ok).toBe(true)
    if (!fields.ok || fields.kind !== 'sun') return
    const result = createSunVerifier({ metaKey, fileKey, mode: plan.mode }).verify(fields)
    expect(result).toMatchObject({ valid: true, uid, counter: 41 })
    // The settings the chip would be given pass every data-sheet rule.
    expect(() => sdmFileSettings(plan, { metaRead: '1', fileRead: '2' })).not.toThrow()
  })

  test('a plain mirror ({uid}/{ctr}): offsets agree with the virtual card; no offset layout (verified by parameter names)', () => {
    const template = 'http://example.com/x?uid={uid}&ctr={ctr}&cmac={mac}'
    const plan = planNdefUrl(template)
    const card = new VirtualNtag424({ uid, metaKey, fileKey, url: template })
    expect({ uid: card.settings.uidOffset, readCtr: card.settings.ctrOffset, macInput: card.settings.macInputOffset, mac: card.settings.macOffset }).toEqual(plan.offsets)
    expect(plan.sunLayout).toBeNull()
    const settings = sdmFileSettings(plan, { fileRead: '2' })
    expect(settings.sdmAccessRights).toEqual({ metaRead: 'E', fileRead: '2', ctrRet: 'F' })
    expect(() => sdmFileSettings(plan, { metaRead: '1', fileRead: '2' })).toThrow(/metaRead E/)
    const fields = extractSunFields(card.urlAt(5))
    expect(fields).toMatchObject({ ok: true, kind: 'plain_mirror', uid })
  })

  test('{enc} without {macin}: the MAC input starts at the file data, as the data sheet requires (SDMENCOffset ≥ SDMMACInputOffset)', () => {
    const plan = planNdefUrl('https://example.com/?e={picc}&d={enc}&c={mac}')
    expect(plan.offsets.macInput).toBe(plan.offsets.encData)
    expect(() => sdmFileSettings(plan, { metaRead: '1', fileRead: '2' })).not.toThrow()
  })
})

describe('planNdefUrl: templates a chip cannot hold', () => {
  test.each<[string, NdefUrlOptions, RegExp]>([
    ['https://example.com/?e={picc}', {}, /needs \{mac\}/],
    ['https://example.com/?c={mac}', {}, /needs \{picc\}/],
    ['https://example.com/?e={picc}&u={uid}&c={mac}', {}, /not both/],
    ['https://example.com/?e={picc}&e2={picc}&c={mac}', {}, /appears twice/],
    ['https://example.com/?e={pic}&c={mac}', {}, /unknown placeholder \{pic\}/],
    ['https://example.com/?e={picc&c={mac}', {}, /unmatched brace/],
    ['https://exämple.com/?e={picc}&c={mac}', {}, /printable ASCII/],
    ['https://example.com/a b?e={picc}&c={mac}', {}, /printable ASCII/],
    ['https://example.com/?c={mac}&{macin}e={picc}', {}, /\{macin\}.*before \{mac\}/],
    ['https://example.com/?e={picc}&c={mac}', { uriPrefixCode: 1 }, /does not start with "http:\/\/www\."/],
    [`https://example.com/${'a'.repeat(200)}?e={picc}&c={mac}`, {}, /too long.*256/],
    ['https://example.com/?e={picc}&d={enc}&c={mac}', { encLength: 48 }, /multiple of 32/],
    // Written to the chip, these would never reach a verifier: no scheme, or no host.
    ['garbage?e={picc}&c={mac}', {}, /must be an absolute URL/],
    ['/tap?e={picc}&c={mac}', {}, /must be an absolute URL/],
    ['https://?e={picc}&c={mac}', {}, /must be an absolute URL/],
  ])('%s %j is refused', (template, options, reason) => {
    let thrown: unknown
    try {
      const plan = planNdefUrl(template, options)
      sdmFileSettings(plan, { metaRead: '1', fileRead: '2' })
    } catch (e) {
      thrown = e
    }
    expect(thrown instanceof NdefUrlError || thrown instanceof FileSettingsError).toBe(true)
    expect((thrown as Error).message).toMatch(reason)
  })
})

describe('ndefWritePlan', () => {
  test('NLEN 0000 first, the message in ≤128-byte chunks, the real NLEN last', () => {
    const plan = planNdefUrl(`https://example.com/${'a'.repeat(150)}?e={picc}&c={mac}`)
    const steps = ndefWritePlan(plan.ndefFile)
    expect(steps.map((s) => [s.offset, s.data.length])).toEqual([
      [0, 2],
      [2, 128],
      [130, plan.ndefFile.length - 130],
      [0, 2],
    ])
    expect(toHexU(steps[0]!.data)).toBe('0000')
    expect(steps[3]!.data.readUInt16BE(0)).toBe(plan.ndefFile.length - 2)
    const rebuilt = Buffer.alloc(plan.ndefFile.length)
    for (const s of steps) s.data.copy(rebuilt, s.offset)
    expect(rebuilt.equals(plan.ndefFile)).toBe(true)
    expect(() => ndefWritePlan(hex('0005D101'))).toThrow(/NLEN/)
  })
})
