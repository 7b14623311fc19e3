import { timingSafeEqual } from 'node:crypto'

/**
 * Constant-time MAC comparison. `timingSafeEqual` throws on unequal lengths,
 * which would turn a truncated MAC into an exception (a 500) and leak the length
 * through a different code path; instead the expected MAC is compared with itself
 * so the work done is the same, and the length check decides.
 *
 * @example
 * macEquals(Buffer.from('94EED9EE65337086', 'hex'), received) // true only for the same 8 bytes
 */
export function macEquals(expected: Uint8Array, received: Uint8Array): boolean {
  const sameLength = expected.length === received.length
  const equal = timingSafeEqual(expected, sameLength ? received : expected)
  return sameLength && equal
}
