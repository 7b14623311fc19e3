import { BaseError } from '../errors.js'

/** Why a tap was refused; stored in the tap log and sent as the error code. */
export type TapRejectReason =
  | 'malformed'
  | 'not_sun_message'
  | 'mac_mismatch'
  | 'mode_mismatch'
  | 'no_mac'
  | 'no_counter'
  | 'unknown_chip'
  | 'counter_replay'
  | 'counter_limit'
  | 'counter_jump'
  | 'uid_mismatch'

const status: Record<TapRejectReason, number> = {
  malformed: 400,
  not_sun_message: 400,
  mode_mismatch: 400,
  no_mac: 400,
  no_counter: 400,
  unknown_chip: 404,
  mac_mismatch: 403,
  uid_mismatch: 403,
  counter_replay: 409,
  counter_limit: 409,
  counter_jump: 409,
}

/** What a person at the chip is told (the tap page); `detail` carries the operator's diagnosis. */
export const plainWords: Record<TapRejectReason, string> = {
  malformed: 'This link is incomplete or damaged. Tap the chip again.',
  not_sun_message: 'This link was not made by a chip we know. Tap the chip itself, not a copied link.',
  mac_mismatch: 'This link failed its authenticity check. Tap the chip itself, not a copied or edited link.',
  mode_mismatch: 'This chip is set up differently from what the gateway expects. Ask staff for help.',
  no_mac: 'This chip sends no signature, so its taps cannot be trusted.',
  no_counter: 'This chip sends no tap counter, so its taps cannot be trusted.',
  unknown_chip: 'This chip is not registered here.',
  counter_replay: 'This link has already been used. Tap the chip again for a fresh one.',
  counter_limit: 'This chip has reached the end of its tap counter and can no longer be verified.',
  counter_jump: 'This tap counter is far ahead of the last one seen. Ask staff for help.',
  uid_mismatch: 'The link read does not belong to the chip on the reader.',
}

/**
 * A tap that was refused. Thrown after the rejection is written to the tap
 * log; `detail` is for operators (logs, the station, `tapgate sun verify`).
 */
export class TapRejectedError extends BaseError {
  override name = 'TapRejectedError'
  readonly reason: TapRejectReason
  readonly detail: string
  readonly uid: string | null

  constructor(reason: TapRejectReason, detail: string, uid: string | null = null) {
    super(status[reason], reason, `${plainWords[reason]} (${detail})`)
    this.reason = reason
    this.detail = detail
    this.uid = uid
  }
}
