/** The fields of decrypted PICCData (NTAG 424 DNA datasheet §9.3.4). */
export type PiccFields = {
  /** PICCDataTag: bit 7 UID mirrored, bit 6 SDMReadCtr mirrored, bits 3–0 UID length. */
  tag: number
  /** The 7-byte UID, or null when not mirrored. */
  uid: Buffer | null
  /** SDMReadCtr (stored least significant byte first), or null when not mirrored. */
  counter: number | null
}

/**
 * Reads PICCDataTag ‖ [UID] ‖ [SDMReadCtr] from decrypted PICCData. The tag is the
 * only redundancy in the plaintext, so it is checked strictly: RFU bits clear, at
 * least one field mirrored, UID length 7 when the UID is mirrored (the only length
 * NTAG 424 DNA has) and 0 when it is not. Anything else means the wrong key, or not a SUN message.
 *
 * @returns the fields, or null when the tag is not one a chip writes
 * @example
 * parsePiccData(Buffer.from('C704DE5F1EACC0403D0000DA5CF60941', 'hex')) // { tag: 0xC7, uid: 04DE5F1EACC040, counter: 61 }
 */
export function parsePiccData(plain: Uint8Array): PiccFields | null {
  const tag = plain[0]
  if (tag === undefined || (tag & 0x30) !== 0) return null
  const hasUid = (tag & 0x80) !== 0
  const hasCounter = (tag & 0x40) !== 0
  const uidLength = tag & 0x0f
  if (!hasUid && !hasCounter) return null
  if (uidLength !== (hasUid ? 7 : 0)) return null
  let pos = 1
  let uid: Buffer | null = null
  if (hasUid) {
    uid = Buffer.from(plain.subarray(1, 8))
    pos = 8
  }
  let counter: number | null = null
  if (hasCounter) {
    if (plain.length < pos + 3) return null
    counter = plain[pos]! | (plain[pos + 1]! << 8) | (plain[pos + 2]! << 16)
  }
  return { tag, uid, counter }
}

/**
 * Writes [UID] ‖ [SDMReadCtr, least significant byte first] at `offset`, the layout
 * shared by PICCData and the SDM session vectors.
 *
 * @returns the offset after the last byte written
 * @example
 * writePiccFields(sv, 6, uid, 61) // 22: 04DE5F1EACC040 3D0000
 */
export function writePiccFields(target: Buffer, offset: number, uid: Uint8Array | null, counter: number | null): number {
  let pos = offset
  if (uid) {
    target.set(uid, pos)
    pos += uid.length
  }
  if (counter !== null) {
    target[pos] = counter & 0xff
    target[pos + 1] = (counter >>> 8) & 0xff
    target[pos + 2] = (counter >>> 16) & 0xff
    pos += 3
  }
  return pos
}
