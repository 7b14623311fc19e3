/*
 * "Provision blank chips" in the console's Products tab (notes/console-contract-3.md, part B): a run
 * of `tapgate chip provision --batch` on the gateway's own reader. The operator picks a chip profile
 * and the tap URL, presses Start and places chips one after another; the page asks the gateway every
 * second while the run is on (console.ts) and lists each chip as the run reports it. One run at a
 * time per gateway: a second is refused (409), and said so here rather than in the status line.
 */
import type { ApiFailure, ChipProfile, ConsoleApi, Provisioning, ProvisioningCard, ProvisioningRun } from './consoleApi.js'
import { $, clearFieldErrors, h, onSubmit, redraw, showFailure, type StatusLine, when } from './consoleDom.js'
import type { ConsoleState, Message } from './consoleState.js'
import { outcomeLabel } from './consoleWords.js'

export type ProvisioningSection = {
  load(): Promise<void>
  /** The run again (console.ts asks every second while one is on). */
  poll(): Promise<void>
  render(state: ConsoleState): void
}

/** Whether the team's provisioning run is on: the page then asks for it every second. */
export const provisioningOn = (state: ConsoleState) => !!state.provisioning?.run && state.provisioning.run.endedAt === null

/** Refusals that are about the gateway, not a field: said in the panel, where the operator looks. */
const PANEL_REFUSALS = new Set(['provisioning_busy', 'readers_unavailable', 'provisioning_not_running'])

/** A refusal about one field that came without `errors` (a plan or a profile the gateway refused): put at its field. */
const FIELD_OF: Record<string, string> = { provisioning_plan_invalid: 'urlTemplate', chip_profile_not_found: 'profile' }

/**
 * @example
 * const provisioning = createProvisioning({ api, dispatch, status, getState: () => state })
 * await provisioning.load()
 */
export function createProvisioning(p: { api: ConsoleApi; dispatch: (message: Message) => void; status: StatusLine; getState: () => ConsoleState }): ProvisioningSection {
  const { api, dispatch, status } = p
  const form = $<HTMLFormElement>('provision-form')
  const profileSelect = $<HTMLSelectElement>('provision-profile')
  const urlInput = $<HTMLInputElement>('provision-url')
  const problem = $('provision-problem')
  // What a template for this gateway looks like, as the operator reaches it now (it may be a LAN address).
  urlInput.placeholder = `e.g. ${location.origin}/tap?e={picc}&c={mac}`

  function sayProblem(text: string | null): void {
    problem.textContent = text ?? ''
    problem.hidden = text === null
  }

  async function fetchRun(): Promise<void> {
    const answer = await api.provisioning()
    if (!answer.ok) {
      if (answer.status !== 401) status.show(`The provisioning state could not be loaded: ${answer.message}`, 'error')
      return
    }
    // Asked every second: an answer that did not change is not drawn again.
    if (JSON.stringify(answer.body) !== JSON.stringify(p.getState().provisioning)) dispatch({ type: 'provisioning', provisioning: answer.body })
  }

  // One request at a time: a slow gateway must not get a new one every second on top of the last.
  let pending: Promise<void> | null = null
  const poll = () => (pending ??= fetchRun().finally(() => (pending = null)))

  async function load(): Promise<void> {
    const [profiles] = await Promise.all([api.chipProfiles(), poll()])
    if (profiles.ok) dispatch({ type: 'chipProfiles', profiles: profiles.body.profiles })
    else if (profiles.status !== 401) status.show(`The chip profiles could not be loaded: ${profiles.message}`, 'error')
  }

  const profileNamed = (name: string) => p.getState().chipProfiles?.find((profile) => profile.name === name)
  // A profile chosen brings its own tap URL: what `chip provision` writes without --url.
  profileSelect.addEventListener('change', () => {
    urlInput.value = profileNamed(profileSelect.value)?.urlTemplate ?? ''
  })

  /** A run's refusal: at its field, in the panel (busy, no readers), or in the status line. */
  function refused(answer: ApiFailure): void {
    if (PANEL_REFUSALS.has(answer.error) || answer.status === 409 || answer.status === 503) {
      const why = answer.status === 409 ? `Another provisioning run is on at this gateway: ${answer.message}` : answer.message
      sayProblem(why)
      return
    }
    const field = FIELD_OF[answer.error]
    const placed = Object.keys(answer.errors).length === 0 && field ? { ...answer, errors: { [field]: answer.message } } : answer
    showFailure(placed, status, form)
  }

  onSubmit(form, async () => {
    sayProblem(null)
    const urlTemplate = urlInput.value.trim()
    const answer = await api.startProvisioning({
      profile: profileSelect.value,
      ...(urlTemplate ? { urlTemplate } : {}),
      allowUnverified: $<HTMLInputElement>('provision-unverified').checked,
    })
    if (!answer.ok) return answer.status === 401 ? undefined : refused(answer)
    dispatch({ type: 'provisioningRun', run: answer.body.run })
    status.show(`Provisioning with "${answer.body.run.profile}": place the first blank chip on the reader.`)
    $('provision-run').focus()
  })

  $('provision-stop').addEventListener('click', async () => {
    const stop = $<HTMLButtonElement>('provision-stop')
    if (stop.disabled) return
    stop.disabled = true
    // The gateway finishes the chip being written before it answers: never a chip cut half-way.
    stop.textContent = 'Stopping…'
    const answer = await api.stopProvisioning()
    stop.disabled = false
    stop.textContent = 'Stop'
    if (answer.ok) {
      dispatch({ type: 'provisioningRun', run: answer.body.run })
      const { provisioned, resumed, refused: n } = answer.body.run.summary
      status.show(`Provisioning stopped: ${provisioned} provisioned, ${resumed} resumed, ${n} refused.`)
      $('provision-run').focus()
      // The readers as they are now (the last chip taken off) and the profiles' chip counts with this run's.
      await load()
    } else if (answer.status !== 401) {
      // Ended meanwhile (by itself after 30 idle minutes, or from another browser): show what the gateway has.
      if (answer.status === 404) await poll()
      else showFailure(answer, status)
    }
  })

  // ---- the views ----

  function renderReaders(provisioning: Provisioning | null): void {
    const line = $('provision-readers')
    line.dataset.state = provisioning === null ? 'unknown' : provisioning.readers === null ? 'none' : provisioning.readers.length > 0 ? 'ready' : 'none'
    if (provisioning === null) line.textContent = 'Asking the gateway for its readers…'
    // The gateway's own sentence: why it has none (no PC/SC, the station off, another team's run on them).
    else if (provisioning.readers === null) line.textContent = `${(provisioning.unavailable ?? 'This gateway has no PC/SC readers to provision on').replace(/\.?$/, '.')}`
    else if (provisioning.readers.length === 0) line.textContent = 'No reader is connected to this gateway.'
    else line.textContent = `${provisioning.readers.length === 1 ? 'Reader' : 'Readers'}: ${provisioning.readers.map((r) => `${r.name}${r.cardPresent ? ' (a chip is on it)' : ''}`).join(', ')}`
  }

  function renderProfiles(profiles: ChipProfile[] | null): void {
    const keep = profileSelect.value
    if (profiles === null) return
    if (profiles.length === 0) {
      profileSelect.replaceChildren(h('option', { text: 'No chip profile yet (tapgate profile create)', attrs: { value: '' } }))
      return
    }
    profileSelect.replaceChildren(
      ...profiles.map((profile) => {
        // LRP changes the chip for good (it cannot go back to AES): the CLI's, with its warnings.
        const lrp = profile.mode === 'lrp'
        const option = h('option', { text: `${profile.name}${lrp ? ' (LRP: with the CLI)' : ` · ${profile.chips} ${profile.chips === 1 ? 'chip' : 'chips'}`}`, attrs: { value: profile.name } })
        option.disabled = lrp
        return option
      }),
    )
    const usable = profiles.filter((profile) => profile.mode !== 'lrp')
    const chosen = usable.find((profile) => profile.name === keep) ?? usable[0]
    profileSelect.value = chosen?.name ?? ''
    // The URL field follows the profile on the first fill; afterwards it is the operator's.
    if (chosen && (keep !== chosen.name || urlInput.value === '')) urlInput.value = chosen.urlTemplate ?? ''
  }

  const cardItem = (card: ProvisioningCard) =>
    h(
      'li',
      { data: { outcome: card.outcome, uid: card.uid ?? '' } },
      h('span', { className: 'card-line' }, card.uid ? h('code', { text: card.uid }) : h('span', { className: 'muted', text: 'No UID read' }), h('span', { className: 'pill outcome', text: outcomeLabel(card.outcome), data: { outcome: card.outcome } }), h('time', { className: 'muted', text: when(card.at), attrs: { datetime: card.at } })),
      // The CLI's line starts with the UID, which the line above shows already.
      h('span', { className: 'card-message', text: card.uid && card.message.startsWith(`${card.uid} `) ? card.message.slice(card.uid.length + 1) : card.message }),
    )

  function renderRun(run: ProvisioningRun | null, provisioning: Provisioning | null): void {
    const box = $('provision-run')
    const on = !!run && run.endedAt === null
    box.hidden = !run
    box.dataset.state = !run ? '' : on ? 'on' : 'ended'
    // While a run is on, the form is its: a second Start would only be refused.
    form.hidden = on || provisioning?.readers === null
    $('provision-stop').hidden = !on
    if (!run) return
    const readers = provisioning?.readers?.map((r) => r.name) ?? []
    const { provisioned, resumed, refused: n } = run.summary
    $('provision-place').textContent = on
      ? `Place a blank chip on ${readers.length > 0 ? readers.join(' or ') : 'the reader'}`
      : `Run ended ${when(run.endedAt!)}: ${provisioned} provisioned, ${resumed} resumed, ${n} refused.`
    $('provision-plan').textContent = `Profile "${run.profile}", tap URL ${run.urlTemplate}`
    const counts: [string, number][] = [
      ['Provisioned', provisioned],
      ['Resumed', resumed],
      ['Refused', n],
    ]
    redraw($('provision-counts'), counts.flatMap(([label, value]) => [h('dt', { text: label }), h('dd', { text: String(value), data: { count: label.toLowerCase() } })]))
    const cards = [...run.cards].reverse()
    redraw($('provision-cards'), cards.length > 0 ? cards.map(cardItem) : [h('li', { className: 'muted', text: on ? 'No chip yet.' : 'No chip was placed.' })])
  }

  let drawn: Pick<ConsoleState, 'provisioning' | 'chipProfiles'> | null = null
  return {
    load,
    poll,
    render(state) {
      if (drawn && drawn.provisioning === state.provisioning && drawn.chipProfiles === state.chipProfiles) return
      if (drawn?.chipProfiles !== state.chipProfiles) renderProfiles(state.chipProfiles)
      if (drawn?.provisioning !== state.provisioning) {
        renderReaders(state.provisioning)
        const wasOn = !!drawn?.provisioning?.run && drawn.provisioning.run.endedAt === null
        renderRun(state.provisioning?.run ?? null, state.provisioning)
        // A run that ended (Stop here, elsewhere, or 30 idle minutes): a new one starts from a clean form.
        if (wasOn && !provisioningOn(state)) {
          clearFieldErrors(form)
          sayProblem(null)
        }
      }
      drawn = { provisioning: state.provisioning, chipProfiles: state.chipProfiles }
    },
  }
}
