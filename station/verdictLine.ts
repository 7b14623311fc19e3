import type { StationTap, TapVerdict } from './tap.js'

/** A ref id as a console shows it: its first characters, enough to tell refs apart, never enough to use one. */
export const shortRef = (refId: string): string => `${refId.slice(0, 4)}…`

/**
 * A verdict as one log line: accepted with the UID, counter and ref; refused with the reason and what failed.
 * The ref id is shortened unless `redactRef` is false: a ref is a bearer secret until its first
 * query, and a console or log is read by others (the whole id is for machine output: `--json`).
 */
export function verdictLine(tap: StationTap, verdict: TapVerdict, opts: { redactRef?: boolean } = {}): string {
  if (verdict.accepted) {
    const ref = opts.redactRef === false ? verdict.refId : shortRef(verdict.refId)
    return `accepted ${verdict.uid} counter ${verdict.counter ?? 'none'} ref ${ref}`
  }
  return `refused ${verdict.reason} (${tap.rfUid}): ${verdict.detail ?? verdict.message}`
}
