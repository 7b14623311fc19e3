import { MAX_ENC_FILE_DATA_HEX_LENGTH } from './createSunVerifier.js'
import { describeUriPrefix, NDEF_URI_PREFIXES, NDEF_URI_TEXT_OFFSET, ndefUriPrefix, type NdefUriPrefix } from './ndefUriPrefix.js'
import type { Ntag21xMirror } from './ntag21xMirror.js'
import { checkSunLayout, isSunOffsetLayout, type SunLayout, type SunLayoutError, type SunOffsetLayout, type SunParamLayout } from './sunLayout.js'
import type { SunMode, SunReason } from './sunResult.js'

/** An encrypted SUN message cut out of a URL; pass it to `SunVerifier.verify`. */
export type ExtractedSunMessage = {
  ok: true
  kind: 'sun'
  piccData: string
  encFileData: string | null
  sdmmac: string
  /** The exact ASCII the chip MACs, cut from the raw URL. */
  macInput: string
}

/** A plain UID/counter mirror with SDMMAC; pass it to `SunVerifier.verifyPlainMirror`. */
export type ExtractedPlainMirror = { ok: true; kind: 'plain_mirror'; uid: string; ctr: string; cmac: string; macInput: string }

/** An NTAG 21x ASCII mirror (`uid` and/or `ctr` without `cmac`): nothing to verify. */
export type ExtractedNtag21xMirror = { ok: true; kind: 'ntag21x' } & Ntag21xMirror

/** The URL does not hold the fields where the layout says; `detail` points at the likely mistake. */
export type ExtractSunFieldsRejected = { ok: false; reason: Extract<SunReason, 'malformed' | 'mode_mismatch'>; detail: string }

export type ExtractSunFieldsReturnType = ExtractedSunMessage | ExtractedPlainMirror | ExtractedNtag21xMirror | ExtractSunFieldsRejected

export type ExtractSunFieldsErrorType = SunLayoutError

/** Tried in order when no layout is given: sdm-backend's two conventions. */
const DEFAULT_PARAM_LAYOUTS: readonly Required<SunParamLayout>[] = [
  { piccParam: 'e', macParam: 'c', encParam: 'd' },
  { piccParam: 'picc_data', macParam: 'cmac', encParam: 'enc' },
]

const PICC_LENGTH: Record<SunMode, number> = { aes: 32, lrp: 48 }
const MAC_LENGTH = 16
const HEX = /^[0-9A-Fa-f]*$/

const LOWER_CASED =
  'the chip writes upper case, so the URL was lower-cased (mangled) on its way here, and the MAC covers the exact ASCII the chip wrote'

function malformed(detail: string): ExtractSunFieldsRejected {
  return { ok: false, reason: 'malformed', detail }
}

function preview(text: string): string {
  return JSON.stringify(text.length > 24 ? `${text.slice(0, 24)}…` : text)
}

function isHexAt(text: string, i: number): boolean {
  const c = text.charCodeAt(i)
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)
}

function hexRunLength(text: string, start: number): number {
  let i = start
  while (i < text.length && isHexAt(text, i)) i++
  return i - start
}

/** What is wrong with a field's characters (its length is checked by the caller), or null. */
function hexProblem(value: string, what: string, where: string): string | null {
  if (!HEX.test(value)) {
    let k = 0
    while (isHexAt(value, k)) k++
    return `${what} ${where} is not hex: ${preview(value)} has ${JSON.stringify(value[k])} at character ${k + 1}`
  }
  if (/[a-f]/.test(value)) return `${what} ${where} is lower-case hex: ${LOWER_CASED}`
  return null
}

/**
 * Cuts the SUN fields out of a tap URL: PICCData, the SDMMAC, the encrypted file
 * data and the exact MAC input, or a plain UID/counter mirror, or an NTAG 21x
 * mirror. Works on the raw URL text, never a decoded form: the MAC covers the
 * exact bytes the chip wrote, and a chip never emits what a decoder would forgive.
 *
 * Without a layout it takes the first of (e, c, d), (picc_data, cmac, enc) and
 * (uid, ctr, cmac) present in the URL, with an empty MAC input, or with file data
 * the MAC input from its first character up to and including `&<mac>=`. A layout
 * names the parameters instead, or gives the chip's SDM offsets, which fit any URL a
 * chip can be programmed with (fields back to back, `/` separators, a MAC input covering the PICCData).
 *
 * @returns the fields, or a rejection whose detail points at the likely mistake
 * @throws SunLayoutError when the layout is not well-formed (see checkSunLayout)
 * @example
 * const f = extractSunFields('https://ntag.nxp.com/424?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086')
 * // { ok: true, kind: 'sun', piccData: 'EF963FF7…', encFileData: null, sdmmac: '94EED9EE65337086', macInput: '' }
 * if (f.ok && f.kind === 'sun') verifier.verify(f)
 */
export function extractSunFields(url: string, layout?: SunLayout): ExtractSunFieldsReturnType {
  if (typeof url !== 'string') return malformed('the tap URL must be a string')
  if (url.length > MAX_TAP_URL_LENGTH)
    return malformed(`the URL is ${url.length} characters long; no chip's NDEF file holds more than ${MAX_TAP_URL_LENGTH}`)
  if (layout === undefined) return byParams(url, undefined)
  checkSunLayout(layout)
  return isSunOffsetLayout(layout) ? byOffsets(url, layout) : byParams(url, layout)
}

/**
 * The largest NDEF file of the NTAG families is under 1 KiB (NTAG 216: 888 bytes;
 * NTAG 424 DNA: 256), so a longer "tap URL" was not written by a chip.
 */
export const MAX_TAP_URL_LENGTH = 4096

// ---- parameter names ---------------------------------------------------------------

/** Where a parameter's value sits in the raw URL. */
type Span = { start: number; end: number }

/** The query parameters of the raw URL (up to any `#`), undecoded, by name. */
function queryParams(url: string): Map<string, Span[]> {
  const params = new Map<string, Span[]>()
  const hash = url.indexOf('#')
  const end = hash < 0 ? url.length : hash
  const q = url.indexOf('?')
  if (q < 0 || q > end) return params
  // The next '=' is remembered, so a URL of many '='-less parameters is scanned once, not once per parameter.
  let eq = -1
  for (let pos = q + 1; pos <= end; ) {
    let amp = url.indexOf('&', pos)
    if (amp < 0 || amp > end) amp = end
    if (eq < pos) {
      const found = url.indexOf('=', pos)
      eq = found < 0 ? Infinity : found
    }
    const nameEnd = eq < amp ? eq : amp
    const name = url.slice(pos, nameEnd)
    if (name !== '') {
      const spans = params.get(name) ?? []
      spans.push({ start: nameEnd === amp ? amp : nameEnd + 1, end: amp })
      params.set(name, spans)
    }
    pos = amp + 1
  }
  return params
}

type FieldRule = { what: string; lengths: (n: number) => boolean; expected: string }

const RULES = {
  picc: { what: 'PICCData', lengths: (n) => n === 32 || n === 48, expected: '32 (AES) or 48 (LRP)' },
  mac: { what: 'the SDMMAC', lengths: (n) => n === MAC_LENGTH, expected: '16' },
  enc: {
    what: 'the encrypted file data',
    lengths: (n) => n > 0 && n % 32 === 0 && n <= MAX_ENC_FILE_DATA_HEX_LENGTH,
    expected: `a multiple of 32 (whole 16-byte blocks) up to ${MAX_ENC_FILE_DATA_HEX_LENGTH}`,
  },
  uid: { what: 'the mirrored UID', lengths: (n) => n === 14, expected: '14' },
  ctr: { what: 'the mirrored counter', lengths: (n) => n === 6, expected: '6' },
} satisfies Record<string, FieldRule>

function paramProblem(url: string, span: Span, name: string, rule: FieldRule): string | null {
  const value = url.slice(span.start, span.end)
  const where = `(parameter ${name})`
  const bad = hexProblem(value, rule.what, where)
  if (bad && !HEX.test(value)) return bad
  if (!rule.lengths(value.length))
    return `${rule.what} ${where} is ${value.length} hex characters, not ${rule.expected}: a truncated URL or the wrong parameter`
  return bad
}

function byParams(url: string, layout: SunParamLayout | undefined): ExtractSunFieldsReturnType {
  const params = queryParams(url)
  const has = (name: string): boolean => params.has(name)
  const wanted = layout ? [layout.piccParam, layout.macParam, layout.encParam ?? ''] : ['e', 'c', 'd', 'picc_data', 'cmac', 'enc', 'uid', 'ctr']
  for (const name of wanted) {
    const count = params.get(name)?.length ?? 0
    if (count > 1) return malformed(`parameter ${name} appears ${count} times: a chip writes each field once`)
  }
  const one = (name: string): Span | undefined => params.get(name)?.[0]

  if (layout) return sunFromParams(url, one, layout)
  for (const d of DEFAULT_PARAM_LAYOUTS)
    if (has(d.piccParam) && has(d.macParam))
      return sunFromParams(url, one, { piccParam: d.piccParam, macParam: d.macParam, encParam: has(d.encParam) ? d.encParam : undefined })

  const uid = one('uid')
  const ctr = one('ctr')
  const cmac = one('cmac')
  if (uid && ctr && cmac) return plainMirrorFromParams(url, uid, ctr, cmac)
  if ((uid || ctr) && !cmac) return ntag21xFromParams(url, uid, ctr)

  for (const d of DEFAULT_PARAM_LAYOUTS)
    if (has(d.piccParam)) return malformed(`missing parameter ${d.macParam} (the SDMMAC): the URL has ${d.piccParam} but no ${d.macParam}; a truncated URL?`)
  if (cmac) return malformed(`missing parameter ${uid ? 'ctr' : ctr ? 'uid' : 'picc_data'}: the URL has cmac but not the fields it authenticates`)
  if (has('c'))
    return malformed('missing parameter e (PICCData): the URL has c but no e; if the chip uses other names (a Bolt Card uses p), give them')
  return malformed(
    'no SUN parameters in the URL: expected e and c (optionally d), picc_data and cmac (optionally enc), or uid, ctr and cmac; for another layout give the parameter names or the SDM offsets the chip was programmed with',
  )
}

function sunFromParams(url: string, one: (name: string) => Span | undefined, layout: SunParamLayout): ExtractSunFieldsReturnType {
  const picc = one(layout.piccParam)
  if (!picc) return malformed(`missing parameter ${layout.piccParam} (PICCData)`)
  const mac = one(layout.macParam)
  if (!mac) return malformed(`missing parameter ${layout.macParam} (the SDMMAC): a truncated URL?`)
  const enc = layout.encParam === undefined ? undefined : one(layout.encParam)
  if (layout.encParam !== undefined && !enc) return malformed(`missing parameter ${layout.encParam} (the encrypted file data)`)

  const problem =
    paramProblem(url, picc, layout.piccParam, RULES.picc) ??
    (enc ? paramProblem(url, enc, layout.encParam!, RULES.enc) : null) ??
    paramProblem(url, mac, layout.macParam, RULES.mac)
  if (problem) return malformed(problem)

  let macInput = ''
  if (enc) {
    if (mac.start < enc.start)
      return malformed(
        `parameter ${layout.macParam} (the SDMMAC) comes before ${layout.encParam} (the file data): the chip MACs from the file data up to the MAC, so for this layout give the chip's SDM offsets`,
      )
    // From the file data's first character up to and including `&<mac>=`: what the chip MACs when SDMMACInputOffset = SDMENCOffset.
    macInput = url.slice(enc.start, mac.start)
  }
  return {
    ok: true,
    kind: 'sun',
    piccData: url.slice(picc.start, picc.end),
    encFileData: enc ? url.slice(enc.start, enc.end) : null,
    sdmmac: url.slice(mac.start, mac.end),
    macInput,
  }
}

function plainMirrorFromParams(url: string, uid: Span, ctr: Span, cmac: Span): ExtractSunFieldsReturnType {
  const problem = paramProblem(url, uid, 'uid', RULES.uid) ?? paramProblem(url, ctr, 'ctr', RULES.ctr) ?? paramProblem(url, cmac, 'cmac', RULES.mac)
  if (problem) return malformed(problem)
  const at = (s: Span) => url.slice(s.start, s.end)
  return { ok: true, kind: 'plain_mirror', uid: at(uid), ctr: at(ctr), cmac: at(cmac), macInput: '' }
}

function ntag21xFromParams(url: string, uidSpan: Span | undefined, ctrSpan: Span | undefined): ExtractSunFieldsReturnType {
  let uid: string | null = null
  let counterHex: string | null = null
  if (uidSpan) {
    // The chip writes `UIDxCOUNTER` when it mirrors both into one place.
    const value = url.slice(uidSpan.start, uidSpan.end)
    const m = /^([0-9A-Fa-f]{14})(?:[xX]([0-9A-Fa-f]{6}))?$/.exec(value)
    if (!m) return malformed(`the uid parameter is neither a UID mirror (14 hex characters) nor UID x counter: ${preview(value)}`)
    uid = m[1]!
    counterHex = m[2] ?? null
  }
  if (ctrSpan) {
    if (counterHex !== null) return malformed('the counter is mirrored twice: in the uid parameter (UID x counter) and in ctr')
    const problem = paramProblem(url, ctrSpan, 'ctr', RULES.ctr)
    if (problem) return malformed(problem)
    counterHex = url.slice(ctrSpan.start, ctrSpan.end)
  }
  if (/[a-f]/.test(`${uid ?? ''}${counterHex ?? ''}`)) return malformed(`the NTAG 21x mirror is lower-case hex: ${LOWER_CASED}`)
  return {
    ok: true,
    kind: 'ntag21x',
    uid,
    counter: counterHex === null ? null : Number.parseInt(counterHex, 16),
    authenticated: false,
  }
}

// ---- SDM offsets -------------------------------------------------------------------

type Field = { what: string; setting: string; offset: number; length: number }

/** Reads the chip's mode from the layout (the next field starts right after PICCData) or the URL (the PICCData hex run). */
function modeEvidence(url: string, l: SunOffsetLayout, index: (offset: number) => number): { mode: SunMode; why: string } | null {
  const next = [l.encOffset, l.macOffset].filter((o): o is number => o !== undefined)
  for (const mode of ['aes', 'lrp'] as const) {
    const length = PICC_LENGTH[mode]
    if (next.includes(l.piccOffset + length)) return { mode, why: `the next field starts ${length} characters after PICCDataOffset` }
  }
  const run = hexRunLength(url, index(l.piccOffset))
  for (const mode of ['aes', 'lrp'] as const)
    if (run === PICC_LENGTH[mode]) return { mode, why: `the hex at PICCDataOffset runs ${run} characters` }
  return null
}

/** A hint for a field whose characters are not hex: the nearest hex run of its length, as an offset the operator can compare. */
function nearbyRunHint(url: string, field: Field, index: number, prefix: NdefUriPrefix): string {
  let best: number | null = null
  for (let delta = 1; delta <= 12 && best === null; delta++)
    for (const j of [index - delta, index + delta])
      if (j >= 0 && (j === 0 || !isHexAt(url, j - 1)) && hexRunLength(url, j) >= field.length) {
        best = j - index
        break
      }
  if (best === null) return 'check the offsets the chip was programmed with against the URL'
  const prefixShifts = [0, 1, 2, 3, 4].map((c) => Math.abs(NDEF_URI_PREFIXES[c]!.length - prefix.prefix.length))
  const byPrefix = prefixShifts.includes(Math.abs(best)) ? `, or the record's URI identifier code not ${describeUriPrefix(prefix)}` : ''
  const where = `${Math.abs(best)} ${best > 0 ? 'after' : 'before'} ${field.setting} ${field.offset}`
  return `a run of ${field.length} hex characters starts at offset ${field.offset + best} (${where}): is the offset wrong${byPrefix}?`
}

function byOffsets(url: string, l: SunOffsetLayout): ExtractSunFieldsReturnType {
  const prefix = ndefUriPrefix(url, l.uriPrefixCode)
  if (!prefix) {
    const expected = NDEF_URI_PREFIXES[l.uriPrefixCode!]!
    return malformed(`the URL does not start with ${JSON.stringify(expected)}, the prefix URI identifier code ${describeUriPrefix({ code: l.uriPrefixCode!, prefix: expected })} stands for`)
  }
  // NDEF file offset → index in the URL: the file holds 7 header bytes, then the URI without its abbreviated prefix.
  const index = (offset: number): number => offset - NDEF_URI_TEXT_OFFSET + prefix.prefix.length
  const urlEnd = url.length + NDEF_URI_TEXT_OFFSET - prefix.prefix.length

  const settings: [string, number | undefined][] = [
    ['PICCDataOffset', l.piccOffset],
    ['SDMENCOffset', l.encOffset],
    ['SDMMACInputOffset', l.macInputOffset],
    ['SDMMACOffset', l.macOffset],
  ]
  for (const [setting, offset] of settings)
    if (offset !== undefined && offset < NDEF_URI_TEXT_OFFSET)
      return malformed(`${setting} ${offset} is inside the NDEF record header: the URI text of a short URI record starts at byte ${NDEF_URI_TEXT_OFFSET}`)

  const evidence = modeEvidence(url, l, index)
  if (l.mode && evidence && evidence.mode !== l.mode)
    return {
      ok: false,
      reason: 'mode_mismatch',
      detail: `the layout is for ${l.mode.toUpperCase()} mode, but ${evidence.why}, the ${evidence.mode.toUpperCase()} PICCData length: the chip's secure messaging mode and the profile disagree`,
    }
  const mode = l.mode ?? evidence?.mode ?? 'aes'

  const picc: Field = { what: 'PICCData', setting: 'PICCDataOffset', offset: l.piccOffset, length: PICC_LENGTH[mode] }
  const mac: Field = { what: 'the SDMMAC', setting: 'SDMMACOffset', offset: l.macOffset, length: MAC_LENGTH }
  const enc: Field | null =
    l.encOffset === undefined ? null : { what: 'the encrypted file data', setting: 'SDMENCOffset', offset: l.encOffset, length: l.encLength! }
  const fields = enc ? [picc, enc, mac] : [picc, mac]

  if (l.macInputOffset > l.macOffset)
    return malformed(`SDMMACInputOffset ${l.macInputOffset} is after SDMMACOffset ${l.macOffset}: the MAC input runs up to the MAC, so it must start at or before it`)
  for (let i = 0; i < fields.length; i++)
    for (let j = i + 1; j < fields.length; j++) {
      const a = fields[i]!
      const b = fields[j]!
      if (a.offset < b.offset + b.length && b.offset < a.offset + a.length)
        return malformed(
          `${a.what} (${a.setting} ${a.offset}, ${a.length} characters) and ${b.what} (${b.setting} ${b.offset}, ${b.length} characters) overlap: no chip can be programmed so; check the offsets${a === picc ? ` and the mode (${mode.toUpperCase()})` : ''}`,
        )
    }

  // In URL order, each field whole before the next: a shifted offset (or URI identifier code) then shows
  // as the first field's characters, with the nearby-run hint, rather than as the last one running off the end.
  for (const f of [...fields].sort((a, b) => a.offset - b.offset)) {
    if (index(f.offset + f.length) > url.length)
      return malformed(
        `${f.what} at ${f.setting} ${f.offset} needs ${f.length} characters, up to offset ${f.offset + f.length}, but the URL ends at offset ${urlEnd}: a truncated URL or a wrong offset (offsets count the NDEF file: the URI text starts at byte ${NDEF_URI_TEXT_OFFSET}, after the prefix abbreviated by ${describeUriPrefix(prefix)})`,
      )
    const value = url.slice(index(f.offset), index(f.offset + f.length))
    const problem = hexProblem(value, f.what, `at ${f.setting} ${f.offset}`)
    if (problem) return malformed(HEX.test(value) ? problem : `${problem}; ${nearbyRunHint(url, f, index(f.offset), prefix)}`)
  }

  const at = (f: Field): string => url.slice(index(f.offset), index(f.offset + f.length))
  return {
    ok: true,
    kind: 'sun',
    piccData: at(picc),
    encFileData: enc ? at(enc) : null,
    sdmmac: at(mac),
    macInput: url.slice(index(l.macInputOffset), index(l.macOffset)),
  }
}
