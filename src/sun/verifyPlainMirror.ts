import type { KeyInput } from './aesKey.js'
import { createSunVerifier, type PlainMirrorMessage } from './createSunVerifier.js'
import type { PlainMirrorResult, SunMode } from './sunResult.js'

export type VerifyPlainMirrorParameters = PlainMirrorMessage & {
  /** SDMFileReadKey. */
  fileKey: KeyInput
  /** 'lrp' for a chip in LRP mode; otherwise the MAC is AES. */
  mode?: SunMode | 'auto'
}

/**
 * Verifies a plain UID/counter mirror (`uid`, `ctr`, `cmac`): the SDMMAC is keyed
 * by a session key derived from the mirrored UID and counter, so it authenticates them.
 *
 * @throws InvalidKeyError when the key is not AES-128
 * @example
 * verifyPlainMirror({ fileKey: '00000000000000000000000000000000', uid: '04DE5F1EACC040', ctr: '00003D', cmac: '94EED9EE65337086' })
 * // { valid: true, mode: 'aes', uid: '04DE5F1EACC040', counter: 61 }
 */
export function verifyPlainMirror(p: VerifyPlainMirrorParameters): PlainMirrorResult {
  const { fileKey, mode, ...message } = p
  return createSunVerifier({ fileKey, mode }).verifyPlainMirror(message)
}
