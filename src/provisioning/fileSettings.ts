import type { SunMode } from '../sun/sunResult.js'
import { expectStatus, INS, nativeApdu, NTAG424_FILES } from './apdu.js'
import { checkByte, u24le } from './bytes.js'
import { SecureMessagingError } from './errors.js'
import type { Exchange, SecureSession } from './secureMessaging.js'
import type { CommMode } from './smCrypto.js'

/*
 * File settings (NT4H2421Gx §10.7, Tables 69–71): ChangeFileSettings' CmdData
 * and GetFileSettings' answer, with the Secure Dynamic Messaging block, and the
 * data sheet's consistency rules checked before anything reaches a chip.
 *
 * Byte order, the usual trap (research notes §1): AccessRights is a 16-bit value
 * Read|Write|ReadWrite|Change (high to low nibble) sent LSB first, so the bytes
 * are `RW<<4|Change, Read<<4|Write`; SDMAccessRights is MetaRead|FileRead|F|CtrRet,
 * so the bytes are `F<<4|CtrRet, MetaRead<<4|FileRead`. Offsets are 3 bytes, LSB first.
 */

/** An access condition nibble: a key number, `E` free, `F` never (NT4H2421Gx Table 6). */
export type AccessCondition = '0' | '1' | '2' | '3' | '4' | 'E' | 'F'

/** The four access rights of a file (Table 7). */
export type AccessRights = { read: AccessCondition; write: AccessCondition; readWrite: AccessCondition; change: AccessCondition }

/** SDMOptions (Table 69): what the chip mirrors. `ascii` must be true on NTAG 424 DNA. */
export type SdmOptions = { uid: boolean; readCtr: boolean; readCtrLimit: boolean; encFileData: boolean; ascii: boolean }

/**
 * SDMAccessRights: MetaRead (`E` plain UID/counter mirror, a key: encrypted
 * PICCData, `F` no mirror), FileRead (a key: the SDM MAC and file data key, `F`
 * no MAC), CtrRet (who may read the counter with GetFileCounters).
 */
export type SdmAccessRights = { metaRead: AccessCondition; fileRead: AccessCondition; ctrRet: AccessCondition }

/** The SDM offsets and lengths, counted in bytes from the start of the file (NLEN included). */
export type SdmOffsets = {
  /** UIDOffset (plain mirror, MetaRead E). */
  uid?: number
  /** SDMReadCtrOffset (plain mirror, MetaRead E). */
  readCtr?: number
  /** PICCDataOffset (MetaRead a key). */
  piccData?: number
  /** SDMMACInputOffset: the MAC covers the file from here up to SDMMACOffset. */
  macInput?: number
  /** SDMENCOffset and SDMENCLength (ASCII characters, a multiple of 32). */
  encData?: number
  encLength?: number
  /** SDMMACOffset: where the 16-character MAC goes. */
  mac?: number
}

/** A file's settings: what ChangeFileSettings sets and GetFileSettings reads (without file type and size). */
export type FileSettings = {
  /** FileOption bit 6: Secure Dynamic Messaging. */
  sdm: boolean
  /** FileOption bits 1–0: the file's communication mode. */
  commMode: CommMode
  accessRights: AccessRights
  /** Present exactly when `sdm` is. */
  sdmOptions?: SdmOptions
  sdmAccessRights?: SdmAccessRights
  offsets?: SdmOffsets
  /** SDMReadCtrLimit, with `sdmOptions.readCtrLimit`: taps allowed before the chip stops mirroring. */
  readCtrLimit?: number
}

/** GetFileSettings' answer decoded. */
export type DecodedFileSettings = { fileType: number; fileSize: number; settings: FileSettings }

/**
 * File settings that break the data sheet's rules, or bytes that are not a
 * valid settings record. `problems` lists every rule broken, in plain words
 * naming the field and the status word the chip would answer.
 *
 * @example
 * try { encodeFileSettings(s, { fileNo: 2, mode: 'aes' }) } catch (e) { if (e instanceof FileSettingsError) console.log(e.problems) }
 */
export class FileSettingsError extends Error {
  override name = 'FileSettingsError'
  readonly problems: readonly string[]

  constructor(problems: readonly string[]) {
    super(problems.length === 1 ? problems[0]! : `${problems.length} problems: ${problems.join('; ')}`)
    this.problems = problems
  }
}

const CONDITIONS: readonly AccessCondition[] = ['0', '1', '2', '3', '4', 'E', 'F']
const COMM_MODE_BITS: Record<CommMode, number> = { plain: 0b00, mac: 0b01, full: 0b11 }

/** ASCII characters each mirror occupies in the file (NT4H2421Gx §9.3). */
export const MIRROR_LENGTH = { uid: 14, readCtr: 6, mac: 16, piccData: { aes: 32, lrp: 48 } } as const

/** The factory settings of the NDEF file: plain, Read/Write/ReadWrite free, Change key 0, no SDM (Table 8; GetFileSettings `00 00 E0EE 000100`). */
export const FACTORY_NDEF_SETTINGS: FileSettings = {
  sdm: false,
  commMode: 'plain',
  accessRights: { read: 'E', write: 'E', readWrite: 'E', change: '0' },
}

function nibble(c: AccessCondition): number {
  return Number.parseInt(c, 16)
}

function condition(n: number, what: string, problems: string[]): AccessCondition {
  const c = n.toString(16).toUpperCase() as AccessCondition
  if (!CONDITIONS.includes(c)) problems.push(`${what} is ${c}h, an RFU access condition (valid: keys 0–4, E free, F never)`)
  return c
}

const isKey = (c: AccessCondition | undefined): boolean => c !== undefined && c !== 'E' && c !== 'F'

/** The SDM fields ChangeFileSettings carries for these options, in wire order (Table 69). */
type SdmField = 'uid' | 'readCtr' | 'piccData' | 'macInput' | 'encData' | 'encLength' | 'mac' | 'readCtrLimit'

function sdmFields(o: SdmOptions, ar: SdmAccessRights): SdmField[] {
  const fields: SdmField[] = []
  if (o.uid && ar.metaRead === 'E') fields.push('uid')
  if (o.readCtr && ar.metaRead === 'E') fields.push('readCtr')
  if (isKey(ar.metaRead)) fields.push('piccData')
  if (ar.fileRead !== 'F') {
    fields.push('macInput')
    if (o.encFileData) fields.push('encData', 'encLength')
    fields.push('mac')
  }
  if (o.readCtrLimit) fields.push('readCtrLimit')
  return fields
}

const FIELD_NAME: Record<SdmField, string> = {
  uid: 'UIDOffset',
  readCtr: 'SDMReadCtrOffset',
  piccData: 'PICCDataOffset',
  macInput: 'SDMMACInputOffset',
  encData: 'SDMENCOffset',
  encLength: 'SDMENCLength',
  mac: 'SDMMACOffset',
  readCtrLimit: 'SDMReadCtrLimit',
}

function fieldValue(s: FileSettings, f: SdmField): number | undefined {
  return f === 'readCtrLimit' ? s.readCtrLimit : s.offsets?.[f]
}

export type ValidateFileSettingsOptions = {
  /** The native file number: SDM is possible on file 02 only. */
  fileNo: number
  /** The chip's secure-messaging mode: PICCData is 32 ASCII characters in AES mode, 48 in LRP. */
  mode: SunMode
  /** The file's size (default: the NDEF file's 256 bytes). */
  fileSize?: number
}

/**
 * Every rule of NT4H2421Gx §10.7.1 and Table 71 the settings break, before they
 * are encoded: field presence for the options, ranges within the file, mirror
 * overlaps, option dependencies. An empty list means the chip will accept them.
 *
 * @example
 * validateFileSettings(settings, { fileNo: 2, mode: 'aes' }) // []
 * validateFileSettings({ ...settings, offsets: { piccData: 32, macInput: 40, mac: 40 } }, { fileNo: 2, mode: 'aes' })
 * // ['PICCData (PICCDataOffset 32, 32 characters) and the MAC (SDMMACOffset 40, 16 characters) overlap: …']
 */
export function validateFileSettings(s: FileSettings, o: ValidateFileSettingsOptions): string[] {
  const problems: string[] = []
  const fileSize = o.fileSize ?? NTAG424_FILES.ndef.size
  if (!(s.commMode in COMM_MODE_BITS)) problems.push(`commMode must be plain, mac or full`)
  const rights = s.accessRights ?? {}
  for (const [k, v] of Object.entries({ read: rights.read, write: rights.write, readWrite: rights.readWrite, change: rights.change }))
    if (!CONDITIONS.includes(v as AccessCondition)) problems.push(`access right ${k} must be a key 0–4, E (free) or F (never)`)
  if (rights.change === 'F') problems.push('Change access right F would freeze the settings forever; the chip refuses it (91 9D)')
  if (!s.sdm) {
    if (s.sdmOptions || s.sdmAccessRights || s.offsets || s.readCtrLimit !== undefined)
      problems.push('SDM is off: SDM options, access rights and offsets have no place in the settings')
    return problems
  }
  if (o.fileNo !== NTAG424_FILES.ndef.fileNo) problems.push(`SDM is possible on the NDEF file (02) only, not file ${o.fileNo}; the chip answers 91 9D`)
  const opt = s.sdmOptions
  const ar = s.sdmAccessRights
  if (!opt || !ar) {
    problems.push('SDM is on: sdmOptions and sdmAccessRights are required')
    return problems
  }
  for (const [k, v] of Object.entries(ar)) if (!CONDITIONS.includes(v as AccessCondition)) problems.push(`SDM access right ${k} must be a key 0–4, E or F`)
  if (!opt.ascii) problems.push('SDMOptions ASCII must be set: the NTAG 424 DNA mirrors ASCII hex only (binary encoding is RFU)')
  if (ar.metaRead !== 'F' && !opt.uid && !opt.readCtr) problems.push('MetaRead names a key or E, so the chip mirrors something: set the UID or SDMReadCtr option (91 9E otherwise)')
  if (ar.metaRead === 'F' && opt.uid) problems.push('MetaRead F mirrors nothing, so the UID option must be off (91 9E otherwise)')
  if (ar.ctrRet !== 'F' && !opt.readCtr) problems.push('CtrRet names a key or E, which needs the SDMReadCtr option (91 9E otherwise)')
  if (opt.encFileData && (ar.fileRead === 'F' || !opt.uid || !opt.readCtr))
    problems.push('SDMENCFileData needs FileRead to name a key and both the UID and SDMReadCtr options (91 9E otherwise)')
  if (opt.readCtrLimit && !opt.readCtr) problems.push('SDMReadCtrLimit needs the SDMReadCtr option (91 9E otherwise)')

  const wanted = sdmFields(opt, ar)
  for (const f of wanted)
    if (fieldValue(s, f) === undefined) problems.push(`${FIELD_NAME[f]} is missing: these options call for it (91 7E otherwise)`)
  const allFields: SdmField[] = ['uid', 'readCtr', 'piccData', 'macInput', 'encData', 'encLength', 'mac', 'readCtrLimit']
  for (const f of allFields)
    if (!wanted.includes(f) && fieldValue(s, f) !== undefined) problems.push(`${FIELD_NAME[f]} is given, but these options and access rights do not call for it (91 7E otherwise)`)
  for (const f of wanted) {
    const v = fieldValue(s, f)
    if (v !== undefined && (!Number.isInteger(v) || v < 0 || v > 0xffffff)) problems.push(`${FIELD_NAME[f]} must be an integer 0…16777215 (3 bytes)`)
  }
  if (problems.length > 0) return problems

  const off = s.offsets ?? {}
  const mirrors: { what: string; field: SdmField; offset: number; length: number }[] = []
  const add = (what: string, field: SdmField, length: number): void => {
    const offset = off[field as keyof SdmOffsets]
    if (wanted.includes(field) && offset !== undefined) mirrors.push({ what, field, offset, length })
  }
  add('the UID', 'uid', MIRROR_LENGTH.uid)
  add('SDMReadCtr', 'readCtr', MIRROR_LENGTH.readCtr)
  add('PICCData', 'piccData', MIRROR_LENGTH.piccData[o.mode])
  if (wanted.includes('encData')) {
    const len = off.encLength!
    if (len < 32 || len % 32 !== 0) problems.push(`SDMENCLength ${len} must be a positive multiple of 32 (whole 16-byte blocks as hex)`)
    add('the encrypted file data', 'encData', len)
  }
  add('the MAC', 'mac', MIRROR_LENGTH.mac)
  for (const m of mirrors)
    if (m.offset + m.length > fileSize)
      problems.push(`${m.what} (${FIELD_NAME[m.field]} ${m.offset}, ${m.length} characters) runs past the end of the ${fileSize}-byte file (91 9E)`)
  if (wanted.includes('mac')) {
    if (off.macInput! > off.mac!) problems.push(`SDMMACInputOffset ${off.macInput} is after SDMMACOffset ${off.mac}: the MAC input runs up to the MAC (91 9E)`)
    if (wanted.includes('encData')) {
      if (off.encData! < off.macInput!) problems.push(`SDMENCOffset ${off.encData} is before SDMMACInputOffset ${off.macInput}: the MAC must cover the encrypted data (91 9E)`)
      if (off.encData! + off.encLength! > off.mac!)
        problems.push(`the encrypted file data (SDMENCOffset ${off.encData}, ${off.encLength} characters) runs into SDMMACOffset ${off.mac} (91 9E)`)
    }
  }
  for (let i = 0; i < mirrors.length; i++)
    for (let j = i + 1; j < mirrors.length; j++) {
      const a = mirrors[i]!
      const b = mirrors[j]!
      if (a.offset < b.offset + b.length && b.offset < a.offset + a.length)
        problems.push(
          `${a.what} (${FIELD_NAME[a.field]} ${a.offset}, ${a.length} characters) and ${b.what} (${FIELD_NAME[b.field]} ${b.offset}, ${b.length} characters) overlap (91 9E)`,
        )
    }
  return problems
}

/** FileOption ‖ AccessRights, and the SDM block after them (or after FileSize in GetFileSettings). */
function encodeParts(s: FileSettings): { head: Buffer; sdm: Buffer } {
  const ar = s.accessRights
  const head = Buffer.from([
    (s.sdm ? 0x40 : 0) | COMM_MODE_BITS[s.commMode],
    (nibble(ar.readWrite) << 4) | nibble(ar.change),
    (nibble(ar.read) << 4) | nibble(ar.write),
  ])
  if (!s.sdm) return { head, sdm: Buffer.alloc(0) }
  const o = s.sdmOptions!
  const sar = s.sdmAccessRights!
  const parts: Buffer[] = [
    Buffer.from([(o.uid ? 0x80 : 0) | (o.readCtr ? 0x40 : 0) | (o.readCtrLimit ? 0x20 : 0) | (o.encFileData ? 0x10 : 0) | (o.ascii ? 0x01 : 0)]),
    Buffer.from([0xf0 | nibble(sar.ctrRet), (nibble(sar.metaRead) << 4) | nibble(sar.fileRead)]),
  ]
  for (const f of sdmFields(o, sar)) parts.push(u24le(fieldValue(s, f)!, FIELD_NAME[f]))
  return { head, sdm: Buffer.concat(parts) }
}

/**
 * ChangeFileSettings' CmdData: `FileOption ‖ AccessRights ‖ [SDMOptions ‖ SDMAccessRights ‖ offsets…]`,
 * after checking every rule ({@link validateFileSettings}).
 *
 * @throws FileSettingsError listing every rule the settings break
 * @example
 * encodeFileSettings(settings, { fileNo: 2, mode: 'aes' }) // 4000E0C1F121200000430000430000 (AN12196 Table 19)
 */
export function encodeFileSettings(s: FileSettings, o: ValidateFileSettingsOptions): Buffer {
  const problems = validateFileSettings(s, o)
  if (problems.length > 0) throw new FileSettingsError(problems)
  const { head, sdm } = encodeParts(s)
  return Buffer.concat([head, sdm])
}

/**
 * GetFileSettings' answer for settings (the card's side): `FileType ‖ FileOption ‖ AccessRights ‖ FileSize ‖ [SDM block]`.
 * Settings a card holds were validated when they were changed, so they are not checked again.
 *
 * @example
 * encodeGetFileSettingsAnswer(0, 256, FACTORY_NDEF_SETTINGS) // 0000E0EE000100
 */
export function encodeGetFileSettingsAnswer(fileType: number, fileSize: number, s: FileSettings): Buffer {
  const { head, sdm } = encodeParts(s)
  return Buffer.concat([Buffer.from([checkByte(fileType, 'fileType')]), head, u24le(fileSize, 'fileSize'), sdm])
}

/** Reads FileOption, AccessRights and the SDM block; `sizeAt` is where GetFileSettings puts FileSize (null for ChangeFileSettings). */
function decode(data: Buffer, start: number, withSize: boolean): { settings: FileSettings; fileSize: number | null } {
  const problems: string[] = []
  const need = start + 3 + (withSize ? 3 : 0)
  if (data.length < need) throw new FileSettingsError([`file settings are at least ${need} bytes, got ${data.length}`])
  const fileOption = data[start]!
  if ((fileOption & ~0x43) !== 0) problems.push(`FileOption ${fileOption.toString(16).padStart(2, '0')}h sets RFU bits`)
  const modeBits = fileOption & 0x03
  const commMode: CommMode = modeBits === 0b01 ? 'mac' : modeBits === 0b11 ? 'full' : 'plain'
  const b1 = data[start + 1]!
  const b2 = data[start + 2]!
  const accessRights: AccessRights = {
    read: condition(b2 >>> 4, 'Read', problems),
    write: condition(b2 & 0x0f, 'Write', problems),
    readWrite: condition(b1 >>> 4, 'ReadWrite', problems),
    change: condition(b1 & 0x0f, 'Change', problems),
  }
  let at = start + 3
  let fileSize: number | null = null
  if (withSize) {
    fileSize = data.readUIntLE(at, 3)
    at += 3
  }
  const settings: FileSettings = { sdm: (fileOption & 0x40) !== 0, commMode, accessRights }
  if (settings.sdm) {
    if (data.length < at + 3) throw new FileSettingsError([...problems, 'SDM is on, but SDMOptions and SDMAccessRights are missing'])
    const so = data[at]!
    if ((so & 0x0e) !== 0) problems.push(`SDMOptions ${so.toString(16).padStart(2, '0')}h sets RFU bits`)
    settings.sdmOptions = { uid: (so & 0x80) !== 0, readCtr: (so & 0x40) !== 0, readCtrLimit: (so & 0x20) !== 0, encFileData: (so & 0x10) !== 0, ascii: (so & 0x01) !== 0 }
    const s1 = data[at + 1]!
    const s2 = data[at + 2]!
    settings.sdmAccessRights = {
      metaRead: condition(s2 >>> 4, 'SDMMetaRead', problems),
      fileRead: condition(s2 & 0x0f, 'SDMFileRead', problems),
      ctrRet: condition(s1 & 0x0f, 'SDMCtrRet', problems),
    }
    at += 3
    const fields = sdmFields(settings.sdmOptions, settings.sdmAccessRights)
    if (data.length < at + 3 * fields.length)
      throw new FileSettingsError([...problems, `the SDM options call for ${fields.length} 3-byte fields, but only ${data.length - at} bytes follow`])
    const offsets: SdmOffsets = {}
    for (const f of fields) {
      const v = data.readUIntLE(at, 3)
      at += 3
      if (f === 'readCtrLimit') settings.readCtrLimit = v
      else offsets[f] = v
    }
    if (Object.keys(offsets).length > 0) settings.offsets = offsets
  }
  if (at !== data.length) problems.push(`${data.length - at} bytes follow the last field the settings call for`)
  if (problems.length > 0) throw new FileSettingsError(problems)
  return { settings, fileSize }
}

/**
 * Decodes GetFileSettings' answer data with ChangeFileSettings' presence rules.
 *
 * @throws FileSettingsError for truncated or trailing bytes, RFU bits or RFU access conditions
 * @example
 * decodeFileSettings(Buffer.from('0000E0EE000100', 'hex')) // { fileType: 0, fileSize: 256, settings: FACTORY_NDEF_SETTINGS }
 */
export function decodeFileSettings(data: Uint8Array): DecodedFileSettings {
  const buf = Buffer.from(data)
  if (buf.length < 1) throw new FileSettingsError(['GetFileSettings answered no data'])
  const { settings, fileSize } = decode(buf, 1, true)
  return { fileType: buf[0]!, fileSize: fileSize!, settings }
}

/**
 * Decodes ChangeFileSettings' CmdData (the card's side).
 *
 * @throws FileSettingsError for data that is not a settings record
 * @example
 * decodeChangeFileSettingsData(Buffer.from('4000E0C1F121200000430000430000', 'hex')).sdmAccessRights // { metaRead: '2', fileRead: '1', ctrRet: '1' }
 */
export function decodeChangeFileSettingsData(data: Uint8Array): FileSettings {
  return decode(Buffer.from(data), 0, false).settings
}

/**
 * GetFileSettings: plain without a session (`90 F5 00 00 01 FileNo 00`), CommMode.MAC inside one.
 *
 * @example
 * getFileSettings(2).apdu // 90F50000010200
 * getFileSettings(2, session).apdu // 90F5000009026597A457C8CD442C00 (AN12196 Table 8)
 */
export function getFileSettings(fileNo: number, session?: SecureSession): Exchange<DecodedFileSettings> {
  const header = Buffer.from([checkByte(fileNo, 'fileNo', 1, 3)])
  if (session) {
    const apdu = session.command(INS.getFileSettings, { header, commMode: 'mac' })
    return { apdu, parse: (response) => decodeFileSettings(session.response(response)) }
  }
  return { apdu: nativeApdu(INS.getFileSettings, header), parse: (response) => decodeFileSettings(expectStatus(response, 'GetFileSettings')) }
}

export type ChangeFileSettingsParameters = {
  fileNo: number
  settings: FileSettings
  /**
   * The file's Change access right as it is now (factory: key 0). A key means
   * CommMode.Full with a session authenticated by that key; E means the command
   * goes plain (research notes §5, inferred from §10.7.1).
   */
  currentChange?: AccessCondition
}

/**
 * ChangeFileSettings, validated before the APDU exists: `90 5F 00 00 Lc FileNo E(settings) MACt 00`.
 * The settings are checked for the session's mode (PICCData length).
 *
 * @throws FileSettingsError listing every broken rule; SecureMessagingError (`session`) when the session's key
 *   is not the one the current Change right names
 * @example
 * changeFileSettings(session, { fileNo: 2, settings }).apdu // 905F0000190261B6D979… (AN12196 Table 19)
 */
export function changeFileSettings(session: SecureSession, p: ChangeFileSettingsParameters): Exchange<void> {
  const data = encodeFileSettings(p.settings, { fileNo: p.fileNo, mode: session.mode })
  const change = p.currentChange ?? '0'
  if (change === 'F') throw new FileSettingsError(['the file\'s Change right is F: its settings can never change'])
  if (change !== 'E' && Number(change) !== session.keyNo)
    throw new SecureMessagingError('session', `ChangeFileSettings of file ${p.fileNo} needs a session authenticated with key ${change}; this one used key ${session.keyNo}`)
  const commMode: CommMode = change === 'E' ? 'plain' : 'full'
  const apdu = session.command(INS.changeFileSettings, { header: Buffer.from([p.fileNo]), data, commMode })
  return { apdu, parse: (response) => void session.response(response) }
}
