import type { Config } from '../config.js'
import type { ChipRow } from '../db/chips.js'

/** How far a tap's counter may run ahead of the last accepted one (config `taps`). */
export type CounterRules = Config['taps']

/** The config defaults, for keyrings built outside the app (CLI, benches, tests). */
export const defaultCounterRules: CounterRules = { maxCounterJump: 1000 }

/** A jump limit and the setting it comes from (named in the refusal, so staff know what to change). */
export type CounterJumpLimit = { max: number; setting: string }

/**
 * The jump limit for a tap of this kind: always for NTAG 21x (nothing protects
 * its counter, so one forged `ctr=FFFFFE` would otherwise lock the chip out for
 * good), for NTAG 424 DNA only when configured (its MAC proves the chip wrote
 * the counter, so a jump is reads that never reached the gateway).
 */
export function counterJumpLimit(rules: CounterRules, mode: 'aes' | 'lrp' | 'ntag21x'): CounterJumpLimit | null {
  if (mode === 'ntag21x') return { max: rules.maxCounterJump, setting: 'taps.maxCounterJump' }
  return rules.ntag424MaxCounterJump === undefined ? null : { max: rules.ntag424MaxCounterJump, setting: 'taps.ntag424MaxCounterJump' }
}

/** Why an NTAG 21x chip's taps must carry a counter, or null when this one may come without. */
export function ntag21xCounterDemand(chip: Pick<ChipRow, 'counterMirror' | 'lastCounter'>): string | null {
  if (chip.counterMirror === 1) return 'it is registered as mirroring its NFC counter (counterMirror true)'
  // Once seen, always required: else a copied UID-only URL would pass where a counter mirror is expected.
  if (chip.lastCounter !== null) return `it has presented a counter before (last accepted ${chip.lastCounter})`
  return null
}

/**
 * A counter too far above the last accepted one (or above 0 for a chip never
 * tapped: NFC counters start there), as the refusal's detail; null when fine.
 */
export function counterJump(counter: number, lastCounter: number | null, limit: CounterJumpLimit | null): string | null {
  if (limit === null) return null
  const base = lastCounter ?? 0
  if (counter - base <= limit.max) return null
  const since = lastCounter === null ? 'the chip has no accepted counter yet, so it counts from 0' : `the last accepted counter ${lastCounter}`
  return `counter ${counter} is ${counter - base} above ${since}; at most ${limit.max} is accepted (${limit.setting}): a forged URL, or a chip read that often away from the gateway (after checking the chip, "tapgate taps set-counter" moves past it)`
}
