/**
 * The NTAG 424 DNA command layer for provisioning: APDUs, authentication (AES
 * and LRP, reader and card side), secure messaging, and the provisioning
 * commands in pure form. No I/O: a caller transmits `exchange.apdu` and passes
 * the answer to `exchange.parse`. node:crypto and src/sun only. See docs/provisioning.md.
 */
export {
  commandName,
  expectIsoOk,
  expectStatus,
  INS,
  MAX_NATIVE_DATA,
  NDEF_APPLICATION_DF_NAME,
  nativeApdu,
  NTAG424_FILES,
  readBinary,
  selectFile,
  selectNdefApplication,
  splitResponse,
  updateBinary,
  type ResponseApdu,
} from './apdu.js'
export {
  authenticateEv2First,
  authenticateEv2NonFirst,
  CardEv2Authentication,
  Ev2Authentication,
  ev2SessionKeys,
  parseAuthenticateFirstData,
  type AuthenticateEv2FirstOptions,
  type AuthenticateEv2NonFirstOptions,
  type AuthenticateFirstRequest,
  type CardEv2FirstOptions,
  type Ev2SessionKeyMaterial,
} from './authenticateEv2.js'
export {
  authenticateLrpFirst,
  authenticateLrpNonFirst,
  CardLrpAuthentication,
  LRP_PCD_CAP2,
  lrpAuthSessionKeys,
  LrpAuthentication,
  lrpSessionKeysFromSv,
  lrpSessionVector,
  type AuthenticateLrpFirstOptions,
  type AuthenticateLrpNonFirstOptions,
  type LrpSessionKeyMaterial,
} from './authenticateLrp.js'
export { CardSecureSession, RC, type AcceptedCommand, type CardSecureSessionOptions } from './cardSecureMessaging.js'
export { changeKey, changeKeyData, decodeChangeKeyData, type ChangeKeyParameters, type ChangeKeyResult, type DecodedChangeKey } from './changeKey.js'
export { crc32nk } from './crc32nk.js'
export { SecureMessagingError, type SecureMessagingErrorKind } from './errors.js'
export {
  changeFileSettings,
  decodeChangeFileSettingsData,
  decodeFileSettings,
  encodeFileSettings,
  encodeGetFileSettingsAnswer,
  FACTORY_NDEF_SETTINGS,
  FileSettingsError,
  getFileSettings,
  MIRROR_LENGTH,
  validateFileSettings,
  type AccessCondition,
  type AccessRights,
  type ChangeFileSettingsParameters,
  type DecodedFileSettings,
  type FileSettings,
  type SdmAccessRights,
  type SdmOffsets,
  type SdmOptions,
  type ValidateFileSettingsOptions,
} from './fileSettings.js'
export { getCardUid } from './getCardUid.js'
export { getKeyVersion } from './getKeyVersion.js'
export { GET_VERSION_APDUS, parseGetVersion, type Ntag424Version, type VersionPart } from './getVersion.js'
export {
  ndefFileOffset,
  NdefUrlError,
  planNdefUrl,
  PROVISIONED_NDEF_ACCESS_RIGHTS,
  sdmFileSettings,
  type NdefPlaceholder,
  type NdefUrlOptions,
  type NdefUrlPlan,
  type SdmFileSettingsParameters,
} from './ndefUrl.js'
export {
  createTestOriginalityKey,
  NXP_NTAG424_ORIGINALITY_PUBLIC_KEY,
  readSig,
  signOriginality,
  verifyOriginality,
  type TestOriginalityKey,
  type VerifyOriginalityParameters,
} from './originality.js'
export { createSecureSession, SecureSession, type CommandOptions, type Exchange, type ResponseOptions, type SecureSessionOptions } from './secureMessaging.js'
export { configurationData, setConfiguration, type ConfigurationChange } from './setConfiguration.js'
export {
  aesCbc,
  aesSessionIv,
  aesSessionKeys,
  commandMacInput,
  decryptSessionData,
  encryptSessionData,
  lrpSessionKeysFromMaster,
  macT,
  padM2,
  responseMacInput,
  sessionMac,
  unpadM2,
  type AesSessionKeys,
  type CommMode,
  type Direction,
  type LrpSessionKeys,
  type SessionKeys,
} from './smCrypto.js'
export {
  describeStatusWord,
  formatStatusWord,
  NtagStatusError,
  SW_ADDITIONAL_FRAME,
  SW_ISO_OK,
  SW_OK,
  SW_READ_SIG_OK,
  type IsoStatusName,
  type NativeStatusName,
  type StatusName,
  type StatusWordInfo,
} from './statusWords.js'
export { fileDataHeader, ndefWritePlan, readData, writeData, type ReadDataParameters, type WriteDataParameters, type WriteStep } from './writeData.js'
