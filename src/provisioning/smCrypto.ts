import { createCipheriv, createDecipheriv } from 'node:crypto'
import { aesCmac } from '../sun/aesCmac.js'
import { toAesKey, type KeyInput } from '../sun/aesKey.js'
import { createLrp, type Lrp } from '../sun/lrp.js'
import { lrpCmac, lrpCmacSubkeys, type LrpCmacSubkeys } from '../sun/lrpCmac.js'
import { lricbDecrypt, lricbEncrypt } from '../sun/lricb.js'
import { truncateMac } from '../sun/sdmMac.js'
import { u16le } from './bytes.js'

/**
 * The cryptography of NTAG 424 DNA secure messaging (NT4H2421Gx §9.1 AES,
 * §9.2 LRP), as pure functions of the session keys and counters. The session
 * classes (secureMessaging.ts, cardSecureMessaging.ts) keep the counters; the
 * functions here are exported so tests can check every intermediate value of the
 * published tables.
 */

/** How a command's data travels (NT4H2421Gx §9.1.8–9.1.10): in clear, in clear with a MAC, or encrypted with a MAC. */
export type CommMode = 'plain' | 'mac' | 'full'

/**
 * Checks a CommMode given at run time (e.g. read from a profile or a fixture):
 * anything else would silently be sent as if it were MAC mode.
 *
 * @throws RangeError for anything but plain, mac or full
 * @example
 * checkCommMode('full') // 'full'
 */
export function checkCommMode(mode: CommMode): CommMode {
  if (mode !== 'plain' && mode !== 'mac' && mode !== 'full') throw new RangeError(`CommMode must be plain, mac or full, not ${JSON.stringify(mode)}`)
  return mode
}

/** AES session keys from AuthenticateEV2First/NonFirst. */
export type AesSessionKeys = { readonly mode: 'aes'; readonly encKey: Buffer; readonly macKey: Buffer }

/**
 * LRP session keys from AuthenticateLRPFirst/NonFirst: the plaintexts of
 * SesAuthMasterKey with its updated keys 0 (SesAuthMACKey) and 1 (SesAuthENCKey),
 * plus the MAC subkeys, computed once per session.
 */
export type LrpSessionKeys = { readonly mode: 'lrp'; readonly lrp: Lrp; readonly macSubkeys: LrpCmacSubkeys }

export type SessionKeys = AesSessionKeys | LrpSessionKeys

/**
 * AES session keys from their two values (what AN12196's tables print).
 *
 * @example
 * aesSessionKeys('1309C877509E5A215007FF0ED19CA564', '4C6626F5E72EA694202139295C7A7FC7') // AN12196 Table 14
 */
export function aesSessionKeys(encKey: KeyInput, macKey: KeyInput): AesSessionKeys {
  return { mode: 'aes', encKey: toAesKey(encKey, 'SesAuthENCKey'), macKey: toAesKey(macKey, 'SesAuthMACKey') }
}

/**
 * LRP session keys from SesAuthMasterKey = CMAC_LRP(Kx, SV) (NT4H2421Gx §9.2.7).
 *
 * @example
 * lrpSessionKeysFromMaster(masterKey).lrp.updatedKeys[0] // SesAuthMACUpdateKey
 */
export function lrpSessionKeysFromMaster(masterKey: KeyInput): LrpSessionKeys {
  const lrp = createLrp(toAesKey(masterKey, 'SesAuthMasterKey'), 2)
  return { mode: 'lrp', lrp, macSubkeys: lrpCmacSubkeys(lrp) }
}

/**
 * ISO/IEC 9797-1 padding method 2: always `80`, then zeros to a whole block, so
 * block-aligned data gains a whole block (NT4H2421Gx §9.1.4).
 *
 * @example
 * padM2(Buffer.from('02', 'hex')) // 02 80 00 … (16 bytes)
 */
export function padM2(data: Uint8Array): Buffer {
  const out = Buffer.alloc((data.length + 16) & ~15)
  out.set(data)
  out[data.length] = 0x80
  return out
}

/**
 * Removes method 2 padding, or returns null when it is not valid (the chip
 * answers INTEGRITY_ERROR for a command with bad padding).
 *
 * @example
 * unpadM2(padM2(Buffer.from('04958CAA5C5E80', 'hex'))) // 04958CAA5C5E80
 */
export function unpadM2(data: Uint8Array): Buffer | null {
  if (data.length === 0 || data.length % 16 !== 0) return null
  let end = data.length - 1
  while (end >= data.length - 16 && data[end] === 0) end--
  if (end < data.length - 16 || data[end] !== 0x80) return null
  return Buffer.from(data.subarray(0, end))
}

/** Which way data flows: the two directions use different IV labels (AES) and share one EncCtr (LRP). */
export type Direction = 'command' | 'response'

/**
 * The AES IV of CommMode.Full: `E(SesAuthENCKey, A55A|5AA5 ‖ TI ‖ CmdCtr(LE) ‖ 00×8)`
 * (NT4H2421Gx §9.1.4). A response uses the CmdCtr already incremented for it.
 *
 * @example
 * aesSessionIv(encKey, 'command', Buffer.from('9D00C4DF', 'hex'), 0) // D2CB7277A17841A06654A48188C1F8F5 (AN12196 Table 18)
 */
export function aesSessionIv(encKey: Uint8Array, direction: Direction, ti: Uint8Array, cmdCtr: number): Buffer {
  const label = direction === 'command' ? [0xa5, 0x5a] : [0x5a, 0xa5]
  const block = Buffer.concat([Buffer.from(label), ti, u16le(cmdCtr), Buffer.alloc(8)])
  return createCipheriv('aes-128-ecb', encKey, null).setAutoPadding(false).update(block)
}

/**
 * AES-128-CBC of whole blocks, no padding (the caller pads).
 *
 * @example
 * aesCbc('encrypt', key, iv, padM2(data))
 */
export function aesCbc(op: 'encrypt' | 'decrypt', key: Uint8Array, iv: Uint8Array, blocks: Uint8Array): Buffer {
  if (blocks.length === 0 || blocks.length % 16 !== 0) throw new RangeError('AES-CBC input must be whole 16-byte blocks')
  const c = op === 'encrypt' ? createCipheriv('aes-128-cbc', key, iv) : createDecipheriv('aes-128-cbc', key, iv)
  c.setAutoPadding(false)
  return Buffer.concat([c.update(blocks), c.final()])
}

/**
 * The MAC input of a command: `Cmd ‖ CmdCtr(LE) ‖ TI ‖ CmdHeader ‖ CmdData-or-E(CmdData)` (NT4H2421Gx §9.1.9).
 *
 * @example
 * commandMacInput(0xf5, 0, Buffer.from('7A21085E', 'hex'), Buffer.from('02', 'hex'), Buffer.alloc(0)) // F500007A21085E02 (AN12196 Table 8)
 */
export function commandMacInput(cmd: number, cmdCtr: number, ti: Uint8Array, header: Uint8Array, body: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from([cmd]), u16le(cmdCtr), ti, header, body])
}

/**
 * The MAC input of a response: `RC ‖ CmdCtr+1 (LE) ‖ TI ‖ RespData-or-E(RespData)`;
 * pass the counter already incremented.
 *
 * @example
 * responseMacInput(0x00, 1, Buffer.from('9D00C4DF', 'hex'), Buffer.alloc(0)) // 0001009D00C4DF (AN12196 Table 18)
 */
export function responseMacInput(rc: number, cmdCtr: number, ti: Uint8Array, body: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from([rc]), u16le(cmdCtr), ti, body])
}

/**
 * The full 16-byte session MAC: AES-CMAC under SesAuthMACKey, or CMAC_LRP under
 * the LRP SesAuthMACKey. Secure messaging sends {@link macT} of it.
 *
 * @example
 * sessionMac(aesSessionKeys(enc, mac), commandMacInput(…)) // B565AC978FA46D5784C845CD1444102C (AN12196 Table 8)
 */
export function sessionMac(keys: SessionKeys, input: Uint8Array): Buffer {
  return keys.mode === 'aes' ? aesCmac(keys.macKey, input) : lrpCmac(keys.lrp, input, keys.macSubkeys)
}

/**
 * MACt: the bytes at odd indexes 1, 3, …, 15 of a CMAC ("even-numbered" in the
 * data sheet, which counts from 1).
 *
 * @example
 * macT(Buffer.from('B565AC978FA46D5784C845CD1444102C', 'hex')) // 6597A457C8CD442C
 */
export function macT(fullMac: Uint8Array): Buffer {
  return truncateMac(fullMac)
}

/**
 * Blocks an LRP encryption of `plaintextLength` bytes uses, i.e. how far EncCtr
 * moves (padding always adds at least one byte).
 *
 * @example
 * lrpPaddedBlocks(3) // 1
 * lrpPaddedBlocks(16) // 2
 */
export function lrpPaddedBlocks(plaintextLength: number): number {
  return (plaintextLength + 16) >>> 4
}

/**
 * The 4-byte big-endian EncCtr of LRP secure messaging (NT4H2421Gx §9.2.4:
 * "the counter is represented MSB first").
 *
 * @example
 * encCtrBytes(1) // 00 00 00 01
 */
export function encCtrBytes(encCtr: number): Buffer {
  const out = Buffer.alloc(4)
  out.writeUInt32BE(encCtr >>> 0, 0)
  return out
}

/**
 * Encrypts CommMode.Full data: pads, then AES-CBC under the direction's IV, or
 * LRICB under SesAuthENCKey from `encCtr`. The caller advances an LRP EncCtr by
 * {@link lrpPaddedBlocks}.
 *
 * @example
 * encryptSessionData(keys, 'command', ti, 1, 0, cmdData) // AN12196 Table 19: 61B6D97903566E84C3AE5274467E89EA
 */
export function encryptSessionData(keys: SessionKeys, direction: Direction, ti: Uint8Array, cmdCtr: number, encCtr: number, plaintext: Uint8Array): Buffer {
  if (keys.mode === 'lrp') return lricbEncrypt({ key: keys.lrp, updatedKey: 1, counter: encCtrBytes(encCtr), pad: true }, plaintext)
  return aesCbc('encrypt', keys.encKey, aesSessionIv(keys.encKey, direction, ti, cmdCtr), padM2(plaintext))
}

/**
 * Decrypts CommMode.Full data and removes its padding.
 *
 * @returns the plaintext, or null when the length or the padding is not valid
 * @example
 * decryptSessionData(keys, 'response', ti, 1, 0, encrypted) // AN12196 Table 29: 04958CAA5C5E80
 */
export function decryptSessionData(keys: SessionKeys, direction: Direction, ti: Uint8Array, cmdCtr: number, encCtr: number, ciphertext: Uint8Array): Buffer | null {
  if (ciphertext.length === 0 || ciphertext.length % 16 !== 0) return null
  if (keys.mode === 'lrp') {
    try {
      return lricbDecrypt({ key: keys.lrp, updatedKey: 1, counter: encCtrBytes(encCtr), pad: true }, ciphertext)
    } catch {
      return null
    }
  }
  return unpadM2(aesCbc('decrypt', keys.encKey, aesSessionIv(keys.encKey, direction, ti, cmdCtr), ciphertext))
}
