import { expectStatus, INS, nativeApdu } from './apdu.js'
import { checkByte, u24le } from './bytes.js'
import type { Exchange, SecureSession } from './secureMessaging.js'
import type { CommMode } from './smCrypto.js'

/*
 * WriteData (8D) and ReadData (AD) (NT4H2421Gx §10.8): CmdHeader
 * `FileNo ‖ Offset(3 LE) ‖ Length(3 LE)`, the data in the file's CommMode. Inside
 * a session a plain-mode file (the NDEF file, by default) still goes plain, and
 * the command still advances CmdCtr.
 */

export type WriteDataParameters = {
  /** Native file number: 01 CC, 02 NDEF, 03 proprietary. */
  fileNo: number
  offset: number
  data: Uint8Array
  /** The file's communication mode (the NDEF file's is plain unless changed). */
  commMode: CommMode
}

/**
 * The 7-byte CmdHeader of WriteData/ReadData.
 *
 * @example
 * fileDataHeader(2, 0, 128) // 02 000000 800000
 */
export function fileDataHeader(fileNo: number, offset: number, length: number): Buffer {
  return Buffer.concat([Buffer.from([checkByte(fileNo, 'fileNo', 1, 3)]), u24le(offset, 'offset'), u24le(length, 'length')])
}

/**
 * WriteData, in a session or (plain only) without one.
 *
 * @throws RangeError when the data is empty, or a secured write is asked for without a session
 * @example
 * writeData({ fileNo: 2, offset: 0, data: ndef, commMode: 'full' }, session).apdu // 908D00009F02000000800000… (AN12196 Table 18)
 */
export function writeData(p: WriteDataParameters, session?: SecureSession): Exchange<void> {
  if (p.data.length === 0) throw new RangeError('WriteData writes at least one byte')
  const header = fileDataHeader(p.fileNo, p.offset, p.data.length)
  if (session) {
    const apdu = session.command(INS.writeData, { header, data: p.data, commMode: p.commMode })
    return { apdu, parse: (response) => void session.response(response) }
  }
  if (p.commMode !== 'plain') throw new RangeError(`WriteData in CommMode.${p.commMode} needs an authenticated session`)
  return { apdu: nativeApdu(INS.writeData, Buffer.concat([header, p.data])), parse: (response) => void expectStatus(response, 'WriteData') }
}

export type ReadDataParameters = {
  fileNo: number
  offset: number
  /** Bytes to read; 0 reads to the end of the file. */
  length: number
  commMode: CommMode
}

/**
 * ReadData, in a session or (plain only) without one. In CommMode.Full the answer is decrypted.
 *
 * @example
 * readData({ fileNo: 3, offset: 0, length: 3, commMode: 'full' }, session).apdu // 90AD00000F030000000300…
 */
export function readData(p: ReadDataParameters, session?: SecureSession): Exchange<Buffer> {
  const header = fileDataHeader(p.fileNo, p.offset, p.length)
  if (session) {
    const apdu = session.command(INS.readData, { header, commMode: p.commMode })
    return { apdu, parse: (response) => session.response(response) }
  }
  if (p.commMode !== 'plain') throw new RangeError(`ReadData in CommMode.${p.commMode} needs an authenticated session`)
  return { apdu: nativeApdu(INS.readData, header), parse: (response) => expectStatus(response, 'ReadData') }
}

/** One WriteData of an NDEF write plan. */
export type WriteStep = { offset: number; data: Buffer }

/**
 * The writes that put an NDEF file on the chip so that a card pulled at any
 * point holds either no message or the whole new one: NLEN 0000 first (an empty
 * message), then the message in chunks, then the real NLEN. A tear inside one
 * WriteData frame of up to 128 bytes is rolled back by the chip (NT4H2421Gx
 * §8.6), hence the default chunk size.
 *
 * @throws RangeError when the file does not start with a 2-byte NLEN matching its length
 * @example
 * ndefWritePlan(planNdefUrl('https://example.com/?e={picc}&c={mac}').ndefFile)
 * // [{ offset: 0, data: 0000 }, { offset: 2, data: D101… }, { offset: 0, data: 00xx }]
 */
export function ndefWritePlan(ndefFile: Uint8Array, maxChunk = 128): WriteStep[] {
  const file = Buffer.from(ndefFile)
  if (file.length < 2 || file.readUInt16BE(0) !== file.length - 2) throw new RangeError('an NDEF file starts with NLEN, the length of the message after it')
  checkByte(maxChunk, 'maxChunk', 1, 128)
  const steps: WriteStep[] = [{ offset: 0, data: Buffer.alloc(2) }]
  for (let at = 2; at < file.length; at += maxChunk) steps.push({ offset: at, data: file.subarray(at, Math.min(file.length, at + maxChunk)) })
  steps.push({ offset: 0, data: file.subarray(0, 2) })
  return steps
}
