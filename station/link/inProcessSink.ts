import type { Store } from '../../src/db/store.js'
import { BaseError } from '../../src/errors.js'
import { recordPulledCard, recordReaderStatus } from '../../src/feed/stationStatus.js'
import { StationTapBody } from '../../src/schemas/taps.js'
import { submitStationTap, type SubmitStationTapDeps } from '../../src/stations/submitStationTap.js'
import type { Keyring } from '../../src/taps/createKeyring.js'
import type { StationTap, TapSink, TapVerdict } from '../tap.js'

export type InProcessSinkParameters = {
  store: Store
  keyring: Keyring
  now: () => number
  /** The team whose chips this station serves (a station token's team, over the network). */
  teamId: number
  /**
   * The in-process station's own row (src/stations/stations.ts ensureInProcessStation). Without
   * one (the fixture recorder, benches) taps verify as before and status goes nowhere.
   */
  stationId?: number
  /** For a check-in's guestbook mint (app.services), as for a networked station's taps. */
  chains?: SubmitStationTapDeps['chains']
  config?: SubmitStationTapDeps['config']
  media?: SubmitStationTapDeps['media']
  /** The gateway's logger: one line per tap, like a networked station's. */
  log: SubmitStationTapDeps['log']
}

/**
 * A TapSink that verifies taps in this process, through the same function as
 * POST /station/taps and the station WebSocket (submitStationTap): the station
 * of `npm start`, on the gateway's own readers. No token: the gateway trusts
 * itself, for one team, as its in-process station row. Reader status and
 * pulled cards are written to that station's feed directly (what the station
 * socket does with a networked station's `{ status }` and `{ pulled }`).
 *
 * @example
 * const { store, keyring, now } = app.services
 * const sink = createInProcessSink({ store, keyring, now, teamId, stationId, log: app.log })
 */
export function createInProcessSink(p: InProcessSinkParameters): TapSink {
  let closed = false
  return {
    async submit(tap: StationTap): Promise<TapVerdict> {
      if (closed) throw new Error('the in-process station sink is closed')
      const body = StationTapBody.safeParse(tap)
      if (!body.success) {
        const detail = body.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')
        return { accepted: false, reason: 'validation_failed', message: `Invalid tap: ${detail}`, detail }
      }
      try {
        const outcome = await submitStationTap(p, { id: p.stationId ?? null, teamId: p.teamId }, body.data)
        if (outcome.accepted) return { accepted: true, refId: outcome.refId, uid: outcome.uid, counter: outcome.counter, mode: outcome.mode }
        return { accepted: false, reason: outcome.reason, message: outcome.message, detail: outcome.detail }
      } catch (error) {
        // A sealed key and the like: the gateway's code for it, as the HTTP route would answer.
        if (error instanceof BaseError) return { accepted: false, reason: error.code, message: error.message }
        throw error
      }
    },
    async reportStatus(status) {
      if (!closed && p.stationId !== undefined) await recordReaderStatus(p.store, { stationId: p.stationId, status, now: p.now() })
    },
    async reportPulled({ readerName }) {
      if (!closed && p.stationId !== undefined) await recordPulledCard(p.store, { stationId: p.stationId, readerName, now: p.now() })
    },
    async close() {
      closed = true
    },
  }
}
