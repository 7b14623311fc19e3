import type { Chains } from '../chain/chains.js'
import type { Config } from '../config.js'
import type { StationRow } from '../db/stations.js'
import type { Store } from '../db/store.js'
import type { Tx } from '../db/types.js'
import { claimSummary } from '../claims/claimViews.js'
import { giveClaimAddress } from '../claims/giveClaimAddress.js'
import { BaseError } from '../errors.js'
import { type RecordedTap, recordAcceptedTap, refusedTapState, type TapCheckIn } from './recordAcceptedTap.js'
import type { MediaCache } from '../media/mediaCache.js'
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
  | ({ accepted: true; checkIn?: TapCheckIn } & Omit<VerifiedTap, 'chip'>)
  | { accepted: false; statusCode: number; reason: string; message: string; detail: string; uid: string | null }

/** The station a tap came from: a token's station, or (id null) the gateway's own in-process station. */
export type TapStation = Pick<StationRow, 'teamId'> & { id: number | null }

export type SubmitStationTapDeps = {
  store: Store
  keyring: Keyring
  now: () => number
  /** Where the one line per tap goes (the request's logger, or the socket's). */
  log: { info: (obj: object, msg: string) => void }
  /** To queue a check-in's guestbook mint (app.services); without them a check-in counts and mints nothing. */
  chains?: Chains
  config?: Config
  /** Fetches a claim card's image at once (app.services.media), so it shows, and shows offline later. */
  media?: Pick<MediaCache, 'prefetch'>
}

/**
 * Verifies one station tap for the station's team and logs the outcome, the
 * same way whichever transport brought it (HTTP or WebSocket). A refusal
 * (TapRejectedError) is an outcome; anything else (a sealed key, a bug) throws.
 *
 * A station with a row gets a feed row per tap (src/stations/recordAcceptedTap.ts): in check-in mode an
 * accepted tap checks the chip in (and may queue its guestbook mint), a closed station verifies
 * nothing (no ref, no counter spent: 409 station_closed), refusals become `replay`, `unknown` or
 * `refused` rows.
 *
 * @example
 * const outcome = await submitStationTap({ ...app.services, log: request.log }, station, { rfUid, url })
 */
export async function submitStationTap(deps: SubmitStationTapDeps, station: TapStation, tap: StationTapInput): Promise<StationTapOutcome> {
  const { store, keyring, now, log } = deps
  const context = { stationId: station.id ?? 'in-process', readerName: tap.readerName, readAt: tap.readAt }
  const reader = tap.readerName ? { readerName: tap.readerName } : {}
  const row = station.id === null ? undefined : await store.stations.get(station.id)
  if (row?.mode === 'closed') {
    // A closed station spends nothing: the chip's counter and a ref stay for an open one.
    await store.tx(async (tx) => {
      await tx.stationEvents.append(row.id, 'tap', { state: 'closed', uid: tap.rfUid, ...reader }, now())
    })
    log.info({ ...context, uid: tap.rfUid, reason: 'station_closed' }, 'station tap refused')
    const message = 'This station is closed; staff can open it again'
    return { accepted: false, statusCode: 409, reason: 'station_closed', message, detail: `station ${row.id} is closed`, uid: null }
  }
  // What the tap causes at a station with a row commits in the tap's own transaction (issue 18),
  // and its kiosks and the relayer hear of it only once that commits (the store tells them): a tap
  // rolled back says nothing.
  const consequence = row
    ? (accepted: { refId: string; chip: { uid: string }; counter: number | null }, tx: Tx) =>
        recordAcceptedTap(tx, deps, row.id, { uid: accepted.chip.uid, counter: accepted.counter, refId: accepted.refId, ...reader })
    : undefined
  let verified: VerifiedTap & { caused?: RecordedTap }
  try {
    verified = await verifyTapBatched(
      store,
      keyring,
      { url: tap.url, source: 'station', rfUid: tap.rfUid, teamId: station.teamId, ...(row ? { stationId: row.id } : {}), now: now() },
      consequence,
    )
  } catch (error) {
    if (!(error instanceof TapRejectedError)) throw error
    log.info({ ...context, uid: error.uid, reason: error.reason }, 'station tap refused')
    if (row) {
      const data = { state: refusedTapState(error.reason), uid: error.uid, reason: error.reason, detail: error.detail, ...reader }
      await store.tx(async (tx) => {
        await tx.stationEvents.append(row.id, 'tap', data, now())
      })
    }
    return { accepted: false, statusCode: error.statusCode, reason: error.reason, message: error.message, detail: error.detail, uid: error.uid }
  }
  log.info({ ...context, uid: verified.uid, counter: verified.counter, mode: verified.mode }, 'station tap accepted')
  const { refId, uid, counter, mode, authenticated, fileData, caused } = verified
  if (!caused) return { accepted: true, refId, uid, counter, mode, authenticated, fileData }
  const { result, known, image } = caused
  if (image) deps.media?.prefetch(image.slice(image.lastIndexOf('/') + 1))
  if (known) await claimKnownAddress(deps, known)
  return { accepted: true, refId, uid, counter, mode, authenticated, fileData, ...(result ? { checkIn: result } : {}) }
}

/**
 * A claim station's tap for which the gateway knows the address (a 2-tap registration, the chip's
 * wallet): the token goes at once, and the tap's row says so. Refused (the address cannot receive,
 * the chain is unreachable…), the claim stays open for another address and staff see why.
 */
async function claimKnownAddress(deps: SubmitStationTapDeps, known: NonNullable<RecordedTap['known']>): Promise<void> {
  const { store } = deps
  if (deps.chains && deps.config) {
    try {
      await giveClaimAddress({ ...deps, chains: deps.chains, config: deps.config }, { claimId: known.claimId, recipient: known.recipient, via: 'known', tapRow: known.tapRow })
      return
    } catch (error) {
      if (!(error instanceof BaseError)) throw error
      const now = deps.now()
      await store.tx(async (tx) => {
        const claim = (await tx.claims.get(known.claimId))!
        const detail = `the known address ${known.recipient} was refused: ${error.code}: ${error.message}`
        await tx.stationEvents.append(claim.stationId, 'tap', { ...known.tapRow, state: 'product', detail, claim: await claimSummary(tx, claim, now) }, now)
      })
    }
  }
}
