/**
 * The status words an NTAG 424 DNA answers with, and the error a refused
 * command becomes. Native commands (CLA 90) answer SW1 = 91 with the return
 * code in SW2 (NT4H2421Gx Table 23); ISO commands (CLA 00) answer ISO 7816-4
 * status words (Table 24).
 */

/** The data sheet's names of the native return codes (Table 23). */
export type NativeStatusName =
  | 'OPERATION_OK'
  | 'ILLEGAL_COMMAND_CODE'
  | 'INTEGRITY_ERROR'
  | 'NO_SUCH_KEY'
  | 'LENGTH_ERROR'
  | 'PERMISSION_DENIED'
  | 'PARAMETER_ERROR'
  | 'AUTHENTICATION_DELAY'
  | 'AUTHENTICATION_ERROR'
  | 'ADDITIONAL_FRAME'
  | 'BOUNDARY_ERROR'
  | 'COMMAND_ABORTED'
  | 'MEMORY_ERROR'
  | 'FILE_NOT_FOUND'

/** ISO 7816-4 status word names (Table 24). */
export type IsoStatusName =
  | 'NORMAL_PROCESSING'
  | 'END_OF_FILE'
  | 'MEMORY_FAILURE'
  | 'WRONG_LENGTH'
  | 'SECURITY_STATUS_NOT_SATISFIED'
  | 'CONDITIONS_OF_USE_NOT_SATISFIED'
  | 'INCORRECT_DATA'
  | 'FILE_NOT_FOUND'
  | 'INCORRECT_P1_P2'
  | 'LC_INCONSISTENT'
  | 'WRONG_LE'
  | 'INS_NOT_SUPPORTED'
  | 'CLA_NOT_SUPPORTED'

/** Every name a status word can have here; `UNKNOWN` for one the data sheet does not list. */
export type StatusName = NativeStatusName | IsoStatusName | 'UNKNOWN'

/** A status word's data-sheet name and what it means during provisioning. */
export type StatusWordInfo = {
  /** The data sheet's name, e.g. `INTEGRITY_ERROR`; `UNKNOWN` for a status word not listed. */
  name: StatusName
  /** The data sheet's meaning, with the provisioning mistake that usually causes it. */
  meaning: string
}

/** Native return codes (SW1 = 91), NT4H2421Gx Table 23, with the causes seen in practice (research notes §2). */
const NATIVE: Record<number, StatusWordInfo & { name: NativeStatusName }> = {
  0x00: { name: 'OPERATION_OK', meaning: 'successful operation' },
  0x1c: { name: 'ILLEGAL_COMMAND_CODE', meaning: 'command code not supported' },
  0x1e: {
    name: 'INTEGRITY_ERROR',
    meaning: 'CRC or MAC does not match the data, or the padding is invalid (a wrong session key, a CmdCtr out of step, or ChangeKey with the wrong old key)',
  },
  0x40: { name: 'NO_SUCH_KEY', meaning: 'invalid key number specified' },
  0x7e: {
    name: 'LENGTH_ERROR',
    meaning: 'length of the command string invalid (e.g. a ChangeFileSettings field set that does not match its options, or a plain command where Full is expected)',
  },
  0x9d: {
    name: 'PERMISSION_DENIED',
    meaning: 'the current configuration or status does not allow the command (e.g. AES authentication on a chip in LRP mode, SDM on a file other than 02)',
  },
  0x9e: { name: 'PARAMETER_ERROR', meaning: 'value of the parameter(s) invalid (e.g. inconsistent SDM options or offsets)' },
  0xad: {
    name: 'AUTHENTICATION_DELAY',
    meaning: 'authentication not allowed now: too many failed attempts; waiting is the only remedy, and further wrong attempts bring the key closer to being blocked for good',
  },
  0xae: { name: 'AUTHENTICATION_ERROR', meaning: 'wrong key (authentication part 2), or the current authentication status does not allow the command' },
  0xaf: { name: 'ADDITIONAL_FRAME', meaning: 'additional data frame is expected to be sent' },
  0xbe: { name: 'BOUNDARY_ERROR', meaning: 'attempt to read or write beyond the end of the file' },
  0xca: { name: 'COMMAND_ABORTED', meaning: 'previous command was not fully completed: not all frames were requested or provided' },
  0xee: { name: 'MEMORY_ERROR', meaning: 'failure when reading or writing the non-volatile memory' },
  0xf0: { name: 'FILE_NOT_FOUND', meaning: 'specified file number does not exist' },
}

/** ISO 7816-4 status words an NTAG 424 DNA uses for CLA 00 commands (NT4H2421Gx Table 24). */
const ISO: Record<number, StatusWordInfo & { name: IsoStatusName }> = {
  0x9000: { name: 'NORMAL_PROCESSING', meaning: 'successful operation' },
  0x6282: { name: 'END_OF_FILE', meaning: 'end of file reached before reading Le bytes' },
  0x6581: { name: 'MEMORY_FAILURE', meaning: 'memory failure' },
  0x6700: { name: 'WRONG_LENGTH', meaning: 'wrong length; no further indication' },
  0x6982: { name: 'SECURITY_STATUS_NOT_SATISFIED', meaning: 'security status not satisfied (the file needs an authentication or a secure channel)' },
  0x6985: { name: 'CONDITIONS_OF_USE_NOT_SATISFIED', meaning: 'conditions of use not satisfied (e.g. no file selected)' },
  0x6a80: { name: 'INCORRECT_DATA', meaning: 'incorrect parameters in the command data field' },
  0x6a82: { name: 'FILE_NOT_FOUND', meaning: 'file or application not found' },
  0x6a86: { name: 'INCORRECT_P1_P2', meaning: 'incorrect parameters P1-P2' },
  0x6a87: { name: 'LC_INCONSISTENT', meaning: 'Lc inconsistent with P1-P2' },
  0x6c00: { name: 'WRONG_LE', meaning: 'wrong Le field' },
  0x6d00: { name: 'INS_NOT_SUPPORTED', meaning: 'instruction code not supported or invalid' },
  0x6e00: { name: 'CLA_NOT_SUPPORTED', meaning: 'class not supported' },
}

/**
 * The data sheet's name and meaning of a status word (SW1 SW2 as one 16-bit number).
 *
 * @example
 * describeStatusWord(0x911e) // { name: 'INTEGRITY_ERROR', meaning: 'CRC or MAC does not match …' }
 * describeStatusWord(0x6a82) // { name: 'FILE_NOT_FOUND', meaning: 'file or application not found' }
 */
export function describeStatusWord(sw: number): StatusWordInfo {
  if (sw >>> 8 === 0x91) return NATIVE[sw & 0xff] ?? { name: 'UNKNOWN', meaning: `return code ${hex2(sw & 0xff)} is not in the data sheet` }
  return ISO[sw] ?? ISO[sw & 0xff00] ?? { name: 'UNKNOWN', meaning: 'status word not in the data sheet' }
}

function hex2(n: number): string {
  return n.toString(16).toUpperCase().padStart(2, '0')
}

/**
 * Formats a status word as the data sheet and the tools print it.
 *
 * @example
 * formatStatusWord(0x91ae) // '91 AE'
 */
export function formatStatusWord(sw: number): string {
  return `${hex2(sw >>> 8)} ${hex2(sw & 0xff)}`
}

/**
 * The card refused a command: it answered a status word other than the one the
 * command succeeds with. `name` is the data sheet's, so callers can branch on
 * it (`AUTHENTICATION_ERROR` means a wrong key: never try another one).
 * Inside a secure-messaging session any such error has already ended the
 * session on the card (NT4H2421Gx §9.1.9).
 *
 * @example
 * try { session.response(r) } catch (e) { if (e instanceof NtagStatusError && e.status === 'AUTHENTICATION_DELAY') stop() }
 */
export class NtagStatusError extends Error {
  override name = 'NtagStatusError'
  /** SW1 SW2 as one number, e.g. 0x91AE. */
  readonly sw: number
  /** The data sheet's name of the status word, e.g. `AUTHENTICATION_ERROR`. */
  readonly status: StatusName
  /** The data sheet's meaning. */
  readonly meaning: string
  /** The command that was refused, e.g. `ChangeKey`. */
  readonly command: string

  constructor(command: string, sw: number) {
    const info = describeStatusWord(sw)
    super(`${command} refused with ${formatStatusWord(sw)} ${info.name}: ${info.meaning}`)
    this.sw = sw
    this.status = info.name
    this.meaning = info.meaning
    this.command = command
  }
}

/** The status word a native command succeeds with. */
export const SW_OK = 0x9100
/** More frames follow (authentication part 1, GetVersion). */
export const SW_ADDITIONAL_FRAME = 0x91af
/** Read_Sig answers 91 90, not 91 00 (AN12196 Table 30). */
export const SW_READ_SIG_OK = 0x9190
/** Success of an ISO command (CLA 00). */
export const SW_ISO_OK = 0x9000
