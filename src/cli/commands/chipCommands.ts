import fs from 'node:fs'
import type { ChipProfileRow } from '../../db/chipProfiles.js'
import type { Store, Repositories } from '../../db/store.js'
import { NotFoundError } from '../../errors.js'
import type { CardSession } from '../../card/cardSession.js'
import type { ReaderSource } from '../../../station/reader.js'
import { FIXTURE_FORMAT } from '../../../station/fixtures/format.js'
import { CardLink } from '../../provisioning/run/cardLink.js'
import { classifyChip, readChip, type ChipReading, type Verdict } from '../../provisioning/run/inspectChip.js'
import { ProvisioningStopped } from '../../provisioning/run/keySession.js'
import { IRREVERSIBLE_CONSEQUENCES, planProfileOf, planProvisioning, type ProvisioningPlan } from '../../provisioning/run/planProvisioning.js'
import { provisionChip, type ProvisionResult } from '../../provisioning/run/provisionChip.js'
import { resetChip, type ResetResult } from '../../provisioning/run/resetChip.js'

/*
 * The `tapgate chip inspect | provision | reset` commands above the reader:
 * waiting for cards, the --record transcript, batch summaries. chip.ts parses
 * flags and prints; nothing here prints a key (the run never returns one).
 * It lives in the CLI, not in provisioning/run, because it opens the station's
 * readers and writes the station's fixture format: the CLI is the layer that
 * may compose the gateway's library with the station app.
 */

/** Why `--record` writes a file only its owner can read. */
export const RECORD_WARNING =
  '--record writes every APDU unredacted: given the old keys (factory keys are public), the secure-messaging traffic reveals the new ones. The file is created with mode 0600; keep it with the keys, or record only with test keys.'

/** The plan for `--dry-run` (and the check before a run): no card, no database write. */
export function dryRunPlan(p: { profile: ChipProfileRow; template: string; lrp?: boolean; randomId?: boolean }): ProvisioningPlan & { consequences: string[] } {
  const plan = planProvisioning({ profile: planProfileOf(p.profile), template: p.template, lrp: p.lrp, randomId: p.randomId })
  return { ...plan, consequences: plan.irreversible.map((i) => IRREVERSIBLE_CONSEQUENCES[i]) }
}

export async function profileOf(store: Repositories, teamId: number, name: string): Promise<ChipProfileRow> {
  const profile = await store.chipProfiles.getByName(teamId, name)
  if (!profile) throw new NotFoundError('chip_profile_not_found', `No chip profile named ${JSON.stringify(name)} in team ${teamId}`)
  return profile
}

/**
 * A JSON Lines transcript in the tap-fixture form: one `tap` event per card. Mode 0600.
 * Always a new file (O_CREAT|O_EXCL): writing over one would lose an earlier transcript, and a
 * symlink planted at the path would have us overwrite (and chmod) its target. Throws EEXIST then.
 */
export class TranscriptRecorder {
  readonly #fd: number
  constructor(file: string, note: string) {
    this.#fd = fs.openSync(file, 'wx', 0o600)
    fs.fchmodSync(this.#fd, 0o600)
    fs.writeSync(this.#fd, `${JSON.stringify({ type: 'meta', format: FIXTURE_FORMAT, createdAt: new Date().toISOString(), note })}\n`)
  }
  card(card: CardSession, link: CardLink, error: string | null): void {
    const expect = error === null ? { verdict: null, error: 'not_sent' } : { verdict: null, error: 'read_failed', message: error }
    fs.writeSync(this.#fd, `${JSON.stringify({ type: 'tap', reader: card.readerName, atr: card.atr, at: new Date().toISOString(), exchanges: link.transcript, expect })}\n`)
  }
  close(): void {
    fs.closeSync(this.#fd)
  }
}

/**
 * Waits for cards on the source's readers; calls `onCard` one card at a time. What `onCard` throws
 * (a refusal is an outcome, so only the unexpected) goes to `onError`: swallowed, it left a
 * single-card command waiting for ever.
 */
export function onCards(source: ReaderSource, onCard: (card: CardSession) => Promise<void>, onError: (error: unknown) => void): void {
  let queue = Promise.resolve()
  source.on('reader', (reader) => {
    reader.on('card', (card) => {
      queue = queue.then(() => onCard(card)).catch(onError)
    })
  })
}

export type InspectReport = Omit<ChipReading, 'version'> & { version: ChipReading['version']; verdict: Verdict; mode: 'aes' | 'lrp' | 'unknown' }

/** `chip inspect`: read-only; the verdict against this gateway's journal. */
export async function inspectCard(store: Repositories, card: CardSession, originalityKey?: Uint8Array): Promise<InspectReport> {
  const reading = await readChip(new CardLink(card), originalityKey)
  const run = reading.uid === null ? undefined : await store.provisioning.latest(reading.uid)
  // The mode is known only for our own chips: probing it would spend an authentication.
  return { ...reading, verdict: classifyChip(reading, run), mode: run?.mode ?? 'unknown' }
}

export type CardOutcome =
  | { ok: true; result: ProvisionResult | ResetResult }
  | { ok: false; reason: ProvisioningStopped['reason']; message: string }

/** One card through a run (provision or reset): its transcript recorded when asked, a refusal as an outcome. */
async function onCard(card: CardSession, recorder: TranscriptRecorder | undefined, run: (link: CardLink) => Promise<ProvisionResult | ResetResult>): Promise<CardOutcome> {
  const link = new CardLink(card)
  try {
    const result = await run(link)
    recorder?.card(card, link, null)
    return { ok: true, result }
  } catch (error) {
    recorder?.card(card, link, (error as Error).message)
    if (error instanceof ProvisioningStopped) return { ok: false, reason: error.reason, message: error.message }
    throw error
  }
}

/** One card through provisionChip. */
export function provisionCard(p: Omit<Parameters<typeof provisionChip>[0], 'link'> & { card: CardSession; recorder?: TranscriptRecorder }): Promise<CardOutcome> {
  return onCard(p.card, p.recorder, (link) => provisionChip({ ...p, link }))
}

/** One card through resetChip. */
export function resetCard(p: Omit<Parameters<typeof resetChip>[0], 'link'> & { card: CardSession; recorder?: TranscriptRecorder }): Promise<CardOutcome> {
  return onCard(p.card, p.recorder, (link) => resetChip({ ...p, link }))
}

/** The one-line progress of a card in `--batch`, and the end-of-batch summary. */
export function outcomeLine(o: CardOutcome): string {
  if (!o.ok) return `refused (${o.reason}): ${o.message}`
  const r = o.result
  if ('how' in r) return `${r.uid} ${r.how === 'new' ? 'provisioned' : r.how} (run ${r.runId}, key version ${r.keyVersion}, first tap verified at counter ${r.counter})`
  return `${r.uid} reset to factory (run ${r.runId}); cannot undo: ${r.cannotUndo.join('; ')}`
}

export function batchSummary(outcomes: CardOutcome[]): { provisioned: number; resumed: number; refused: { reason: string; message: string }[] } {
  const ok = outcomes.flatMap((o) => (o.ok && 'how' in o.result ? [o.result] : []))
  return {
    provisioned: ok.filter((r) => r.how !== 'resumed').length,
    resumed: ok.filter((r) => r.how === 'resumed').length,
    refused: outcomes.flatMap((o) => (o.ok ? [] : [{ reason: o.reason, message: o.message }])),
  }
}
