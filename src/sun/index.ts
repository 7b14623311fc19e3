/**
 * Tap verification crypto: NTAG 424 DNA SUN (AES and LRP), plain mirrors,
 * NTAG 21x ASCII mirrors and key diversification. node:crypto only.
 */
export { aesCmac, aesCmacSubkeys, type AesCmacSubkeys } from './aesCmac.js'
export { createAesEcb, type AesEcb } from './aesEcb.js'
export { InvalidKeyError, toAesKey, type KeyInput } from './aesKey.js'
export {
  createSunVerifier,
  MAX_ENC_FILE_DATA_HEX_LENGTH,
  MAX_MAC_INPUT_LENGTH,
  type PiccDataResult,
  type PlainMirrorMessage,
  type SunMessage,
  type SunVerifier,
  type SunVerifierOptions,
  type VerifyOptions,
} from './createSunVerifier.js'
export { decryptLrpPiccData, decryptPiccData, type DecryptedPiccData, type DecryptPiccDataParameters } from './decryptPiccData.js'
export { deriveBoltCardKeys, type BoltCardKeys, type DeriveBoltCardKeysParameters } from './deriveBoltCardKeys.js'
export { deriveSdmBackendMetaKey, deriveSdmBackendTagKey, type DeriveSdmBackendTagKeyParameters } from './deriveSdmBackendKey.js'
export { an10922Input, DiversificationInputError, diversifyAn10922, type DiversifyAn10922Parameters } from './diversifyAn10922.js'
export {
  extractSunFields,
  MAX_TAP_URL_LENGTH,
  type ExtractedNtag21xMirror,
  type ExtractedPlainMirror,
  type ExtractedSunMessage,
  type ExtractSunFieldsErrorType,
  type ExtractSunFieldsRejected,
  type ExtractSunFieldsReturnType,
} from './extractSunFields.js'
export { generateSunMessage, type GeneratedSunMessage, type GenerateSunMessageParameters } from './generateSunMessage.js'
export { parseHex, toHex } from './hex.js'
export { createLrp, lrpEval, lrpPlaintexts, lrpUpdatedKeys, type Lrp } from './lrp.js'
export { lrpCmac, lrpCmacSubkeys, type LrpCmacSubkeys } from './lrpCmac.js'
export { lricbDecrypt, lricbEncrypt, LricbError, type LricbParameters } from './lricb.js'
export { lrpSessionKey, writeLrpSessionVector } from './lrpSessionKey.js'
export { macEquals } from './macEquals.js'
export { describeUriPrefix, NDEF_URI_PREFIXES, NDEF_URI_TEXT_OFFSET, ndefUriPrefix, type NdefUriPrefix } from './ndefUriPrefix.js'
export { formatNtag21xMirror, parseNtag21xMirror, type Ntag21xMirror } from './ntag21xMirror.js'
export { parsePiccData, writePiccFields, type PiccFields } from './parsePiccData.js'
export { decryptSdmFileData, sdmFileDataIv } from './sdmFileData.js'
export { sdmMac, truncateMac } from './sdmMac.js'
export { sdmSessionKeys, writeSessionVector, type SdmSessionKeys } from './sdmSessionKeys.js'
export { checkSunLayout, isSunOffsetLayout, SunLayoutError, type SunLayout, type SunOffsetLayout, type SunParamLayout } from './sunLayout.js'
export type { PlainMirrorResult, PlainMirrorVerified, SunMode, SunReason, SunRejected, SunResult, SunVerified } from './sunResult.js'
export { verifyPlainMirror, type VerifyPlainMirrorParameters } from './verifyPlainMirror.js'
export { verifySunMessage, type VerifySunMessageParameters } from './verifySunMessage.js'
