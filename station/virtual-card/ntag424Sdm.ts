/*
 * Secure Dynamic Messaging driven by the NDEF file's settings, as a chip does it:
 * the file holds whatever was written, and on each read the mirrors named by the
 * SDM options are written over it at their offsets (NT4H2421Gx §9.3). The crypto
 * is src/sun's generateSunMessage, the same code the gateway's verifier is tested
 * against.
 */
import type { FileSettings } from '../../src/provisioning/index.js'
import { generateSunMessage, NDEF_URI_PREFIXES, NDEF_URI_TEXT_OFFSET, toHex, type SunMode } from '../../src/sun/index.js'

export type SdmRenderContext = {
  uid: Buffer
  /** SDMReadCtr of this read (already incremented). */
  counter: number
  mode: SunMode
  /** The card's current key of that number. */
  key: (keyNo: number) => Buffer
  /** The chip's randomness for PICCData: padding, preceded in LRP mode by PICCRand. */
  random: (length: number) => Uint8Array
}

const isKey = (c: string | undefined): boolean => c !== undefined && c !== 'E' && c !== 'F'

/** How many random bytes PICCData takes for these options (0 when PICCData is not mirrored). */
export function piccRandomLength(settings: FileSettings, mode: SunMode): number {
  const o = settings.sdmOptions
  if (!settings.sdm || !o || !isKey(settings.sdmAccessRights?.metaRead)) return 0
  return (mode === 'lrp' ? 8 : 0) + 16 - 1 - (o.uid ? 7 : 0) - (o.readCtr ? 3 : 0)
}

/**
 * The file as one read serves it: a copy of `file` with the SDM mirrors written in.
 * Without SDM, the file unchanged. Past SDMReadCtrLimit the chip stops mirroring:
 * the file as stored.
 */
export function renderSdmFile(file: Buffer, settings: FileSettings, c: SdmRenderContext): Buffer {
  const out = Buffer.from(file)
  const o = settings.sdmOptions
  const ar = settings.sdmAccessRights
  const off = settings.offsets ?? {}
  if (!settings.sdm || !o || !ar) return out
  if (o.readCtrLimit && settings.readCtrLimit !== undefined && c.counter > settings.readCtrLimit) return out
  const put = (at: number | undefined, text: string): void => {
    if (at !== undefined) out.write(text, at, 'latin1')
  }
  const uidHex = toHex(c.uid)
  const ctrHex = c.counter.toString(16).toUpperCase().padStart(6, '0')
  const encrypted = isKey(ar.metaRead)
  if (ar.metaRead === 'E') {
    if (o.uid) put(off.uid, uidHex)
    if (o.readCtr) put(off.readCtr, ctrHex)
  }
  const mirrorsUid = o.uid && ar.metaRead !== 'F'
  const mirrorsCtr = o.readCtr && ar.metaRead !== 'F'
  if (!mirrorsUid && !mirrorsCtr) return out
  const macs = isKey(ar.fileRead)
  const encLength = o.encFileData && macs ? (off.encLength ?? 0) : 0
  const message = generateSunMessage({
    metaKey: encrypted ? c.key(Number(ar.metaRead)) : Buffer.alloc(16),
    fileKey: macs ? c.key(Number(ar.fileRead)) : Buffer.alloc(16),
    mode: c.mode,
    uid: mirrorsUid ? uidHex : null,
    counter: mirrorsCtr ? c.counter : null,
    // The chip encrypts the first half of the ENC window as it is stored, and writes its hex over the whole window.
    fileData: encLength > 0 ? toHex(file.subarray(off.encData!, off.encData! + encLength / 2)) : undefined,
    random: encrypted ? c.random(piccRandomLength(settings, c.mode)) : undefined,
    macInput: ({ piccData, encFileData }) => {
      if (encrypted) put(off.piccData, piccData)
      if (encFileData !== null) put(off.encData, encFileData)
      return macs ? out.subarray(off.macInput!, off.mac!).toString('latin1') : ''
    },
  })
  if (macs) put(off.mac, message.sdmmac)
  return out
}

/** The URL of an NDEF file holding one short URI record (what a phone opens); null for anything else. */
export function ndefFileUrl(file: Buffer): string | null {
  const nlen = file.readUInt16BE(0)
  if (nlen < 5 || 2 + nlen > file.length) return null
  if (file[2] !== 0xd1 || file[3] !== 0x01 || file[5] !== 0x55) return null
  const payloadLength = file[4]!
  const prefix = NDEF_URI_PREFIXES[file[6]!]
  if (prefix === undefined || 4 + payloadLength !== nlen) return null
  return prefix + file.subarray(NDEF_URI_TEXT_OFFSET, NDEF_URI_TEXT_OFFSET + payloadLength - 1).toString('latin1')
}
