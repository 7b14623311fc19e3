import { checkSunLayout, SunLayoutError, type SunLayout, type SunMode } from '../../sun/index.js'
import { UsageError, type Flags } from '../usage.js'
import { text } from './context.js'

// The URL layout flags shared by `sun verify` and `profile create`: one parser, one set of rules.
const OFFSET_FLAGS = ['picc-offset', 'mac-input-offset', 'mac-offset', 'enc-offset', 'enc-length'] as const
const PARAM_FLAGS = ['picc-param', 'mac-param', 'enc-param'] as const

/** A byte offset as provisioning tools show it: decimal, or hex with 0x. */
export function offsetFlag(flags: Flags, name: string): number | undefined {
  const raw = text(flags, name)
  if (raw === undefined) return undefined
  if (/^\d{1,8}$/.test(raw)) return Number(raw)
  if (/^0x[0-9a-f]{1,6}$/i.test(raw)) return Number.parseInt(raw.slice(2), 16)
  throw new UsageError(`--${name} takes a byte offset, in decimal or hex with 0x`)
}

/** `--mode aes|lrp`, any case. */
export function modeFlag(flags: Flags): SunMode | undefined {
  const raw = text(flags, 'mode')
  if (raw === undefined) return undefined
  const mode = raw.toLowerCase()
  if (mode !== 'aes' && mode !== 'lrp') throw new UsageError('--mode is aes or lrp')
  return mode
}

/** The layout the flags describe: parameter names, SDM offsets, or undefined for the default names. */
export function layoutFrom(flags: Flags, mode?: SunMode): SunLayout | undefined {
  const names = PARAM_FLAGS.filter((n) => text(flags, n) !== undefined)
  const offsets = OFFSET_FLAGS.filter((n) => text(flags, n) !== undefined)
  const prefixCode = text(flags, 'uri-prefix-code')
  if (names.length > 0 && (offsets.length > 0 || prefixCode !== undefined))
    throw new UsageError('give parameter names (--picc-param …) or the SDM offsets (--picc-offset …), not both')
  let layout: SunLayout | undefined
  if (names.length > 0) {
    const piccParam = text(flags, 'picc-param')
    const macParam = text(flags, 'mac-param')
    if (piccParam === undefined || macParam === undefined) throw new UsageError('--picc-param and --mac-param go together (--enc-param is optional)')
    layout = { piccParam, macParam, encParam: text(flags, 'enc-param') }
  } else if (offsets.length > 0) {
    const missing = (['picc-offset', 'mac-input-offset', 'mac-offset'] as const).filter((n) => !offsets.includes(n))
    if (missing.length > 0)
      throw new UsageError(`with SDM offsets give --picc-offset, --mac-input-offset and --mac-offset (missing ${missing.map((n) => `--${n}`).join(', ')})`)
    if (offsets.includes('enc-offset') !== offsets.includes('enc-length')) throw new UsageError('--enc-offset and --enc-length go together')
    let uriPrefixCode: number | undefined
    if (prefixCode !== undefined) {
      if (!/^(0x)?[0-9a-f]{1,2}$/i.test(prefixCode)) throw new UsageError('--uri-prefix-code takes the URI identifier code in hex (e.g. 04)')
      uriPrefixCode = Number.parseInt(prefixCode.replace(/^0x/i, ''), 16)
    }
    layout = {
      piccOffset: offsetFlag(flags, 'picc-offset')!,
      macInputOffset: offsetFlag(flags, 'mac-input-offset')!,
      macOffset: offsetFlag(flags, 'mac-offset')!,
      encOffset: offsetFlag(flags, 'enc-offset'),
      encLength: offsetFlag(flags, 'enc-length'),
      mode,
      uriPrefixCode,
    }
  } else if (prefixCode !== undefined) throw new UsageError('--uri-prefix-code only applies with the SDM offsets')
  if (layout === undefined) return undefined
  try {
    return checkSunLayout(layout)
  } catch (error) {
    if (error instanceof SunLayoutError) throw new UsageError(error.message)
    throw error
  }
}

