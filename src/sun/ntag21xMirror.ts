/**
 * An NTAG 21x ASCII mirror. These chips mirror their UID and NFC counter as
 * plain hex with no MAC, so anyone can forge one: callers must record such taps
 * as unauthenticated.
 */
export type Ntag21xMirror = {
  /** 14 uppercase hex characters, or null when only the counter is mirrored. */
  uid: string | null
  /** The 24-bit NFC counter, or null when only the UID is mirrored. */
  counter: number | null
  authenticated: false
}

const UID = '([0-9A-Fa-f]{14})'
const COUNTER = '([0-9A-Fa-f]{6})'
// The chip inserts 'x' (78h) between UID and counter; 'X' only appears if the URL was upper-cased on the way.
const MIRROR = new RegExp(`^(?:${UID}[xX]${COUNTER}|${UID}|${COUNTER})$`)

/**
 * Parses an NTAG 21x mirror: a UID mirror (14 hex), a counter mirror (6 hex,
 * most significant first) or both as `UIDxCOUNTER` (NTAG213/215/216 data sheet §8.7).
 *
 * @returns the fields, or null when the text is none of the three forms
 * @example
 * parseNtag21xMirror('04E141124C2880x003F31') // { uid: '04E141124C2880', counter: 16177, authenticated: false }
 */
export function parseNtag21xMirror(text: string): Ntag21xMirror | null {
  if (typeof text !== 'string') return null
  const m = MIRROR.exec(text)
  if (!m) return null
  const uid = m[1] ?? m[3]
  const counter = m[2] ?? m[4]
  return {
    uid: uid === undefined ? null : uid.toUpperCase(),
    counter: counter === undefined ? null : Number.parseInt(counter, 16),
    authenticated: false,
  }
}

/**
 * Formats the ASCII an NTAG 21x chip mirrors, e.g. to build test URLs.
 *
 * @throws RangeError on a UID that is not 7 bytes of hex or a counter outside 0…0xFFFFFF
 * @example
 * formatNtag21xMirror({ uid: '04E141124C2880', counter: 16177 }) // '04E141124C2880x003F31'
 */
export function formatNtag21xMirror(p: { uid?: string | null; counter?: number | null }): string {
  const parts: string[] = []
  if (p.uid !== undefined && p.uid !== null) {
    if (!/^[0-9A-Fa-f]{14}$/.test(p.uid)) throw new RangeError('uid must be 14 hex characters')
    parts.push(p.uid.toUpperCase())
  }
  if (p.counter !== undefined && p.counter !== null) {
    if (!Number.isInteger(p.counter) || p.counter < 0 || p.counter > 0xffffff) throw new RangeError('counter must be 0…0xFFFFFF')
    parts.push(p.counter.toString(16).toUpperCase().padStart(6, '0'))
  }
  if (parts.length === 0) throw new RangeError('give a uid, a counter or both')
  return parts.join('x')
}
