/**
 * Strict hex decoding. Node's own hex decoder silently stops at the first bad
 * character and ignores a trailing odd nibble, which would let a mangled URL
 * decode to a shorter, still "valid" buffer; every caller here needs to know.
 */

/**
 * Decodes `hex` (either case) into `target` at `offset`.
 *
 * @returns false when `hex` has an odd length, a non-hex character, or does not fit.
 * @example
 * const b = Buffer.alloc(2); decodeHexInto('BEEF', b) // true, b = <be ef>
 */
export function decodeHexInto(hex: string, target: Buffer, offset = 0): boolean {
  const bytes = hex.length >>> 1
  if ((hex.length & 1) !== 0 || offset + bytes > target.length) return false
  return target.write(hex, offset, bytes, 'hex') === bytes
}

/**
 * Decodes a hex string, optionally of an exact byte length.
 *
 * @returns the bytes, or null when the input is not strict hex of that length.
 * @example
 * parseHex('04DE5F1EACC040', 7) // <Buffer 04 de 5f 1e ac c0 40>
 */
export function parseHex(hex: string, byteLength?: number): Buffer | null {
  if (typeof hex !== 'string' || (hex.length & 1) !== 0) return null
  if (byteLength !== undefined && hex.length !== byteLength * 2) return null
  const out = Buffer.allocUnsafe(hex.length >>> 1)
  return decodeHexInto(hex, out) ? out : null
}

/**
 * Uppercase hex, the form NXP chips mirror and the vectors use.
 *
 * @example
 * toHex(Buffer.from([0x04, 0xde])) // '04DE'
 */
export function toHex(bytes: Uint8Array, start = 0, end = bytes.length): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex', start, end).toUpperCase()
}
