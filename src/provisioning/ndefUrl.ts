import { NDEF_URI_PREFIXES, NDEF_URI_TEXT_OFFSET, ndefUriPrefix, type NdefUriPrefix } from '../sun/ndefUriPrefix.js'
import { checkSunLayout, type SunOffsetLayout } from '../sun/sunLayout.js'
import type { SunMode } from '../sun/sunResult.js'
import { NTAG424_FILES } from './apdu.js'
import { FileSettingsError, MIRROR_LENGTH, validateFileSettings, type AccessCondition, type AccessRights, type FileSettings, type SdmOffsets } from './fileSettings.js'

/*
 * The NDEF file for a URL template, and where the chip's mirrors sit in it.
 *
 * A template is the tap URL with placeholders where the chip writes its
 * dynamic fields (the same language as the virtual card's `url` option):
 * `{picc}` encrypted PICCData, `{enc}` encrypted file data, `{mac}` the SDM MAC,
 * `{uid}` and `{ctr}` a plain mirror, and `{macin}` (zero width) where the MAC
 * input starts. The file holds NLEN, one short URI record `D1 01 len 55 code`
 * and the URI without the prefix its identifier code abbreviates, so a
 * character at index i of the URL sits at byte `7 + i - prefix length` of the
 * file: the inverse of the mapping src/sun/extractSunFields applies to a
 * SunOffsetLayout. planNdefUrl produces the chip's offsets and the verifier's
 * layout from that one computation, so chip and gateway cannot disagree.
 */

export type NdefPlaceholder = 'picc' | 'enc' | 'mac' | 'macin' | 'uid' | 'ctr'
const PLACEHOLDERS: readonly NdefPlaceholder[] = ['picc', 'enc', 'mac', 'macin', 'uid', 'ctr']

/**
 * A template the chip cannot hold or mirror as written; the message says what to change.
 *
 * @example
 * planNdefUrl('https://example.com/?e={picc}') // throws NdefUrlError: the URL template needs {mac}
 */
export class NdefUrlError extends Error {
  override name = 'NdefUrlError'
}

export type NdefUrlOptions = {
  /** The chip's secure-messaging mode: PICCData is 32 characters in AES mode, 48 in LRP (default AES). */
  mode?: SunMode
  /** The URI identifier code; default the longest of 0x01–0x04 the URL starts with, else 0x00 (whole URI stored). */
  uriPrefixCode?: number
  /** SDMENCLength for `{enc}`: ASCII characters, a positive multiple of 32 (default 32: one 16-byte block). */
  encLength?: number
}

/** Everything the chip and the gateway need to agree on about one URL. */
export type NdefUrlPlan = {
  template: string
  mode: SunMode
  /** The URL as written to the chip: placeholders filled with `0`s of the mirror's width (the chip overwrites them per tap). */
  url: string
  uriPrefix: NdefUriPrefix
  /** The NDEF file to write: NLEN (2 bytes, big endian) ‖ the URI record. */
  ndefFile: Buffer
  /** The SDM offsets in the file, named as in FileSettings. */
  offsets: SdmOffsets
  /** The layout the gateway's verifier reads this chip's URLs with; null for a plain `{uid}`/`{ctr}` mirror (verified by parameter names). */
  sunLayout: SunOffsetLayout | null
}

type Token = { text: string } | { field: NdefPlaceholder }

function parseTemplate(template: string): Token[] {
  const tokens: Token[] = []
  const seen = new Set<string>()
  for (const part of template.split(/(\{[^{}]*\})/)) {
    if (part === '') continue
    const name = /^\{([^{}]*)\}$/.exec(part)?.[1]
    if (name === undefined) {
      if (/[{}]/.test(part)) throw new NdefUrlError(`the URL template has an unmatched brace in ${JSON.stringify(part)}`)
      tokens.push({ text: part })
      continue
    }
    if (!(PLACEHOLDERS as readonly string[]).includes(name))
      throw new NdefUrlError(`unknown placeholder {${name}} (known: ${PLACEHOLDERS.map((p) => `{${p}}`).join(' ')})`)
    if (seen.has(name)) throw new NdefUrlError(`the placeholder {${name}} appears twice: a chip mirrors each field once`)
    seen.add(name)
    tokens.push({ field: name as NdefPlaceholder })
  }
  return tokens
}

/**
 * The byte offset in the NDEF file of the URL character at `index`. The URL is
 * ASCII (planNdefUrl refuses anything else), so characters and bytes coincide.
 *
 * @example
 * ndefFileOffset(34, { code: 0, prefix: '' }) // 41: lnurlw://card.yourdomain.com/ln?p= is 34 characters (Bolt Card manual)
 */
export function ndefFileOffset(index: number, prefix: NdefUriPrefix): number {
  return NDEF_URI_TEXT_OFFSET + index - prefix.prefix.length
}

/**
 * Plans the NDEF file of a URL template: the URL with zero-filled placeholders,
 * the file bytes, the SDM offsets and the verifier's layout.
 *
 * @throws NdefUrlError for a template a chip cannot hold: non-ASCII or space characters,
 *   unknown or repeated placeholders, no `{mac}`, a prefix code the URL does not start
 *   with, a URL too long for the 256-byte file
 * @example
 * planNdefUrl('https://choose.url.com/ntag424?e={picc}&c={mac}')
 * // { offsets: { piccData: 32, macInput: 67, mac: 67 }, ndefFile: 0051D1014D5504…, … } (AN12196 Tables 15–17)
 */
export function planNdefUrl(template: string, options: NdefUrlOptions = {}): NdefUrlPlan {
  if (typeof template !== 'string' || template === '') throw new NdefUrlError('the URL template must be a non-empty string')
  // Printable ASCII only: the chip's offsets count bytes, the verifier's count characters, and phones may re-encode the rest.
  const bad = /[^\x21-\x7e]/.exec(template)
  if (bad) throw new NdefUrlError(`the URL template has ${JSON.stringify(bad[0])} at character ${bad.index + 1}: use printable ASCII (percent-encode anything else)`)
  const mode = options.mode ?? 'aes'
  if (mode !== 'aes' && mode !== 'lrp') throw new NdefUrlError(`mode must be 'aes' or 'lrp'`)
  const tokens = parseTemplate(template)
  const has = (f: NdefPlaceholder): boolean => tokens.some((t) => 'field' in t && t.field === f)
  if (!has('mac')) throw new NdefUrlError('the URL template needs {mac}: where the chip writes the SDM MAC')
  if (!has('picc') && !has('uid') && !has('ctr')) throw new NdefUrlError('the URL template needs {picc} (encrypted PICCData) or {uid}/{ctr} (a plain mirror)')
  if (has('picc') && (has('uid') || has('ctr'))) throw new NdefUrlError('give {picc} or the plain mirror {uid}/{ctr}, not both: the chip mirrors PICCData encrypted or in clear')
  const order = tokens.flatMap((t) => ('field' in t ? [t.field] : []))
  if (has('macin') && order.indexOf('macin') > order.indexOf('mac')) throw new NdefUrlError('{macin} (where the MAC input starts) must come before {mac}')
  const encLength = options.encLength ?? 32
  if (has('enc') && (!Number.isInteger(encLength) || encLength < 32 || encLength % 32 !== 0))
    throw new NdefUrlError('encLength must be a positive multiple of 32: the chip mirrors whole 16-byte blocks as hex')

  const width: Record<NdefPlaceholder, number> = {
    picc: MIRROR_LENGTH.piccData[mode],
    enc: has('enc') ? encLength : 0,
    mac: MIRROR_LENGTH.mac,
    macin: 0,
    uid: MIRROR_LENGTH.uid,
    ctr: MIRROR_LENGTH.readCtr,
  }
  let url = ''
  const at: Partial<Record<NdefPlaceholder, number>> = {}
  for (const t of tokens) {
    if ('text' in t) url += t.text
    else {
      at[t.field] = url.length
      url += '0'.repeat(width[t.field])
    }
  }

  // A phone (or, for lnurlw://, a Lightning wallet) opens the tap and the gateway reads it as a URL: a
  // template without a scheme and host would be written to the chip and never reach a verifier.
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/?#]+/i.test(url) || !URL.canParse(url))
    throw new NdefUrlError(`the URL template must be an absolute URL such as https://tap.example/t?e={picc}&c={mac} (lnurlw:// for a Bolt Card), got ${JSON.stringify(template.slice(0, 40))}`)

  let uriPrefix: NdefUriPrefix | null
  try {
    uriPrefix = ndefUriPrefix(url, options.uriPrefixCode)
  } catch (e) {
    throw new NdefUrlError((e as Error).message)
  }
  if (!uriPrefix) {
    const expected = JSON.stringify(NDEF_URI_PREFIXES[options.uriPrefixCode!])
    throw new NdefUrlError(`the URL does not start with ${expected}, the prefix of URI identifier code ${options.uriPrefixCode}`)
  }

  const uri = Buffer.from(url.slice(uriPrefix.prefix.length), 'ascii')
  const payloadLength = 1 + uri.length
  const nlen = 4 + payloadLength
  if (payloadLength > 255 || 2 + nlen > NTAG424_FILES.ndef.size)
    throw new NdefUrlError(`the URL is too long: its NDEF file needs ${2 + nlen} bytes, and the NTAG 424 DNA's holds ${NTAG424_FILES.ndef.size}`)
  const ndefFile = Buffer.alloc(2 + nlen)
  ndefFile.writeUInt16BE(nlen, 0)
  // One short URI record: MB ME SR, TNF 1 (well-known), type length 1, payload length, type 'U', identifier code.
  ndefFile.set([0xd1, 0x01, payloadLength, 0x55, uriPrefix.code], 2)
  ndefFile.set(uri, NDEF_URI_TEXT_OFFSET)

  const fileAt = (f: NdefPlaceholder): number | undefined => (at[f] === undefined ? undefined : ndefFileOffset(at[f]!, uriPrefix))
  // The MAC input starts at {macin}; by default at the file data (the chip requires SDMENCOffset ≥ SDMMACInputOffset), else it is empty.
  const macInput = fileAt('macin') ?? fileAt('enc') ?? fileAt('mac')!
  const offsets: SdmOffsets = {}
  if (has('uid')) offsets.uid = fileAt('uid')
  if (has('ctr')) offsets.readCtr = fileAt('ctr')
  if (has('picc')) offsets.piccData = fileAt('picc')
  offsets.macInput = macInput
  if (has('enc')) Object.assign(offsets, { encData: fileAt('enc'), encLength })
  offsets.mac = fileAt('mac')

  let sunLayout: SunOffsetLayout | null = null
  if (has('picc')) {
    sunLayout = { piccOffset: offsets.piccData!, macInputOffset: macInput, macOffset: offsets.mac!, mode, uriPrefixCode: uriPrefix.code }
    if (has('enc')) Object.assign(sunLayout, { encOffset: offsets.encData, encLength })
    checkSunLayout(sunLayout)
  }
  return { template, mode, url, uriPrefix, ndefFile, offsets, sunLayout }
}

export type SdmFileSettingsParameters = {
  /** SDMMetaRead: the key that encrypts PICCData (`{picc}`); a plain mirror uses E. */
  metaRead?: AccessCondition
  /** SDMFileRead: the key the SDM MAC (and `{enc}`) is computed with. */
  fileRead: AccessCondition
  /** SDMCtrRet: who may read the counter with GetFileCounters (default F, nobody). */
  ctrRet?: AccessCondition
  /** The file's access rights (default Read free, Write/ReadWrite/Change key 0: bytes `00 E0`). */
  accessRights?: AccessRights
  /** What `{picc}` carries (default both). */
  mirrorUid?: boolean
  mirrorCounter?: boolean
  /** SDMReadCtrLimit: taps before the chip stops mirroring (default none). */
  readCtrLimit?: number
}

/** Read free; Write, ReadWrite and Change with key 0 (AN12196 Table 19: `00 E0`). */
export const PROVISIONED_NDEF_ACCESS_RIGHTS: AccessRights = { read: 'E', write: '0', readWrite: '0', change: '0' }

/**
 * The NDEF file's settings for a planned URL: SDM on, plain, the plan's offsets,
 * checked against every data-sheet rule before they are returned.
 *
 * @throws FileSettingsError listing every broken rule (e.g. a plain mirror with a key for MetaRead)
 * @example
 * sdmFileSettings(planNdefUrl('https://choose.url.com/ntag424?e={picc}&c={mac}'), { metaRead: '2', fileRead: '1', ctrRet: '1' })
 * // encodes to 4000E0C1F121200000430000430000 (AN12196 Table 19)
 */
export function sdmFileSettings(plan: NdefUrlPlan, p: SdmFileSettingsParameters): FileSettings {
  const picc = plan.offsets.piccData !== undefined
  const metaRead = p.metaRead ?? (picc ? undefined : 'E')
  if (metaRead === undefined) throw new FileSettingsError(['{picc} needs metaRead: the key that encrypts PICCData'])
  const problems: string[] = []
  if (picc && (metaRead === 'E' || metaRead === 'F')) problems.push(`{picc} is encrypted PICCData: metaRead must be a key 0–4, not ${metaRead}`)
  if (!picc && metaRead !== 'E') problems.push(`a plain {uid}/{ctr} mirror needs metaRead E (free), not ${metaRead}`)
  if (!picc && (p.mirrorUid !== undefined || p.mirrorCounter !== undefined))
    problems.push('mirrorUid and mirrorCounter choose what {picc} carries; a plain mirror carries the {uid} and {ctr} its template names')
  if (problems.length > 0) throw new FileSettingsError(problems)
  const settings: FileSettings = {
    sdm: true,
    commMode: 'plain',
    accessRights: p.accessRights ?? PROVISIONED_NDEF_ACCESS_RIGHTS,
    sdmOptions: {
      uid: picc ? (p.mirrorUid ?? true) : plan.offsets.uid !== undefined,
      readCtr: picc ? (p.mirrorCounter ?? true) : plan.offsets.readCtr !== undefined,
      readCtrLimit: p.readCtrLimit !== undefined,
      encFileData: plan.offsets.encData !== undefined,
      ascii: true,
    },
    sdmAccessRights: { metaRead, fileRead: p.fileRead, ctrRet: p.ctrRet ?? 'F' },
    offsets: { ...plan.offsets },
  }
  if (p.readCtrLimit !== undefined) settings.readCtrLimit = p.readCtrLimit
  const broken = validateFileSettings(settings, { fileNo: NTAG424_FILES.ndef.fileNo, mode: plan.mode })
  if (broken.length > 0) throw new FileSettingsError(broken)
  return settings
}
