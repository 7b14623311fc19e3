import { crc32 } from 'node:zlib'

/**
 * CRC32NK, the checksum ChangeKey appends to a new key for keys 1–4
 * (NT4H2421Gx Table 63): the reflected IEEE 802.3 CRC-32 (polynomial EDB88320,
 * initial value FFFFFFFF) **without the final XOR**, written least significant
 * byte first. The data sheet's wording ("IEEE 802.3 FCS") suggests the standard
 * CRC-32; the standard one's complement is what AN12196 Table 26 and real chips use.
 * node:zlib's crc32 applies the final XOR, so undoing it gives the value.
 *
 * @example
 * crc32nk(Buffer.from('F3847D627727ED3BC9C4CC050489B966', 'hex')) // 789DFADC (AN12196 Table 26)
 * crc32nk(Buffer.alloc(16)) // AAB44413 (what a reset to the factory key sends)
 */
export function crc32nk(data: Uint8Array): Buffer {
  const out = Buffer.alloc(4)
  out.writeUInt32LE(~crc32(data) >>> 0, 0)
  return out
}
