/** NTAG 424 DNA secure messaging mode. A chip is configured for exactly one. */
export type SunMode = 'aes' | 'lrp'

/**
 * Why a SUN message was rejected. The codes are stable: the gateway stores them
 * in the tap log and returns them to clients. (Counter replay and limits are the
 * gateway's: the library does not know the last accepted counter.)
 *
 * - `malformed`: a field is not hex, or has a length no chip produces.
 * - `not_sun_message`: PICCData decrypts to an invalid PICCDataTag or UID length.
 * - `mac_mismatch`: everything decrypts, but the SDMMAC is not the chip's.
 * - `mode_mismatch`: the PICCData length belongs to the other mode than the pinned one.
 */
export type SunReason = 'malformed' | 'not_sun_message' | 'mac_mismatch' | 'mode_mismatch'

export type SunRejected = {
  valid: false
  reason: SunReason
  /** Plain-words explanation aimed at the operator, pointing at the likely mistake. Never contains key material. */
  detail: string
}

/** A verified encrypted SUN message. */
export type SunVerified = {
  valid: true
  mode: SunMode
  /** 14 uppercase hex characters, or null when the chip mirrors the counter only (PICCDataTag 0x40). */
  uid: string | null
  /** SDMReadCtr, or null when the chip mirrors the UID only; 0 is a real counter value. */
  counter: number | null
  /** Decrypted SDMENCFileData as uppercase hex, or null when the message carries none. */
  fileData: string | null
  /** The decrypted PICCDataTag byte (0xC7 for UID and counter). */
  piccDataTag: number
}

/** A verified plain UID/counter mirror with SDMMAC. */
export type PlainMirrorVerified = {
  valid: true
  mode: SunMode
  uid: string
  counter: number
}

export type SunResult = SunVerified | SunRejected
export type PlainMirrorResult = PlainMirrorVerified | SunRejected

/**
 * Builds a rejection.
 *
 * @example
 * reject('malformed', 'sdmmac must be 16 hex characters')
 */
export function reject(reason: SunReason, detail: string): SunRejected {
  return { valid: false, reason, detail }
}
