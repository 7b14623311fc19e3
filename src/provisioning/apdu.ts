import { checkByte } from './bytes.js'
import { NtagStatusError, SW_ISO_OK, SW_OK } from './statusWords.js'

/**
 * NTAG 424 DNA native command codes (NT4H2421Gx Table 22). They travel inside
 * an ISO 7816-4 APDU with CLA 90 (§8.4).
 */
export const INS = {
  authenticateFirst: 0x71,
  authenticateNonFirst: 0x77,
  additionalFrame: 0xaf,
  changeFileSettings: 0x5f,
  changeKey: 0xc4,
  getCardUid: 0x51,
  getFileSettings: 0xf5,
  getKeyVersion: 0x64,
  getVersion: 0x60,
  readData: 0xad,
  readSig: 0x3c,
  setConfiguration: 0x5c,
  writeData: 0x8d,
} as const

const COMMAND_NAMES: Record<number, string> = {
  0x71: 'AuthenticateFirst',
  0x77: 'AuthenticateNonFirst',
  0xaf: 'AdditionalFrame',
  0x5f: 'ChangeFileSettings',
  0xc4: 'ChangeKey',
  0x51: 'GetCardUID',
  0xf5: 'GetFileSettings',
  0x64: 'GetKeyVersion',
  0x60: 'GetVersion',
  0xad: 'ReadData',
  0x3c: 'Read_Sig',
  0x5c: 'SetConfiguration',
  0x8d: 'WriteData',
}

/**
 * The data sheet's name of a native command, for messages.
 *
 * @example
 * commandName(0xc4) // 'ChangeKey'
 */
export function commandName(ins: number): string {
  return COMMAND_NAMES[ins] ?? `command ${ins.toString(16).toUpperCase().padStart(2, '0')}`
}

/** Lc is one byte: a native command carries at most 255 bytes (header, data and MAC together). */
export const MAX_NATIVE_DATA = 255

/**
 * Wraps a native command in ISO 7816-4: `90 INS 00 00 Lc data 00`, or
 * `90 INS 00 00 00` without data (NT4H2421Gx §8.4, Table 16). Le is always 00.
 *
 * @throws RangeError when the data exceeds 255 bytes (this layer does not chain frames)
 * @example
 * nativeApdu(0x71, Buffer.from('0000', 'hex')) // 90 71 00 00 02 00 00 00
 * nativeApdu(0x60) // 90 60 00 00 00
 */
export function nativeApdu(ins: number, data: Uint8Array = new Uint8Array(0)): Buffer {
  checkByte(ins, 'INS')
  if (data.length > MAX_NATIVE_DATA) throw new RangeError(`${commandName(ins)} carries ${data.length} bytes; one APDU holds at most ${MAX_NATIVE_DATA}`)
  if (data.length === 0) return Buffer.from([0x90, ins, 0x00, 0x00, 0x00])
  return Buffer.concat([Buffer.from([0x90, ins, 0x00, 0x00, data.length]), data, Buffer.from([0x00])])
}

/** A response APDU cut into its data and status word. */
export type ResponseApdu = {
  /** Everything before SW1 SW2 (for a secure-messaging answer: the data and the MAC). */
  data: Buffer
  /** SW1 SW2 as one number, e.g. 0x9100. */
  sw: number
}

/**
 * Splits a response APDU into data and status word.
 *
 * @throws RangeError when the response is shorter than a status word
 * @example
 * splitResponse(Buffer.from('2A474282E7A479869100', 'hex')) // { data: <2a 47 …>, sw: 0x9100 }
 */
export function splitResponse(response: Uint8Array): ResponseApdu {
  if (!(response instanceof Uint8Array) || response.length < 2) throw new RangeError('a response APDU ends in a 2-byte status word')
  const r = Buffer.from(response)
  return { data: r.subarray(0, r.length - 2), sw: r.readUInt16BE(r.length - 2) }
}

/**
 * Returns the data of a response that succeeded, or throws the card's refusal.
 *
 * @throws NtagStatusError when the status word is not one of `ok`
 * @example
 * const keyVersion = expectStatus(response, 'GetKeyVersion')[0]
 */
export function expectStatus(response: Uint8Array, command: string, ok: readonly number[] = [SW_OK]): Buffer {
  const { data, sw } = splitResponse(response)
  if (!ok.includes(sw)) throw new NtagStatusError(command, sw)
  return data
}

/** The NDEF application's DF name (NFC Forum Type 4 Tag). */
export const NDEF_APPLICATION_DF_NAME = Buffer.from('D2760000850101', 'hex')

/** ISO file identifiers of the NDEF application's files and the native file numbers they map to (NT4H2421Gx Table 5). */
export const NTAG424_FILES = {
  cc: { fileNo: 0x01, fid: 0xe103, size: 32 },
  ndef: { fileNo: 0x02, fid: 0xe104, size: 256 },
  proprietary: { fileNo: 0x03, fid: 0xe105, size: 128 },
} as const

/**
 * ISOSelectFile of the NDEF application by DF name: `00 A4 04 00 07 D2760000850101 00`.
 * Select once per session: re-selecting may drop the authentication (research notes §4).
 *
 * @example
 * selectNdefApplication() // 00A4040007D276000085010100
 */
export function selectNdefApplication(): Buffer {
  return Buffer.concat([Buffer.from([0x00, 0xa4, 0x04, 0x00, NDEF_APPLICATION_DF_NAME.length]), NDEF_APPLICATION_DF_NAME, Buffer.from([0x00])])
}

/**
 * ISOSelectFile of an elementary file by identifier, no answer data: `00 A4 00 0C 02 FID`.
 *
 * @example
 * selectFile(0xe104) // 00A4000C02E104
 */
export function selectFile(fid: number): Buffer {
  checkByte(fid, 'file identifier', 0, 0xffff)
  return Buffer.from([0x00, 0xa4, 0x00, 0x0c, 0x02, fid >>> 8, fid & 0xff])
}

/**
 * ISOReadBinary of the selected file: `00 B0 offset(2) Le` (Le 0 reads up to 256 bytes).
 *
 * @example
 * readBinary(0, 0) // 00B0000000
 */
export function readBinary(offset: number, length: number): Buffer {
  checkByte(offset, 'offset', 0, 0x7fff)
  checkByte(length, 'length', 0, 0xff)
  return Buffer.from([0x00, 0xb0, offset >>> 8, offset & 0xff, length])
}

/**
 * ISOUpdateBinary of the selected file: `00 D6 offset(2) Lc data 00`, with the
 * trailing Le 00 that AN12196 Table 17 sends to a real chip. Plain only; inside
 * a session use WriteData (writeData.ts), which the chip MACs or encrypts as the file requires.
 *
 * @example
 * updateBinary(0, ndefFile) // 00D6000053 0051D101… 00 (AN12196 Table 17)
 */
export function updateBinary(offset: number, data: Uint8Array): Buffer {
  checkByte(offset, 'offset', 0, 0x7fff)
  if (data.length === 0 || data.length > 255) throw new RangeError('ISOUpdateBinary writes 1…255 bytes per APDU')
  return Buffer.concat([Buffer.from([0x00, 0xd6, offset >>> 8, offset & 0xff, data.length]), data, Buffer.from([0x00])])
}

/**
 * Checks an ISO command's answer (90 00) and returns its data.
 *
 * @throws NtagStatusError on any other status word
 * @example
 * expectIsoOk(response, 'ISOSelectFile')
 */
export function expectIsoOk(response: Uint8Array, command: string): Buffer {
  return expectStatus(response, command, [SW_ISO_OK])
}
