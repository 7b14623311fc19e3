import crypto from 'node:crypto'
import type { CardSession } from '../card/cardSession.js'
import type { GiveBack, LocalReader, LocalReadersSlot } from '../card/localReaders.js'
import type { ChipProfileRow } from '../db/chipProfiles.js'
import type { Store } from '../db/store.js'
import { BaseError, ConflictError, NotFoundError, UnavailableError, ValidationError } from '../errors.js'
import { ProvisioningPlanError } from '../provisioning/run/planProvisioning.js'
import { dryRunPlan, outcomeLine, profileOf, provisionCard, type CardOutcome } from '../provisioning/run/provisioningBatch.js'

/*
 * `tapgate chip provision --batch` from the console, on the gateway's own readers: while a run is
 * on, a card placed on them is provisioned (the in-process station lends them, src/card/localReaders.ts),
 * and when it ends they read taps again. The same plan check and the same provisionCard as the CLI
 * (src/provisioning/run/provisioningBatch.ts); one run at a time per gateway, kept in memory: a
 * run is a person standing at the reader, so a restart ends it. Never a key in an answer or a log.
 */

/** A run with no card for this long ends by itself: a run left on would keep the door's reader from reading taps. */
export const PROVISIONING_IDLE_MS = 30 * 60_000

export type ConsoleProvisionedCard = {
  at: string
  uid: string | null
  outcome: 'provisioned' | 'resumed' | 'refused'
  reason: string | null
  message: string
}

export type ConsoleProvisioningRun = {
  id: string
  profile: string
  urlTemplate: string
  startedAt: string
  endedAt: string | null
  cards: ConsoleProvisionedCard[]
  summary: { provisioned: number; resumed: number; refused: number }
}

export type ConsoleProvisioningView = { readers: LocalReader[] | null; unavailable: string | null; run: ConsoleProvisioningRun | null }

export type ConsoleProvisioningDeps = {
  store: Store
  /** Seals the chips' new keys, as the CLI's run does with the gateway's secret. */
  secret: Buffer
  localReaders: LocalReadersSlot
  now: () => number
  log: { info: (line: string) => void; error: (line: string) => void }
  /** Default PROVISIONING_IDLE_MS. */
  idleMs?: number
}

export type StartProvisioningParameters = { teamId: number; profile: string; urlTemplate?: string; allowUnverified?: boolean }

type Run = {
  id: string
  teamId: number
  profile: ChipProfileRow
  template: string
  allowUnverified: boolean
  startedAt: number
  endedAt: number | null
  cards: ConsoleProvisionedCard[]
  giveBack: GiveBack
  idle: NodeJS.Timeout | undefined
  ending: Promise<void> | null
}

/** The CLI's words in the console: the run has no flags to give. */
const NO_TEMPLATE = (profile: string) => `Profile ${JSON.stringify(profile)} stores no URL template: give one (e.g. https://tap.example/t?e={picc}&c={mac})`

/**
 * The gateway's one provisioning run from the console, and its readers, for the console's routes
 * (routes/consoleProvisioning.ts). A run and the readers are shown to the team they are for only.
 *
 * @example
 * const desk = createConsoleProvisioning({ store, secret, localReaders, now: Date.now, log })
 * await desk.start({ teamId: 1, profile: 'shop-tags', allowUnverified: true })
 * await desk.stop({ teamId: 1 })
 */
export function createConsoleProvisioning(deps: ConsoleProvisioningDeps) {
  const { store, secret, localReaders, now, log } = deps
  const idleMs = deps.idleMs ?? PROVISIONING_IDLE_MS
  /** The run on now, or the last one (ended), whose summary its team still reads. */
  let last: Run | null = null
  /** A start between its checks and its borrow: a second start then is as busy as a run. */
  let starting = false

  /** The readers this team's console may use: those of the gateway's station when it is the team's. */
  function readersFor(teamId: number): { readers: LocalReader[]; unavailable: null } | { readers: null; unavailable: string } {
    const state = localReaders.get()
    if (state.readers === null) return { readers: null, unavailable: `This gateway has no PC/SC readers to provision on: ${state.unavailable}` }
    // The readers are a station's door: only the team whose taps they read may stop that for a run.
    if (state.readers.teamId !== teamId) return { readers: null, unavailable: "This gateway's readers are another team's station: only that team's console provisions on them" }
    return { readers: state.readers.readers(), unavailable: null }
  }

  /** Counted from the card list the page shows: a card the run failed on (not a refusal) is refused there too. */
  const summaryOf = (run: Run): ConsoleProvisioningRun['summary'] => ({
    provisioned: run.cards.filter((c) => c.outcome === 'provisioned').length,
    resumed: run.cards.filter((c) => c.outcome === 'resumed').length,
    refused: run.cards.filter((c) => c.outcome === 'refused').length,
  })

  function view(run: Run): ConsoleProvisioningRun {
    return {
      id: run.id,
      profile: run.profile.name,
      urlTemplate: run.template,
      startedAt: new Date(run.startedAt).toISOString(),
      endedAt: run.endedAt === null ? null : new Date(run.endedAt).toISOString(),
      cards: [...run.cards],
      summary: summaryOf(run),
    }
  }

  function armIdle(run: Run) {
    clearTimeout(run.idle)
    if (run.endedAt !== null || run.ending) return
    run.idle = setTimeout(() => {
      log.info(`console provisioning run ${run.id} ended: no card for ${Math.round(idleMs / 60_000)} minutes`)
      void end(run)
    }, idleMs)
    // A gateway that is stopping does not wait for an idle run.
    run.idle.unref()
  }

  /** Ends the run once the card being written is done: the readers are taps again. */
  function end(run: Run): Promise<void> {
    run.ending ??= (async () => {
      clearTimeout(run.idle)
      await run.giveBack()
      run.endedAt = now()
      const s = summaryOf(run)
      log.info(`console provisioning run ${run.id} ended: ${s.provisioned} provisioned, ${s.resumed} resumed, ${s.refused} refused`)
    })()
    return run.ending
  }

  /** One card of the run: provisionCard as the CLI calls it, its line as the CLI prints it. */
  async function onCard(run: Run, card: CardSession): Promise<void> {
    clearTimeout(run.idle)
    let outcome: CardOutcome
    try {
      outcome = await provisionCard({ store, secret, card, teamId: run.teamId, profile: run.profile, template: run.template, allowUnverified: run.allowUnverified })
    } catch (error) {
      // Not a refusal (the database, a bug): the CLI stops there; a console run reports it and takes the next card.
      const message = `the run failed on this card: ${(error as Error).message}`
      log.error(`${card.readerName}: console provisioning run ${run.id}: ${message}`)
      run.cards.push({ at: new Date(now()).toISOString(), uid: null, outcome: 'refused', reason: 'failed', message })
      armIdle(run)
      return
    }
    const line = outcomeLine(outcome)
    const uid = outcome.ok ? outcome.result.uid : null
    const how = outcome.ok && 'how' in outcome.result ? outcome.result.how : null
    run.cards.push({
      at: new Date(now()).toISOString(),
      uid,
      outcome: outcome.ok ? (how === 'resumed' ? 'resumed' : 'provisioned') : 'refused',
      reason: outcome.ok ? null : outcome.reason,
      message: line,
    })
    log.info(`${card.readerName}: console provisioning run ${run.id}: ${line}`)
    armIdle(run)
  }

  return {
    /** The readers and this team's run (another team's is null: it must not leak). */
    get(p: { teamId: number }): ConsoleProvisioningView {
      return { ...readersFor(p.teamId), run: last !== null && last.teamId === p.teamId ? view(last) : null }
    },

    /**
     * Starts a run on the gateway's readers: the profile and the plan checked first, as the CLI
     * checks them before it opens a reader.
     *
     * @throws ConflictError provisioning_busy (a run is on, any team's)
     * @throws UnavailableError readers_unavailable
     * @throws BaseError 404 chip_profile_not_found (field `profile`)
     * @throws ValidationError provisioning_plan_invalid (field `urlTemplate`, or `profile` for an LRP profile)
     */
    async start(p: StartProvisioningParameters): Promise<ConsoleProvisioningRun> {
      if (starting || (last !== null && last.endedAt === null)) throw new ConflictError('provisioning_busy', "A provisioning run is on on this gateway's readers; stop it first, or wait for it to end")
      starting = true
      try {
        const readers = readersFor(p.teamId)
        if (readers.readers === null) throw new UnavailableError('readers_unavailable', readers.unavailable)
        let profile: ChipProfileRow
        try {
          profile = await profileOf(store, p.teamId, p.profile)
        } catch (error) {
          if (error instanceof NotFoundError) throw new BaseError(404, error.code, error.message, { errors: { profile: `No chip profile named ${JSON.stringify(p.profile)} in this team` } })
          throw error
        }
        // Switching a chip to LRP (or a random ID) can never be undone: a terminal and --irreversible, not a button.
        if (profile.mode === 'lrp') {
          const message = `Profile ${JSON.stringify(profile.name)} verifies LRP taps: switching a chip to LRP cannot be undone, so it is done from the command line only (tapgate chip provision --lrp --irreversible)`
          throw new ValidationError(message, { profile: message }, 'provisioning_plan_invalid')
        }
        const template = p.urlTemplate ?? profile.urlTemplate
        if (template === null) throw new ValidationError(NO_TEMPLATE(profile.name), { urlTemplate: NO_TEMPLATE(profile.name) }, 'provisioning_plan_invalid')
        try {
          dryRunPlan({ profile, template })
        } catch (error) {
          if (!(error instanceof ProvisioningPlanError)) throw error
          const message = `cannot provision with profile ${JSON.stringify(profile.name)}: ${error.message}`
          throw new ValidationError(message, { urlTemplate: error.message }, 'provisioning_plan_invalid')
        }
        const state = localReaders.get()
        if (state.readers === null) throw new UnavailableError('readers_unavailable', `This gateway has no PC/SC readers to provision on: ${state.unavailable}`)
        const run: Run = {
          id: crypto.randomUUID(),
          teamId: p.teamId,
          profile,
          template,
          allowUnverified: p.allowUnverified ?? false,
          startedAt: now(),
          endedAt: null,
          cards: [],
          giveBack: async () => {},
          idle: undefined,
          ending: null,
        }
        run.giveBack = state.readers.borrow((card) => onCard(run, card))
        last = run
        armIdle(run)
        log.info(`console provisioning run ${run.id} started for team ${p.teamId}: profile ${JSON.stringify(profile.name)}, URL ${template}`)
        return view(run)
      } finally {
        starting = false
      }
    },

    /**
     * Ends this team's run once the card being written is done.
     *
     * @throws NotFoundError provisioning_not_running (none on, or another team's)
     */
    async stop(p: { teamId: number }): Promise<ConsoleProvisioningRun> {
      const run = last
      if (run === null || run.teamId !== p.teamId || run.endedAt !== null) throw new NotFoundError('provisioning_not_running', 'No provisioning run of this team is on')
      await end(run)
      return view(run)
    },

    /** The gateway is stopping: the run ends (the card on the reader finishes first). */
    async close(): Promise<void> {
      if (last !== null && last.endedAt === null) await end(last)
    },
  }
}

export type ConsoleProvisioning = ReturnType<typeof createConsoleProvisioning>
