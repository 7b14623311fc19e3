import { NDEF_URI_PREFIXES } from './ndefUriPrefix.js'
import type { SunMode } from './sunResult.js'

/**
 * Locates the SUN fields by query parameter name. Each value runs from after
 * `name=` to the next `&` or `#`.
 */
export type SunParamLayout = {
  /** The parameter holding PICCData (32 hex characters, AES; 48, LRP). */
  piccParam: string
  /** The parameter holding the SDMMAC (16 hex characters). */
  macParam: string
  /**
   * The parameter holding SDMENCFileData. Required in the URL when named. The MAC
   * input then runs from its first character up to and including `&<macParam>=`
   * (that is, to the MAC value), as the chip builds it when SDMMACInputOffset = SDMENCOffset.
   */
  encParam?: string
}

/**
 * Locates the SUN fields by the chip's own SDM file settings (NTAG 424 DNA
 * ChangeFileSettings), all counted in the NDEF file, where the URI text of a short
 * URI record starts at byte 7. Any layout a chip can be programmed with fits.
 */
export type SunOffsetLayout = {
  /** PICCDataOffset: 32 ASCII hex characters (AES) or 48 (LRP) from here. */
  piccOffset: number
  /** SDMMACInputOffset: the MAC input runs from here up to SDMMACOffset (exclusive); equal to it for an empty input. */
  macInputOffset: number
  /** SDMMACOffset: 16 ASCII hex characters from here. */
  macOffset: number
  /** SDMENCOffset, with {@link SunOffsetLayout.encLength}, when the chip mirrors encrypted file data. */
  encOffset?: number
  /** SDMENCLength: the mirrored ASCII characters, a positive multiple of 32. */
  encLength?: number
  /** The chip's mode; sets the PICCData length. Default: read from the layout and the URL, else AES. */
  mode?: SunMode
  /** The record's URI identifier code (0x00–0x23). Default: the longest of 0x01–0x04 the URL starts with, else 0x00. */
  uriPrefixCode?: number
}

/** Where a chip puts its SUN fields in the tap URL: parameter names or SDM offsets. */
export type SunLayout = SunParamLayout | SunOffsetLayout

/**
 * Thrown for a layout no chip could have, whatever the URL: a non-integer offset,
 * an offset without its partner, names mixed with offsets. A configuration
 * mistake, so an exception rather than a verification result (compare InvalidKeyError).
 */
export class SunLayoutError extends Error {
  override name = 'SunLayoutError'
}

const PARAM_KEYS = ['piccParam', 'macParam', 'encParam'] as const
const OFFSET_KEYS = ['piccOffset', 'macInputOffset', 'macOffset', 'encOffset', 'encLength', 'mode', 'uriPrefixCode'] as const
/** SDM offsets are 3-byte fields. */
const MAX_OFFSET = 0xffffff

/**
 * Tells the two layout kinds apart.
 *
 * @example
 * isSunOffsetLayout({ piccOffset: 32, macInputOffset: 67, macOffset: 67 }) // true
 */
export function isSunOffsetLayout(layout: SunLayout): layout is SunOffsetLayout {
  return 'piccOffset' in layout
}

function checkParamName(value: unknown, key: string): void {
  // A name with a separator in it could never match a parameter the chip's URL carries.
  if (typeof value !== 'string' || value === '' || /[&=#?]/.test(value))
    throw new SunLayoutError(`${key} must be a parameter name (not empty, without & = # ?)`)
}

function checkOffset(value: unknown, key: string): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_OFFSET)
    throw new SunLayoutError(`${key} must be an integer byte offset 0…${MAX_OFFSET}`)
}

/**
 * Checks that a layout is well-formed before it is stored in a chip profile or
 * used: the right fields for its kind, integer offsets, the file data offset and
 * length together. Where the fields fall in a URL is checked per tap by extractSunFields.
 *
 * @returns the layout
 * @throws SunLayoutError when the layout is not well-formed
 * @example
 * checkSunLayout({ piccParam: 'p', macParam: 'c' })
 * checkSunLayout({ piccOffset: 32, macInputOffset: 67 }) // throws: macOffset missing
 */
export function checkSunLayout<T extends SunLayout>(layout: T): T {
  if (typeof layout !== 'object' || layout === null) throw new SunLayoutError('a layout is an object of parameter names or SDM offsets')
  const keys = Object.keys(layout).filter((k) => (layout as Record<string, unknown>)[k] !== undefined)
  const names = keys.filter((k) => (PARAM_KEYS as readonly string[]).includes(k))
  const offsets = keys.filter((k) => (OFFSET_KEYS as readonly string[]).includes(k))
  const unknown = keys.filter((k) => !names.includes(k) && !offsets.includes(k))
  if (unknown.length > 0) throw new SunLayoutError(`unknown layout field ${unknown[0]}`)
  if (names.length > 0 && offsets.length > 0)
    throw new SunLayoutError('give parameter names or SDM offsets, not both: with offsets the names play no part')

  if (names.length > 0) {
    const l = layout as SunParamLayout
    checkParamName(l.piccParam, 'piccParam')
    checkParamName(l.macParam, 'macParam')
    if (l.encParam !== undefined) checkParamName(l.encParam, 'encParam')
    const given = [l.piccParam, l.macParam, l.encParam].filter((n) => n !== undefined)
    if (new Set(given).size !== given.length) throw new SunLayoutError('the PICCData, MAC and file data parameters must have different names')
    return layout
  }

  const l = layout as SunOffsetLayout
  checkOffset(l.piccOffset, 'piccOffset')
  checkOffset(l.macInputOffset, 'macInputOffset')
  checkOffset(l.macOffset, 'macOffset')
  if ((l.encOffset === undefined) !== (l.encLength === undefined))
    throw new SunLayoutError('encOffset and encLength go together (SDMENCOffset and SDMENCLength)')
  if (l.encOffset !== undefined) {
    checkOffset(l.encOffset, 'encOffset')
    if (typeof l.encLength !== 'number' || !Number.isInteger(l.encLength) || l.encLength <= 0 || l.encLength % 32 !== 0)
      throw new SunLayoutError('encLength (SDMENCLength) must be a positive multiple of 32: the chip mirrors whole 16-byte blocks as hex')
  }
  if (l.mode !== undefined && l.mode !== 'aes' && l.mode !== 'lrp') throw new SunLayoutError(`mode must be 'aes' or 'lrp'`)
  if (l.uriPrefixCode !== undefined && (!Number.isInteger(l.uriPrefixCode) || NDEF_URI_PREFIXES[l.uriPrefixCode] === undefined))
    throw new SunLayoutError(`uriPrefixCode must be a URI identifier code 0x00–0x${(NDEF_URI_PREFIXES.length - 1).toString(16)}`)
  return layout
}
