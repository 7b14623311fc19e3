import type { KeyInput } from './aesKey.js'
import { createSunVerifier, type SunMessage } from './createSunVerifier.js'
import type { SunMode, SunResult } from './sunResult.js'

export type VerifySunMessageParameters = SunMessage & {
  /** SDMMetaReadKey: decrypts PICCData. */
  metaKey: KeyInput
  /** SDMFileReadKey: SDMMAC and SDMENCFileData. */
  fileKey: KeyInput
  /** The chip's mode; 'auto' (default) infers it from the PICCData length. */
  mode?: SunMode | 'auto'
}

/**
 * Verifies one encrypted SUN message. For a stream of taps keep a verifier from
 * `createSunVerifier` instead: this one-shot form prepares the keys every call.
 *
 * @throws InvalidKeyError when a key is not AES-128
 * @example
 * verifySunMessage({
 *   metaKey: '00000000000000000000000000000000', fileKey: '00000000000000000000000000000000',
 *   piccData: 'EF963FF7828658A599F3041510671E88', sdmmac: '94EED9EE65337086', macInput: '',
 * }) // { valid: true, mode: 'aes', uid: '04DE5F1EACC040', counter: 61, fileData: null, piccDataTag: 0xC7 }
 */
export function verifySunMessage(p: VerifySunMessageParameters): SunResult {
  const { metaKey, fileKey, mode, ...message } = p
  return createSunVerifier({ metaKey, fileKey, mode }).verify(message)
}
