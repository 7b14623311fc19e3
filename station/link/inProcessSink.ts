import type { Store } from '../../src/db/store.js'
import { BaseError } from '../../src/errors.js'
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
  /** The gateway's logger: one line per tap, like a networked station's. */
  log: SubmitStationTapDeps['log']
}

/**
 * A TapSink that verifies taps in this process, through the same function as
 * POST /station/taps and the station WebSocket (submitStationTap): the station
 * of `npm start`, on the gateway's own readers. No token: the gateway trusts
 * itself, for one team.
 *
 * @example
 * const { store, keyring, now } = app.services
 * const sink = createInProcessSink({ store, keyring, now, teamId, log: app.log })
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
        const outcome = await submitStationTap({ store: p.store, keyring: p.keyring, now: p.now, log: p.log }, { id: null, teamId: p.teamId }, body.data)
        if (outcome.accepted) return { accepted: true, refId: outcome.refId, uid: outcome.uid, counter: outcome.counter, mode: outcome.mode }
        return { accepted: false, reason: outcome.reason, message: outcome.message, detail: outcome.detail }
      } catch (error) {
        // A sealed key and the like: the gateway's code for it, as the HTTP route would answer.
        if (error instanceof BaseError) return { accepted: false, reason: error.code, message: error.message }
        throw error
      }
    },
    async close() {
      closed = true
    },
  }
}
