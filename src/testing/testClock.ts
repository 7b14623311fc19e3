import { rpc } from '../chain/embeddedChain.js'

/**
 * The embedded chain's idea of time: one block per 12 s, as `chain.idleBlockSeconds` mines them by
 * default. Moving a test gateway's clock mines the blocks that time would have brought, so a
 * signature valid for N blocks expires as it would on a running gateway.
 */
export const BLOCK_SECONDS = 12

/** A test gateway's clock: real time plus an offset that only moves forward. */
export type TestClock = {
  /** The gateway's now, in ms since the epoch. */
  now(): number
  /** Moves time forward by `ms` (≥ 0): OTP and session expiry, claim windows, and the chain's blocks and timestamps. */
  advance(ms: number): Promise<void>
  /** Moves time to `date`, which must not be in the gateway's past. */
  set(date: Date | number): Promise<void>
}

/**
 * @param chainUrl the embedded chain's RPC, whose blocks follow the clock; null without a chain
 * @param offset the starting offset; kept outside so a reset can put it back
 */
export function createTestClock(chainUrl: string | null, offset: { ms: number }): TestClock {
  // Whole blocks only: the remainder of a short advance is carried to the next one.
  let unminedMs = 0
  const advance = async (ms: number) => {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`clock.advance takes a number of ms ≥ 0, not ${ms}`)
    offset.ms += ms
    if (chainUrl === null) return
    unminedMs += ms
    const blocks = Math.floor(unminedMs / (BLOCK_SECONDS * 1000))
    if (blocks === 0) return
    unminedMs -= blocks * BLOCK_SECONDS * 1000
    // anvil_mine(n, interval): n blocks, each timestamp `interval` s after the one before.
    await rpc(chainUrl, 'anvil_mine', [`0x${blocks.toString(16)}`, `0x${BLOCK_SECONDS.toString(16)}`])
  }
  const now = () => Date.now() + offset.ms
  return {
    now,
    advance,
    async set(date) {
      const target = typeof date === 'number' ? date : date.getTime()
      if (!Number.isFinite(target)) throw new RangeError('clock.set takes a valid date')
      const ms = target - now()
      if (ms < 0) throw new RangeError(`clock.set cannot go back in time (${new Date(target).toISOString()} is before the gateway's now): reset() or restore() does`)
      await advance(ms)
    },
  }
}
