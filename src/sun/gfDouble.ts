/**
 * Multiplies a 128-bit block by x in GF(2^128) mod x^128 + x^7 + x^2 + x + 1
 * (big-endian bit order). This is the subkey step of AES-CMAC (RFC 4493) and,
 * applied twice, CMAC_LRP's ×4 subkey (AN12304).
 *
 * Branch-free on the top bit so subkey derivation leaks nothing through timing.
 *
 * @example
 * gfDouble(Buffer.from('7DF76B0C1AB899B33E42F047B91B546F', 'hex')) // FBEED618357133667C85E08F7236A8DE
 */
export function gfDouble(block: Uint8Array, out: Uint8Array = Buffer.allocUnsafe(16)): Uint8Array {
  const carry = block[0]! >>> 7
  for (let i = 0; i < 15; i++) out[i] = ((block[i]! << 1) | (block[i + 1]! >>> 7)) & 0xff
  out[15] = ((block[15]! << 1) & 0xff) ^ (0x87 & -carry)
  return out
}
