/*
 * The NDEF application's three standard data files as a factory NTAG 424 DNA
 * ships them (NT4H2421Gx Tables 5, 8 and 13; research notes §1): their ISO and
 * native numbers, sizes, contents and file settings.
 */
import { FACTORY_NDEF_SETTINGS, type AccessCondition, type FileSettings } from '../../src/provisioning/index.js'

/** ISO file identifiers of the NDEF application's files. */
export const FILE_ID = { cc: 0xe103, ndef: 0xe104, proprietary: 0xe105, ndefApplication: 0xe110, masterFile: 0x3f00 } as const

/**
 * The factory capability container (NT4H2421Gx §8.2.3.1): mapping version 2.0,
 * MLe 0100h, MLc 00FFh, NDEF file E104h of 256 bytes with free read and write,
 * proprietary file E105h of 128 bytes (read key 2, write key 3).
 */
export const FACTORY_CC_FILE = Buffer.concat([Buffer.from('001720010000FF0406E104010000000506E10500808283', 'hex'), Buffer.alloc(9)])

/** One standard data file. */
export type CardFile = { fileNo: number; fid: number; size: number; data: Buffer; settings: FileSettings }

/** Standard data file (GetFileSettings FileType 00). */
export const STANDARD_DATA_FILE = 0x00

/** The three files of a factory chip: CC (plain, write key 0), NDEF (all free but Change), proprietary (Full, keys 2/3). */
export function factoryFiles(): CardFile[] {
  return [
    { fileNo: 1, fid: FILE_ID.cc, size: 32, data: Buffer.from(FACTORY_CC_FILE), settings: { sdm: false, commMode: 'plain', accessRights: { read: 'E', write: '0', readWrite: '0', change: '0' } } },
    // NDEF as shipped: NLEN 0000, no message.
    { fileNo: 2, fid: FILE_ID.ndef, size: 256, data: Buffer.alloc(256), settings: structuredClone(FACTORY_NDEF_SETTINGS) },
    { fileNo: 3, fid: FILE_ID.proprietary, size: 128, data: Buffer.alloc(128), settings: { sdm: false, commMode: 'full', accessRights: { read: '2', write: '3', readWrite: '3', change: '0' } } },
  ]
}

/** What a session (or its absence) may do under an access condition. */
export type Access = { allowed: true; secured: boolean } | { allowed: false; status: number }

/**
 * Checks an access condition against the session's key: E is free and goes
 * plain even inside a session (NT4H2421Gx §8.2.3.3); a key needs a session
 * authenticated with it; F is never.
 *
 * @returns the access, or the native status: 91 AE without authentication, 91 9D otherwise
 */
export function checkAccess(conditions: readonly AccessCondition[], sessionKeyNo: number | null): Access {
  if (conditions.includes('E')) return { allowed: true, secured: false }
  const keys = conditions.filter((c) => c !== 'F').map(Number)
  if (sessionKeyNo !== null && keys.includes(sessionKeyNo)) return { allowed: true, secured: true }
  if (sessionKeyNo === null && keys.length > 0) return { allowed: false, status: 0x91ae }
  return { allowed: false, status: 0x919d }
}
