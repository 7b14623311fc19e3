/**
 * Byte helpers shared by the NTAG 424 DNA command layer. Every multi-byte
 * integer the chip sends or receives is little endian (offsets, lengths,
 * CmdCtr), except LRP's EncCtr, which secureMessaging handles itself.
 */

/**
 * Copies bytes into a fresh Buffer (never a view: callers may keep or wipe it).
 *
 * @example
 * bytes(Uint8Array.of(1, 2)) // <01 02>
 */
export function bytes(input: Uint8Array): Buffer {
  return Buffer.from(input)
}

/**
 * Rotates left by one byte, as the authentication protocols turn RndA into RndA' and RndB into RndB'.
 *
 * @example
 * rotateLeft1(Buffer.from('B9E2FC78', 'hex')) // E2FC78B9
 */
export function rotateLeft1(input: Uint8Array): Buffer {
  return Buffer.concat([input.subarray(1), input.subarray(0, 1)])
}

/**
 * XOR of two equal-length byte strings.
 *
 * @throws RangeError on different lengths: a short operand would silently leave bytes un-XORed
 * @example
 * xorBytes(Buffer.from('0F', 'hex'), Buffer.from('F0', 'hex')) // FF
 */
export function xorBytes(a: Uint8Array, b: Uint8Array): Buffer {
  if (a.length !== b.length) throw new RangeError(`XOR of ${a.length} and ${b.length} bytes`)
  const out = Buffer.allocUnsafe(a.length)
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!
  return out
}

/**
 * A 3-byte little-endian field (file offsets, lengths, SDM offsets).
 *
 * @throws RangeError when the value is not an integer 0…0xFFFFFF
 * @example
 * u24le(0x43) // 43 00 00
 */
export function u24le(value: number, what = 'value'): Buffer {
  if (!Number.isInteger(value) || value < 0 || value > 0xffffff) throw new RangeError(`${what} must be an integer 0…16777215 (3 bytes)`)
  const out = Buffer.alloc(3)
  out.writeUIntLE(value, 0, 3)
  return out
}

/**
 * A 2-byte little-endian field (CmdCtr in every MAC and IV).
 *
 * @example
 * u16le(2) // 02 00
 */
export function u16le(value: number): Buffer {
  const out = Buffer.alloc(2)
  out.writeUInt16LE(value, 0)
  return out
}

/**
 * Checks a byte-string argument's type and length, so a hex string or a short
 * buffer fails with a clear message instead of deep inside a cipher.
 *
 * @throws RangeError when `input` is not a Uint8Array of `length` bytes
 * @example
 * fixedBytes(rndA, 16, 'RndA')
 */
export function fixedBytes(input: Uint8Array, length: number, what: string): Buffer {
  if (!(input instanceof Uint8Array) || input.length !== length) throw new RangeError(`${what} must be ${length} bytes`)
  return Buffer.from(input)
}

/**
 * Checks a key or file number against its range.
 *
 * @throws RangeError when not an integer in [min, max]
 * @example
 * checkByte(2, 'keyNo', 0, 4)
 */
export function checkByte(value: number, what: string, min = 0, max = 0xff): number {
  if (!Number.isInteger(value) || value < min || value > max) throw new RangeError(`${what} must be an integer ${min}…${max}`)
  return value
}
