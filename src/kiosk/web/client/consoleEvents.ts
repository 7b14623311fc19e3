/*
 * The console's Events tab: the team's events with their guests and check-ins, a new event, and
 * the chosen event's door settings and numbers (the staff view's own numbers and arrivals chart,
 * staffNumbers.ts and chart.ts). Its guest list is consoleGuests.ts.
 */
import type { ConsoleApi, ConsoleEvent, EventPatch } from './consoleApi.js'
import { $, button, clearFieldErrors, h, onSubmit, redraw, showFailure, type StatusLine } from './consoleDom.js'
import { createGuests } from './consoleGuests.js'
import type { ConsoleState, Message } from './consoleState.js'
import { renderStats } from './staffNumbers.js'

export type EventsSection = {
  load(): Promise<void>
  /** The chosen event's numbers again (console.ts asks every few seconds while they are shown). */
  refreshNumbers(): Promise<void>
  render(state: ConsoleState): void
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

/** "12 guests · 3 checked in": an event's list line and the detail's subtitle. */
export const eventCounts = (event: ConsoleEvent) => `${plural(event.guests, 'guest')} · ${event.checkedIn} checked in`

/**
 * @example
 * const events = createEvents({ api, dispatch, status, getState: () => state })
 * await events.load()
 */
export function createEvents(p: { api: ConsoleApi; dispatch: (message: Message) => void; status: StatusLine; getState: () => ConsoleState }): EventsSection {
  const { api, dispatch, status } = p
  const selected = (): ConsoleEvent | undefined => {
    const state = p.getState()
    return state.events.find((e) => e.id === state.selectedEventId)
  }

  async function loadEvents(): Promise<void> {
    const answer = await api.events()
    if (answer.ok) dispatch({ type: 'events', events: answer.body.events })
    else if (answer.status !== 401) status.show(`The events could not be loaded: ${answer.message}`, 'error')
  }

  async function loadNumbers(eventId: number): Promise<void> {
    const answer = await api.numbers(eventId)
    // Asked every few seconds: numbers that did not change are not drawn again.
    const shown = p.getState().eventStats
    if (answer.ok && shown?.eventId === eventId && JSON.stringify(shown.stats) === JSON.stringify(answer.body.stats)) return
    if (answer.ok) dispatch({ type: 'eventStats', eventId, stats: answer.body.stats })
    else if (answer.status !== 401) status.show(`The numbers could not be loaded: ${answer.message}`, 'error')
  }

  const guests = createGuests({
    api,
    dispatch,
    status,
    getState: p.getState,
    // A guest list that went in changes the event's counts and its numbers.
    imported: async (eventId) => {
      await Promise.all([loadEvents(), loadNumbers(eventId)])
    },
  })

  function open(eventId: number): void {
    dispatch({ type: 'selectEvent', eventId })
    void Promise.all([guests.search(eventId, { q: '', offset: 0 }), loadNumbers(eventId)])
    $('event-detail').focus()
  }

  // ---- the forms ----

  const createForm = $<HTMLFormElement>('event-create-form')
  onSubmit(createForm, async () => {
    const input = $<HTMLInputElement>('new-event-name')
    const answer = await api.createEvent(input.value.trim())
    if (!answer.ok) return showFailure(answer, status, createForm)
    input.value = ''
    dispatch({ type: 'event', event: answer.body.event })
    status.show(`Event "${answer.body.event.name}" created. Upload its guest list, then set a station to check-in for it.`)
    open(answer.body.event.id)
  })

  const settingsForm = $<HTMLFormElement>('event-settings-form')
  onSubmit(settingsForm, async () => {
    const event = selected()
    if (!event) return
    const patch: EventPatch = {
      reentry: $<HTMLSelectElement>('event-reentry').value === 'true',
      publicNames: $<HTMLSelectElement>('event-public-names').value === 'full' ? 'full' : 'first',
      admitUnpaid: $<HTMLSelectElement>('event-admit-unpaid').value === 'true',
    }
    const answer = await api.patchEvent(event.id, patch)
    if (!answer.ok) return showFailure(answer, status, settingsForm)
    const saved = answer.body.event
    dispatch({ type: 'event', event: saved })
    status.show(
      `"${saved.name}": re-entry ${saved.reentry ? 'allowed' : 'refused'}, ${saved.publicNames === 'full' ? 'full names' : 'first names'} on the kiosk, unpaid orders ${saved.admitUnpaid ? 'let in' : 'refused'}.`,
    )
  })

  // ---- the views ----

  const listItem = (event: ConsoleEvent, selectedId: number | null) => {
    const choose = button('', () => open(event.id), {
      className: 'event-choice',
      attrs: { id: `event-${event.id}`, ...(event.id === selectedId ? { 'aria-current': 'true' } : {}) },
      data: { focusKey: `event-${event.id}`, eventId: String(event.id) },
    })
    choose.append(h('span', { className: 'name', text: event.name }), h('span', { className: 'counts', text: eventCounts(event), data: { field: 'counts' } }))
    return h('li', {}, choose)
  }

  /** The chosen event's forms; the settings only when another event is chosen or they were saved, so a choice being made is not undone. */
  function renderDetail(event: ConsoleEvent | undefined, chosenAnew: boolean, changed: boolean): void {
    $('event-none').hidden = event !== undefined
    $('event-detail').hidden = event === undefined
    if (!event) {
      $('numbers').hidden = true
      return
    }
    $('event-title').textContent = event.name
    $('event-meta').textContent = `Event ${event.id} · ${eventCounts(event)}`
    $<HTMLAnchorElement>('guest-export').href = api.exportUrl(event.id, 'csv')
    $<HTMLAnchorElement>('guest-export').setAttribute('aria-label', `Download the guest list of ${event.name} (CSV)`)
    if (chosenAnew) clearFieldErrors(settingsForm)
    if (chosenAnew || changed) {
      $<HTMLSelectElement>('event-reentry').value = String(event.reentry)
      $<HTMLSelectElement>('event-public-names').value = event.publicNames
      $<HTMLSelectElement>('event-admit-unpaid').value = String(event.admitUnpaid)
    }
  }

  // One numbers request at a time: a slow gateway must not get a new one every few seconds on top of the last.
  let pendingNumbers: Promise<void> | null = null

  let drawn: Pick<ConsoleState, 'events' | 'selectedEventId' | 'eventStats'> | null = null
  return {
    async load() {
      await loadEvents()
      const state = p.getState()
      if (state.selectedEventId !== null) await Promise.all([guests.search(state.selectedEventId, state.guests?.query ?? { q: '', offset: 0 }), loadNumbers(state.selectedEventId)])
    },
    refreshNumbers() {
      const id = p.getState().selectedEventId
      if (id === null) return Promise.resolve()
      pendingNumbers ??= loadNumbers(id).finally(() => (pendingNumbers = null))
      return pendingNumbers
    },
    render(state) {
      guests.render(state)
      if (drawn && drawn.events === state.events && drawn.selectedEventId === state.selectedEventId && drawn.eventStats === state.eventStats) return
      const chosenAnew = drawn?.selectedEventId !== state.selectedEventId
      const event = state.events.find((e) => e.id === state.selectedEventId)
      const before = drawn?.events.find((e) => e.id === state.selectedEventId)
      if (drawn?.events !== state.events || chosenAnew) {
        redraw($('event-list'), state.events.map((e) => listItem(e, state.selectedEventId)))
        $('event-list-empty').hidden = state.events.length > 0
      }
      const settingsChanged = !!event && (!before || before.reentry !== event.reentry || before.publicNames !== event.publicNames || before.admitUnpaid !== event.admitUnpaid)
      renderDetail(event, chosenAnew, settingsChanged)
      if (event && (drawn?.eventStats !== state.eventStats || chosenAnew)) {
        if (state.eventStats) renderStats(state.eventStats.stats)
        else $('numbers').hidden = true
      }
      drawn = { events: state.events, selectedEventId: state.selectedEventId, eventStats: state.eventStats }
    },
  }
}
