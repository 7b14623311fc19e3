import type { ChipProfileRow } from '../../db/chipProfiles.js'
import type { Repositories } from '../../db/store.js'
import { NotFoundError } from '../../errors.js'
import type { CardSession } from '../../card/cardSession.js'
import { CardLink } from './cardLink.js'
import { ProvisioningStopped } from './keySession.js'
import { IRREVERSIBLE_CONSEQUENCES, planProfileOf, planProvisioning, type ProvisioningPlan } from './planProvisioning.js'
import { provisionChip, type ProvisionResult } from './provisionChip.js'
import { resetChip, type ResetResult } from './resetChip.js'

/*
 * A provisioning run over a stack of cards, as `tapgate chip provision --batch` and the console's
 * run on the gateway's own readers (src/console/consoleProvisioning.ts) both make it: the profile
 * looked up and the plan checked before any card, each card through provisionChip (or resetChip)
 * with a refusal as an outcome rather than an error, and the summary. One copy, so the console
 * cannot drift from the CLI. Nothing here returns or prints a key.
 */

/** Where a card's APDU transcript goes when the run records one (the CLI's --record file). */
export interface CardRecorder {
  card(card: CardSession, link: CardLink, error: string | null): void
}

/** The plan for `--dry-run` (and the check before a run): no card, no database write. */
export function dryRunPlan(p: { profile: ChipProfileRow; template: string; lrp?: boolean; randomId?: boolean }): ProvisioningPlan & { consequences: string[] } {
  const plan = planProvisioning({ profile: planProfileOf(p.profile), template: p.template, lrp: p.lrp, randomId: p.randomId })
  return { ...plan, consequences: plan.irreversible.map((i) => IRREVERSIBLE_CONSEQUENCES[i]) }
}

/**
 * The team's chip profile of that name.
 *
 * @throws NotFoundError chip_profile_not_found (another team's profile too)
 */
export async function profileOf(store: Repositories, teamId: number, name: string): Promise<ChipProfileRow> {
  const profile = await store.chipProfiles.getByName(teamId, name)
  if (!profile) throw new NotFoundError('chip_profile_not_found', `No chip profile named ${JSON.stringify(name)} in team ${teamId}`)
  return profile
}

export type CardOutcome =
  | { ok: true; result: ProvisionResult | ResetResult }
  | { ok: false; reason: ProvisioningStopped['reason']; message: string }

/** One card through a run (provision or reset): its transcript recorded when asked, a refusal as an outcome. */
async function onCard(card: CardSession, recorder: CardRecorder | undefined, run: (link: CardLink) => Promise<ProvisionResult | ResetResult>): Promise<CardOutcome> {
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

/**
 * One card through provisionChip.
 *
 * @example
 * const outcome = await provisionCard({ store, secret, card, teamId: 1, profile, template })
 * console.log(outcomeLine(outcome))
 */
export function provisionCard(p: Omit<Parameters<typeof provisionChip>[0], 'link'> & { card: CardSession; recorder?: CardRecorder }): Promise<CardOutcome> {
  return onCard(p.card, p.recorder, (link) => provisionChip({ ...p, link }))
}

/** One card through resetChip. */
export function resetCard(p: Omit<Parameters<typeof resetChip>[0], 'link'> & { card: CardSession; recorder?: CardRecorder }): Promise<CardOutcome> {
  return onCard(p.card, p.recorder, (link) => resetChip({ ...p, link }))
}

/** The one-line progress of a card in a batch (the CLI's stdout, the console's card list). */
export function outcomeLine(o: CardOutcome): string {
  if (!o.ok) return `refused (${o.reason}): ${o.message}`
  const r = o.result
  if ('how' in r) return `${r.uid} ${r.how === 'new' ? 'provisioned' : r.how} (run ${r.runId}, key version ${r.keyVersion}, first tap verified at counter ${r.counter})`
  return `${r.uid} reset to factory (run ${r.runId}); cannot undo: ${r.cannotUndo.join('; ')}`
}

/** The end-of-batch summary: provisioned (new or re-provisioned), resumed, and each refusal with why. */
export function batchSummary(outcomes: CardOutcome[]): { provisioned: number; resumed: number; refused: { reason: string; message: string }[] } {
  const ok = outcomes.flatMap((o) => (o.ok && 'how' in o.result ? [o.result] : []))
  return {
    provisioned: ok.filter((r) => r.how !== 'resumed').length,
    resumed: ok.filter((r) => r.how === 'resumed').length,
    refused: outcomes.flatMap((o) => (o.ok ? [] : [{ reason: o.reason, message: o.message }])),
  }
}
