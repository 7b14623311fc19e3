import { describe, expect, test } from 'vitest'
import {
  createSunVerifier,
  extractSunFields,
  generateSunMessage,
  MAX_TAP_URL_LENGTH,
  ndefUriPrefix,
  SunLayoutError,
  type ExtractSunFieldsReturnType,
  type GeneratedSunMessage,
  type PlainMirrorResult,
  type SunLayout,
  type SunMode,
  type SunOffsetLayout,
  type SunResult,
} from '../../src/sun/index.js'
import { sunVectors as publishedVectors, type SunVector } from '../helpers/sunVectors.js'

const vectors = publishedVectors
const sunVectors = vectors.filter((v) => v.kind === 'sun')
const encrypted = sunVectors.filter((v) => v.input.piccData !== undefined && v.expected.valid)
const plainMirrors = sunVectors.filter((v) => v.input.piccData === undefined && v.expected.valid)
const byId = (id: string): SunVector => vectors.find((v) => v.id === id)!

const ZERO = '00000000000000000000000000000000'
const META = '0C3B25D92B38AE443229DD59AD34B85D'
const FILE = 'B45775776CB224C75BCDE7CA3704E933'
const UID = '04996C6A926980'
/** 16 bytes of file data, mirrored as 32 hex characters. */
const FILE_DATA = Buffer.from('tapgate:chip-042').toString('hex').toUpperCase()

type Keys = { metaKey: string; fileKey: string; mode?: SunMode }

/** Extracts, then verifies what was found: the path a tap takes through the gateway. */
function verifyUrl(url: string, layout: SunLayout | undefined, keys: Keys): SunResult | PlainMirrorResult | ExtractSunFieldsReturnType {
  const f = extractSunFields(url, layout)
  if (!f.ok || f.kind === 'ntag21x') return f
  const verifier = createSunVerifier({ metaKey: keys.metaKey, fileKey: keys.fileKey, mode: keys.mode ?? 'auto' })
  return f.kind === 'sun' ? verifier.verify(f) : verifier.verifyPlainMirror(f)
}

function keysOf(v: SunVector): Keys {
  return { metaKey: v.keys?.sdmMetaReadKey ?? ZERO, fileKey: v.keys?.sdmFileReadKey ?? ZERO, mode: v.mode === 'LRP' ? 'lrp' : 'aes' }
}

type Chip = { url: string; layout: SunOffsetLayout; message: GeneratedSunMessage }

/**
 * A virtual chip programmed with a URL template: `{picc}`, `{enc}` and `{mac}` are
 * where it mirrors, `{macin}` (zero width) where its MAC input starts (default: at
 * the MAC, an empty input). Returns the URL it would emit and its SDM offsets,
 * counted as ChangeFileSettings counts them: in the NDEF file, URI text from byte 7.
 */
function chip(template: string, opts: { mode?: SunMode; fileData?: string; uriPrefixCode?: number; uid?: string | null } = {}): Chip {
  const mode = opts.mode ?? 'aes'
  const tokens = template.split(/(\{\w+\})/)
  const fill = (values: Record<string, string>) => {
    let out = ''
    const at: Record<string, number> = {}
    for (const t of tokens) {
      const name = /^\{(\w+)\}$/.exec(t)?.[1]
      if (name === undefined) out += t
      else {
        at[name] = out.length
        out += values[name] ?? ''
      }
    }
    return { out, at }
  }
  const { at } = fill({ picc: '0'.repeat(mode === 'aes' ? 32 : 48), enc: '0'.repeat(opts.fileData?.length ?? 0), mac: '0'.repeat(16) })
  const macinAt = at.macin ?? at.mac!
  const uid = opts.uid === undefined ? UID : opts.uid
  // Fixed chip randomness (PICCData padding, LRP PICCRand) keeps the URLs, and so the pinned hint texts, stable.
  const padding = 16 - 1 - (uid === null ? 0 : 7) - 3
  const message = generateSunMessage({
    random: Buffer.alloc(mode === 'aes' ? padding : 8 + padding, 0xa5),
    metaKey: META,
    fileKey: FILE,
    mode,
    uid,
    counter: 42,
    fileData: opts.fileData,
    macInput: ({ piccData, encFileData }) => fill({ picc: piccData, enc: encFileData ?? '' }).out.slice(macinAt, at.mac),
  })
  const url = fill({ picc: message.piccData, enc: message.encFileData ?? '', mac: message.sdmmac }).out
  const prefix = ndefUriPrefix(url, opts.uriPrefixCode)!.prefix
  const ndef = (i: number) => i - prefix.length + 7
  const layout: SunOffsetLayout = { piccOffset: ndef(at.picc!), macInputOffset: ndef(macinAt), macOffset: ndef(at.mac!) }
  if (at.enc !== undefined) Object.assign(layout, { encOffset: ndef(at.enc), encLength: opts.fileData!.length })
  if (opts.uriPrefixCode !== undefined) layout.uriPrefixCode = opts.uriPrefixCode
  return { url, layout, message }
}

const CHIP_KEYS: Keys = { metaKey: META, fileKey: FILE }
const VERIFIED_42 = { valid: true, uid: UID, counter: 42 }

describe('published vectors as tap URLs', () => {
  test('the vector set still has URL-shaped SUN vectors to check', () => {
    expect(encrypted.length).toBeGreaterThanOrEqual(6)
    expect(plainMirrors.length).toBeGreaterThanOrEqual(1)
    expect(encrypted.some((v) => v.mode === 'LRP')).toBe(true)
  })

  test.each(encrypted)('$id: every parameter convention and SDM offsets verify', (v) => {
    const { piccData, sdmmac, encFileData } = v.input as { piccData: string; sdmmac: string; encFileData?: string | null }
    const keys = keysOf(v)
    const expected = { valid: true, uid: v.expected.uid, counter: v.expected.readCtr, fileData: v.expected.fileData ?? null }
    const urls: [string, SunLayout | undefined][] = encFileData
      ? // The vector's MAC input includes `&cmac=`, so only layouts that name the MAC parameter cmac reproduce it.
        [
          [`https://example.com/?picc_data=${piccData}&enc=${encFileData}&cmac=${sdmmac}`, undefined],
          [`https://example.com/?e=${piccData}&d=${encFileData}&cmac=${sdmmac}`, { piccParam: 'e', macParam: 'cmac', encParam: 'd' }],
        ]
      : [
          [`https://example.com/?e=${piccData}&c=${sdmmac}`, undefined],
          [`https://example.com/?picc_data=${piccData}&cmac=${sdmmac}`, undefined],
          [`lnurlw://card.example.com/ln?p=${piccData}&c=${sdmmac}`, { piccParam: 'p', macParam: 'c' }],
          // By offsets: "example.com/?e=" is 15 characters after the abbreviated https://, so PICCData sits at 7 + 15.
          [`https://example.com/?e=${piccData}&c=${sdmmac}`, { piccOffset: 22, macInputOffset: 25 + piccData.length, macOffset: 25 + piccData.length }],
        ]
    if (v.url?.startsWith('https://')) urls.push([v.url, undefined])
    for (const [url, layout] of urls) {
      const f = extractSunFields(url, layout)
      expect(f, url).toMatchObject({ ok: true, kind: 'sun', piccData, sdmmac, encFileData: encFileData ?? null, macInput: v.input.macInput })
      expect(verifyUrl(url, layout, keys), url).toMatchObject(expected)
    }
  })

  test.each(plainMirrors)('$id: ?uid=…&ctr=…&cmac=… verifies', (v) => {
    const url = `https://example.com/?uid=${v.input.uid}&ctr=${v.input.ctr}&cmac=${v.input.sdmmac}`
    expect(extractSunFields(url)).toEqual({ ok: true, kind: 'plain_mirror', uid: v.input.uid, ctr: v.input.ctr, cmac: v.input.sdmmac, macInput: '' })
    expect(verifyUrl(url, undefined, keysOf(v))).toEqual({ valid: true, mode: 'aes', uid: v.expected.uid, counter: v.expected.readCtr })
  })

  test('AN12196 Table 6: the default MAC input is the file data up to and including &cmac=', () => {
    const v = byId('an12196-table6-encfiledata-macinput-with-param')
    const f = extractSunFields(v.url!)
    expect(f).toMatchObject({ ok: true, macInput: 'CEE9A53E3E463EF1F459635736738962&cmac=' })
    expect(verifyUrl(v.url!, undefined, keysOf(v))).toMatchObject({ valid: true, counter: 8, fileData: '78787878787878787878787878787878' })
  })

  test('the negative vectors, as URLs, are rejected for their reasons', () => {
    const counterPlusOne = byId('an12196-table5-counter-plus-one-rejected').input
    expect(
      verifyUrl(`https://example.com/?uid=${counterPlusOne.uid}&ctr=${counterPlusOne.ctr}&cmac=${counterPlusOne.sdmmac}`, undefined, {
        metaKey: ZERO,
        fileKey: ZERO,
      }),
    ).toMatchObject({ valid: false, reason: 'mac_mismatch' })
    const wrongMeta = byId('an12196-table3-wrong-meta-key-rejected')
    expect(verifyUrl(`https://example.com/?e=${wrongMeta.input.piccData}&c=${wrongMeta.input.sdmmac}`, undefined, keysOf(wrongMeta))).toMatchObject({
      valid: false,
      reason: 'not_sun_message',
    })
    // The vector's lower-cased MAC input: as a URL, the lower-case file data is caught before any crypto runs.
    const lower = byId('an12196-table6-lowercase-macinput-rejected').input
    const url = `https://www.my424dna.com/?picc_data=${lower.piccData}&enc=${lower.encFileData!.toLowerCase()}&cmac=${lower.sdmmac}`
    expect(extractSunFields(url)).toMatchObject({ ok: false, reason: 'malformed', detail: expect.stringContaining('lower-case') })
  })

  test('NTAG 21x ASCII mirrors are found, unauthenticated', () => {
    expect(extractSunFields(`https://example.com/?uid=${byId('ntag21x-uid-and-counter-mirror').expected.ascii}`)).toEqual({
      ok: true,
      kind: 'ntag21x',
      uid: '04E141124C2880',
      counter: 16177,
      authenticated: false,
    })
    expect(extractSunFields(`https://example.com/?uid=${byId('ntag21x-uid-mirror').expected.ascii}&ctr=${byId('ntag21x-counter-mirror').expected.ascii}`)).toEqual(
      { ok: true, kind: 'ntag21x', uid: '04E141124C2880', counter: 16177, authenticated: false },
    )
    expect(extractSunFields('https://example.com/?ctr=003F31')).toMatchObject({ ok: true, kind: 'ntag21x', uid: null, counter: 16177 })
  })
})

describe('SDM offsets: any layout a chip can be programmed with', () => {
  test('PICCData and MAC in separate, non-default parameters', () => {
    const c = chip('https://example.com/tap?picc={picc}&mac={mac}')
    expect(c.layout).toEqual({ piccOffset: 28, macInputOffset: 65, macOffset: 65 })
    expect(verifyUrl(c.url, c.layout, CHIP_KEYS)).toMatchObject(VERIFIED_42)
    expect(verifyUrl(c.url, { piccParam: 'picc', macParam: 'mac' }, CHIP_KEYS)).toMatchObject(VERIFIED_42)
    expect(extractSunFields(c.url)).toMatchObject({ ok: false, detail: expect.stringMatching(/^no SUN parameters/) })
  })

  test('one parameter holding PICCData ‖ file data ‖ MAC back to back, the MAC input being the file data', () => {
    const c = chip('https://example.com/?sun={picc}{macin}{enc}{mac}', { fileData: FILE_DATA })
    expect(c.message.macInput).toBe(c.message.encFileData)
    expect(extractSunFields(c.url, c.layout)).toMatchObject({ ok: true, macInput: c.message.encFileData })
    expect(verifyUrl(c.url, c.layout, CHIP_KEYS)).toMatchObject({ ...VERIFIED_42, fileData: FILE_DATA })
    expect(extractSunFields(c.url)).toMatchObject({ ok: false, reason: 'malformed' })
  })

  test('path segments with / separators, the MAC input spanning a separator', () => {
    const c = chip('https://example.com/t/{picc}/{macin}{enc}/{mac}', { fileData: FILE_DATA })
    expect(c.message.macInput).toBe(`${c.message.encFileData}/`)
    expect(verifyUrl(c.url, c.layout, CHIP_KEYS)).toMatchObject({ ...VERIFIED_42, fileData: FILE_DATA })
    expect(extractSunFields(c.url)).toMatchObject({ ok: false, reason: 'malformed' })
  })

  test('a MAC input covering the PICCData: offsets verify where the default (empty) input cannot', () => {
    const c = chip('https://example.com/?e={macin}{picc}&c={mac}')
    expect(c.message.macInput).toBe(`${c.message.piccData}&c=`)
    expect(verifyUrl(c.url, c.layout, CHIP_KEYS)).toMatchObject(VERIFIED_42)
    expect(verifyUrl(c.url, undefined, CHIP_KEYS)).toMatchObject({ valid: false, reason: 'mac_mismatch' })
  })

  test('LRP: 48-hex PICCData, the mode given or read from the layout and the URL', () => {
    const separate = chip('https://example.com/?e={picc}&c={mac}', { mode: 'lrp' })
    expect(verifyUrl(separate.url, separate.layout, CHIP_KEYS)).toMatchObject({ ...VERIFIED_42, mode: 'lrp' })
    expect(verifyUrl(separate.url, { ...separate.layout, mode: 'lrp' }, CHIP_KEYS)).toMatchObject({ ...VERIFIED_42, mode: 'lrp' })
    const packed = chip('https://example.com/{picc}{macin}{enc}{mac}', { mode: 'lrp', fileData: FILE_DATA })
    expect(verifyUrl(packed.url, packed.layout, CHIP_KEYS)).toMatchObject({ ...VERIFIED_42, mode: 'lrp', fileData: FILE_DATA })
    expect(extractSunFields(packed.url)).toMatchObject({ ok: false })
  })

  test('AES PICCData followed directly by the MAC is not mistaken for LRP (a 48-character hex run)', () => {
    const c = chip('https://example.com/?x={picc}{mac}')
    expect(verifyUrl(c.url, c.layout, CHIP_KEYS)).toMatchObject({ ...VERIFIED_42, mode: 'aes' })
  })

  test('counter-only PICCData, and other URI identifier codes', () => {
    const counterOnly = chip('http://www.example.com/{picc}/{mac}', { uid: null })
    expect(counterOnly.layout.piccOffset).toBe(7 + 'example.com/'.length)
    expect(verifyUrl(counterOnly.url, counterOnly.layout, CHIP_KEYS)).toMatchObject({ valid: true, uid: null, counter: 42 })
    const bolt = chip('lnurlw://card.example.com/ln?p={picc}&c={mac}')
    expect(bolt.layout.piccOffset).toBe(7 + 'lnurlw://card.example.com/ln?p='.length)
    expect(verifyUrl(bolt.url, bolt.layout, CHIP_KEYS)).toMatchObject(VERIFIED_42)
    // A record storing the whole URI (code 0x00) instead of abbreviating https://.
    const whole = chip('https://example.com/?e={picc}&c={mac}', { uriPrefixCode: 0 })
    expect(whole.layout.piccOffset).toBe(7 + 'https://example.com/?e='.length)
    expect(verifyUrl(whole.url, whole.layout, CHIP_KEYS)).toMatchObject(VERIFIED_42)
  })
})

describe('hints that point at the likely mistake', () => {
  const sun = chip('https://example.com/?e={picc}&c={mac}')
  const lrp = chip('https://example.com/?e={picc}&c={mac}', { mode: 'lrp' })

  test('meta and file keys swapped', () => {
    const r = verifyUrl(sun.url, undefined, { metaKey: FILE, fileKey: META })
    expect(r).toMatchObject({ valid: false, reason: 'not_sun_message', detail: expect.stringContaining('look swapped') })
  })

  test('wrong mode: by parameter (the verifier) and by offsets (the layout)', () => {
    expect(verifyUrl(lrp.url, undefined, { ...CHIP_KEYS, mode: 'aes' })).toMatchObject({ valid: false, reason: 'mode_mismatch' })
    expect(extractSunFields(lrp.url, { ...lrp.layout, mode: 'aes' })).toMatchInlineSnapshot(`
      {
        "detail": "the layout is for AES mode, but the hex at PICCDataOffset runs 48 characters, the LRP PICCData length: the chip's secure messaging mode and the profile disagree",
        "ok": false,
        "reason": "mode_mismatch",
      }
    `)
    expect(extractSunFields(sun.url, { ...sun.layout, mode: 'lrp' })).toMatchObject({ ok: false, reason: 'mode_mismatch' })
    const packed = chip('https://example.com/?x={picc}{mac}')
    expect(extractSunFields(packed.url, { ...packed.layout, mode: 'lrp' })).toMatchObject({
      ok: false,
      reason: 'mode_mismatch',
      detail: expect.stringContaining('the next field starts 32 characters after PICCDataOffset'),
    })
  })

  test('a lower-cased URL', () => {
    const lowered = sun.url.toLowerCase()
    expect(extractSunFields(lowered)).toMatchInlineSnapshot(`
      {
        "detail": "PICCData (parameter e) is lower-case hex: the chip writes upper case, so the URL was lower-cased (mangled) on its way here, and the MAC covers the exact ASCII the chip wrote",
        "ok": false,
        "reason": "malformed",
      }
    `)
    expect(extractSunFields(lowered, sun.layout)).toMatchObject({ ok: false, reason: 'malformed', detail: expect.stringContaining('lower-case hex') })
  })

  test('truncated PICCData', () => {
    const truncated = sun.url.replace(/e=([0-9A-F]{30})[0-9A-F]{2}/, 'e=$1')
    expect(extractSunFields(truncated)).toMatchInlineSnapshot(`
      {
        "detail": "PICCData (parameter e) is 30 hex characters, not 32 (AES) or 48 (LRP): a truncated URL or the wrong parameter",
        "ok": false,
        "reason": "malformed",
      }
    `)
    const cut = sun.url.slice(0, -4)
    expect(extractSunFields(cut, sun.layout)).toMatchInlineSnapshot(`
      {
        "detail": "the SDMMAC at SDMMACOffset 57 needs 16 characters, up to offset 73, but the URL ends at offset 69: a truncated URL or a wrong offset (offsets count the NDEF file: the URI text starts at byte 7, after the prefix abbreviated by 0x04 ("https://"))",
        "ok": false,
        "reason": "malformed",
      }
    `)
  })

  test('wrong offsets', () => {
    const off = (layout: Partial<SunOffsetLayout>) => extractSunFields(sun.url, { ...sun.layout, ...layout })
    expect(off({ piccOffset: sun.layout.piccOffset + 2 })).toMatchInlineSnapshot(`
      {
        "detail": "PICCData at PICCDataOffset 24 is not hex: "7EEAB7E2CA9E916733233C64…" has "&" at character 31; a run of 32 hex characters starts at offset 22 (2 before PICCDataOffset 24): is the offset wrong?",
        "ok": false,
        "reason": "malformed",
      }
    `)
    // The offsets of a record that stores the whole URI, read as if https:// were abbreviated.
    const whole = chip('https://example.com/?e={picc}&c={mac}', { uriPrefixCode: 0 })
    expect(extractSunFields(whole.url, { ...whole.layout, uriPrefixCode: undefined })).toMatchObject({
      ok: false,
      detail: expect.stringContaining(`8 before PICCDataOffset 30): is the offset wrong, or the record's URI identifier code not 0x04 ("https://")?`),
    })
    expect(off({ macOffset: sun.layout.piccOffset + 20, macInputOffset: sun.layout.piccOffset + 20 })).toMatchObject({
      ok: false,
      detail: expect.stringMatching(/^PICCData \(PICCDataOffset 22, 32 characters\) and the SDMMAC \(SDMMACOffset 42, 16 characters\) overlap/),
    })
    expect(off({ piccOffset: 3 })).toMatchObject({ ok: false, detail: expect.stringContaining('inside the NDEF record header') })
    expect(off({ macInputOffset: sun.layout.macOffset + 1 })).toMatchObject({ ok: false, detail: expect.stringContaining('is after SDMMACOffset') })
    expect(off({ piccOffset: 500 })).toMatchObject({ ok: false, detail: expect.stringContaining('but the URL ends at offset 73') })
    expect(extractSunFields(sun.url, { ...sun.layout, uriPrefixCode: 2 })).toMatchObject({
      ok: false,
      detail: expect.stringContaining('does not start with "https://www."'),
    })
    // A MAC input offset inside the URL but not where the chip starts it: only the MAC can tell.
    expect(verifyUrl(sun.url, { ...sun.layout, macInputOffset: sun.layout.piccOffset }, CHIP_KEYS)).toMatchObject({
      valid: false,
      reason: 'mac_mismatch',
      detail: expect.stringContaining('empty MAC input'),
    })
  })

  test('missing, repeated and misplaced parameters', () => {
    expect(extractSunFields(sun.url.replace(/&c=.*/, ''))).toMatchObject({ ok: false, detail: 'missing parameter c (the SDMMAC): the URL has e but no c; a truncated URL?' })
    expect(extractSunFields(`https://example.com/?p=${sun.message.piccData}&c=${sun.message.sdmmac}`)).toMatchObject({
      ok: false,
      detail: expect.stringContaining('missing parameter e (PICCData): the URL has c but no e'),
    })
    expect(extractSunFields(`${sun.url}&e=${sun.message.piccData}`)).toMatchObject({ ok: false, detail: 'parameter e appears 2 times: a chip writes each field once' })
    expect(extractSunFields('https://example.com/?uid=04DE5F1EACC040&cmac=94EED9EE65337086')).toMatchObject({
      ok: false,
      detail: expect.stringMatching(/^missing parameter ctr/),
    })
    expect(extractSunFields(sun.url, { piccParam: 'e', macParam: 'c', encParam: 'd' })).toMatchObject({
      ok: false,
      detail: 'missing parameter d (the encrypted file data)',
    })
    const v = byId('an12196-table4-encfiledata').input
    expect(extractSunFields(`https://x.example/?picc_data=${v.piccData}&cmac=${v.sdmmac}&enc=${v.encFileData}`)).toMatchObject({
      ok: false,
      detail: expect.stringContaining('comes before enc (the file data)'),
    })
  })

  test('the raw URL: no decoding, nothing after #, non-hex reported with its position', () => {
    expect(extractSunFields(`https://example.com/?e=${sun.message.piccData}&c=${sun.message.sdmmac}#c=0000000000000000`)).toMatchObject({
      ok: true,
      sdmmac: sun.message.sdmmac,
    })
    expect(extractSunFields(`https://example.com/?e=%45${sun.message.piccData.slice(3)}&c=${sun.message.sdmmac}`)).toMatchObject({
      ok: false,
      detail: expect.stringContaining('is not hex: "%45'),
    })
  })
})

describe('layouts no chip could have', () => {
  test.each<[string, unknown]>([
    ['names mixed with offsets', { piccParam: 'e', macParam: 'c', piccOffset: 32 }],
    ['an offset missing', { piccOffset: 32, macInputOffset: 67 }],
    ['file data offset without its length', { piccOffset: 32, macInputOffset: 67, macOffset: 67, encOffset: 40 }],
    ['file data length not whole blocks', { piccOffset: 32, macInputOffset: 67, macOffset: 67, encOffset: 70, encLength: 30 }],
    ['a fractional offset', { piccOffset: 32.5, macInputOffset: 67, macOffset: 67 }],
    ['an unknown URI identifier code', { piccOffset: 32, macInputOffset: 67, macOffset: 67, uriPrefixCode: 0x24 }],
    ['a parameter name with a separator', { piccParam: 'e&', macParam: 'c' }],
    ['the same name twice', { piccParam: 'e', macParam: 'e' }],
  ])('%s throws SunLayoutError', (_, layout) => {
    expect(() => extractSunFields('https://example.com/', layout as SunLayout)).toThrow(SunLayoutError)
  })
})

describe('hostile URLs stay cheap', () => {
  test('a URL longer than any NDEF file is malformed at once; many "="-less parameters are scanned once', () => {
    const params = Array.from({ length: 600 }, (_, i) => `p${i}`).join('&')
    const long = `https://gw.example/tap?${params}&${params}&${params}`
    expect(long.length).toBeGreaterThan(MAX_TAP_URL_LENGTH)
    expect(extractSunFields(long)).toMatchObject({ ok: false, reason: 'malformed', detail: expect.stringContaining('NDEF file') })
    const short = `https://gw.example/tap?${params}`.slice(0, MAX_TAP_URL_LENGTH)
    expect(extractSunFields(short)).toMatchObject({ ok: false, reason: 'malformed' })
  })
})
