import type { StationTap, TapVerdict } from './tap.js'

/**
 * A verdict as one log line: accepted with the UID, counter and ref; refused with the reason and what failed.
 * `redactRef` shortens the ref id, for logs others read (a ref is a bearer secret, valid once).
 */
export function verdictLine(tap: StationTap, verdict: TapVerdict, opts: { redactRef?: boolean } = {}): string {
  if (verdict.accepted) {
    const ref = opts.redactRef ? `${verdict.refId.slice(0, 4)}…` : verdict.refId
    return `accepted ${verdict.uid} counter ${verdict.counter ?? 'none'} ref ${ref}`
  }
  return `refused ${verdict.reason} (${tap.rfUid}): ${verdict.detail ?? verdict.message}`
}
