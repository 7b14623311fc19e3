import type { StationRow } from '../db/stations.js'
import type { Store } from '../db/store.js'
import type { Keyring } from '../taps/createKeyring.js'
import { TapRejectedError } from '../taps/tapErrors.js'
import { type VerifiedTap, verifyTapBatched } from '../taps/verifyTap.js'

/** A station tap as the gateway receives it (POST /station/taps body, or a WebSocket message's `tap`), already validated. */
export type StationTapInput = {
  /** Normalized: 14 uppercase hex digits. */
  rfUid: string
  url: string
  readerName?: string
  readAt?: string
}

export type StationTapOutcome =
  | ({ accepted: true } & Omit<VerifiedTap, 'chip'>)
  | { accepted: false; statusCode: number; reason: string; message: string; detail: string; uid: string | null }

/** The station a tap came from: a token's station, or (id null) the gateway's own in-process station. */
export type TapStation = Pick<StationRow, 'teamId'> & { id: number | null }

export type SubmitStationTapDeps = {
  store: Store
  keyring: Keyring
  now: () => number
  /** Where the one line per tap goes (the request's logger, or the socket's). */
  log: { info: (obj: object, msg: string) => void }
}

/**
 * Verifies one station tap for the station's team and logs the outcome, the
 * same way whichever transport brought it (HTTP or WebSocket). A refusal
 * (TapRejectedError) is an outcome; anything else (a sealed key, a bug) throws.
 *
 * @example
 * const outcome = await submitStationTap({ store, keyring, now, log: request.log }, station, { rfUid, url })
 */
export async function submitStationTap(deps: SubmitStationTapDeps, station: TapStation, tap: StationTapInput): Promise<StationTapOutcome> {
  const { store, keyring, now, log } = deps
  const context = { stationId: station.id ?? 'in-process', readerName: tap.readerName, readAt: tap.readAt }
  try {
    const verified = await verifyTapBatched(store, keyring, { url: tap.url, source: 'station', rfUid: tap.rfUid, teamId: station.teamId, now: now() })
    log.info({ ...context, uid: verified.uid, counter: verified.counter, mode: verified.mode }, 'station tap accepted')
    const { refId, uid, counter, mode, authenticated, fileData } = verified
    return { accepted: true, refId, uid, counter, mode, authenticated, fileData }
  } catch (error) {
    if (!(error instanceof TapRejectedError)) throw error
    log.info({ ...context, uid: error.uid, reason: error.reason }, 'station tap refused')
    return { accepted: false, statusCode: error.statusCode, reason: error.reason, message: error.message, detail: error.detail, uid: error.uid }
  }
}
