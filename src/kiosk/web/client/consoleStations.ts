/*
 * The console's Stations tab: create a station (its token shown once), and for the one chosen:
 * rename, mode and event, staff PIN, a new kiosk URL with its QR code, the kiosk links in use, and
 * revoke. The same rules as `tapgate station …` apply: the gateway runs the same domain functions,
 * so this page only shows what it answers.
 */
import type { StationMode } from '../../../wire/feedProtocol.js'
import type { ApiFailure, ConsoleApi, Station, StationPatch } from './consoleApi.js'
import { $, button, clearFieldErrors, confirmStep, copyButton, h, onSubmit, redraw, showFailure, showSecret, type StatusLine, when } from './consoleDom.js'
import { qrElement } from './qrElement.js'
import type { ConsoleState, Message } from './consoleState.js'
import { modeLabel } from './consoleWords.js'

export type StationsSection = {
  load(): Promise<void>
  render(state: ConsoleState): void
  /** Shows the station's details (from the overview's "Manage" too) and moves the focus there. */
  open(stationId: number): void
}

/**
 * Refusals that are not a 400's field map but still belong to one field (the mode rules of
 * src/kiosk/stationModes.ts): shown there, like a field error.
 */
const FIELD_OF_CODE: Record<string, string> = { event_required: 'eventId', event_not_found: 'eventId' }

const withField = (failure: ApiFailure): ApiFailure => {
  const field = FIELD_OF_CODE[failure.error]
  return field && Object.keys(failure.errors).length === 0 ? { ...failure, errors: { [field]: failure.message } } : failure
}

/**
 * @example
 * const stations = createStations({ api, dispatch, status, getState: () => state })
 */
export function createStations(p: { api: ConsoleApi; dispatch: (message: Message) => void; status: StatusLine; getState: () => ConsoleState }): StationsSection {
  const { api, dispatch, status } = p
  const selected = (): Station | undefined => {
    const state = p.getState()
    return state.stations.find((s) => s.id === state.selectedStationId)
  }

  async function loadTokens(stationId: number): Promise<void> {
    const answer = await api.kioskTokens(stationId)
    if (answer.ok) dispatch({ type: 'kioskTokens', stationId, tokens: answer.body.tokens })
    else if (answer.status !== 401) status.show(`The kiosk links could not be loaded: ${answer.message}`, 'error')
  }

  function open(stationId: number): void {
    dispatch({ type: 'tab', tab: 'stations' })
    dispatch({ type: 'select', stationId })
    void loadTokens(stationId)
    $('station-detail').focus()
  }

  /** A PATCH of the chosen station; its answer replaces the station everywhere it is shown. */
  async function patch(form: HTMLFormElement, body: StationPatch, done: (station: Station) => string): Promise<void> {
    const station = selected()
    if (!station) return
    const answer = await api.patchStation(station.id, body)
    if (!answer.ok) return showFailure(withField(answer), status, form)
    dispatch({ type: 'station', station: answer.body.station })
    status.show(done(answer.body.station))
  }

  // ---- the forms ----

  const createForm = $<HTMLFormElement>('station-create-form')
  onSubmit(createForm, async () => {
    const input = $<HTMLInputElement>('new-station-name')
    const answer = await api.createStation(input.value.trim())
    if (!answer.ok) return showFailure(answer, status, createForm)
    input.value = ''
    const { station, token } = answer.body
    dispatch({ type: 'station', station })
    dispatch({ type: 'select', stationId: station.id })
    void loadTokens(station.id)
    status.show(`Station "${station.name}" created.`)
    showSecret($('station-secret'), {
      title: `Station token of "${station.name}"`,
      value: token,
      note: 'A station on another machine (tapgate station, with TAPGATE_STATION_TOKEN) sends it as x-station-token. A kiosk screen needs none: use "Kiosk URL".',
    })
  })

  const renameForm = $<HTMLFormElement>('station-rename-form')
  onSubmit(renameForm, () => patch(renameForm, { name: $<HTMLInputElement>('station-name').value.trim() }, (s) => `Renamed to "${s.name}".`))

  const settingsForm = $<HTMLFormElement>('station-settings-form')
  onSubmit(settingsForm, () => {
    const mode = $<HTMLSelectElement>('station-mode').value
    const event = $<HTMLSelectElement>('station-event').value
    const body: StationPatch = {}
    if (mode !== '') body.mode = mode as StationMode
    // "No event" sends nothing: the gateway keeps a station's event when only its mode changes.
    if (event !== '') body.eventId = Number(event)
    return patch(settingsForm, body, (s) => `"${s.name}" is now ${modeLabel(s.mode).toLowerCase()}${s.eventName ? ` for ${s.eventName}` : ''}.`)
  })

  const pinForm = $<HTMLFormElement>('station-pin-form')
  onSubmit(pinForm, async () => {
    const station = selected()
    if (!station) return
    const input = $<HTMLInputElement>('station-pin')
    const answer = await api.setStaffPin(station.id, input.value)
    if (!answer.ok) return showFailure(answer, status, pinForm)
    input.value = ''
    status.show(`Staff PIN of "${station.name}" set. Wrong tries so far are forgotten.`)
  })

  $('kiosk-url-button').addEventListener('click', async () => {
    const station = selected()
    if (!station) return
    const answer = await api.kioskUrl(station.id)
    if (!answer.ok) return showFailure(answer, status)
    const { url, staffUrl, qrSvg } = answer.body
    const qr = qrElement(qrSvg)
    $('kiosk-qr').replaceChildren(...(qr ? [qr] : []))
    $('kiosk-url').textContent = url
    $('staff-url').textContent = staffUrl
    $('kiosk-url-copy').replaceChildren(copyButton($('kiosk-url'), 'the kiosk URL'))
    $('staff-url-copy').replaceChildren(copyButton($('staff-url'), 'the staff view URL'))
    $('kiosk-link').hidden = false
    status.show(`A new kiosk link for "${station.name}". Anyone with it sees this station's kiosk screen.`)
    void loadTokens(station.id)
  })

  confirmStep($<HTMLButtonElement>('station-revoke'), {
    question: 'Revoke this station for good?',
    confirm: 'Yes, revoke',
    onConfirm: async () => {
      const station = selected()
      if (!station) return
      const answer = await api.revokeStation(station.id)
      if (!answer.ok) return showFailure(answer, status)
      dispatch({ type: 'stationRevoked', stationId: station.id, at: new Date().toISOString() })
      status.show(`Station "${station.name}" revoked: its reader and kiosks are refused from now on.`)
      $(`station-${station.id}`)?.focus()
    },
  })

  // ---- the views ----

  const listItem = (station: Station, selectedId: number | null) => {
    const choose = button('', () => open(station.id), {
      className: 'station-choice',
      attrs: { id: `station-${station.id}`, ...(station.id === selectedId ? { 'aria-current': 'true' } : {}) },
      data: { focusKey: `station-${station.id}`, revoked: String(station.revokedAt !== null) },
    })
    choose.append(h('span', { className: 'name', text: station.name }), h('span', { className: 'pill', text: station.revokedAt ? 'Revoked' : modeLabel(station.mode), data: { mode: station.mode ?? 'none' } }))
    return h('li', {}, choose)
  }

  function renderEvents(state: ConsoleState): void {
    const select = $<HTMLSelectElement>('station-event')
    const keep = select.value
    select.replaceChildren(h('option', { text: 'No event', attrs: { value: '' } }), ...state.events.map((e) => h('option', { text: e.name, attrs: { value: String(e.id) } })))
    select.value = keep
  }

  function renderTokens(state: ConsoleState): void {
    const tokens = state.kioskTokens
    const list = $('kiosk-tokens')
    if (tokens === null) return redraw(list, [h('li', { className: 'muted', text: 'Loading…' })])
    if (tokens.length === 0) return redraw(list, [h('li', { className: 'muted', text: 'None: press "Kiosk URL" to make one.' })])
    redraw(
      list,
      tokens.map((t) => {
        const seen = t.lastSeenAt ? `last seen ${when(t.lastSeenAt)}` : 'never used'
        const item = h('li', { data: { prefix: t.prefix, revoked: String(t.revokedAt !== null) } }, h('code', { text: t.prefix }), h('span', { className: 'muted', text: `made ${when(t.createdAt)}, ${seen}` }))
        if (t.revokedAt) item.append(h('span', { className: 'pill', text: `Revoked ${when(t.revokedAt)}` }))
        else {
          const revoke = button('Revoke', () => undefined, { className: 'danger', attrs: { 'aria-label': `Revoke kiosk link ${t.prefix}` }, data: { focusKey: `token-${t.prefix}` } })
          confirmStep(revoke, {
            question: 'Its kiosk screen goes blank.',
            confirm: 'Yes, revoke',
            onConfirm: async () => {
              const stationId = p.getState().selectedStationId
              if (stationId === null) return
              const answer = await api.revokeKioskToken(stationId, t.prefix)
              if (!answer.ok) return showFailure(answer, status)
              status.show(`Kiosk link ${t.prefix} revoked.`)
              await loadTokens(stationId)
            },
          })
          item.append(revoke)
        }
        return item
      }),
    )
  }

  /** Fills the chosen station's forms; the name field only when another station is chosen, so typing is never overwritten. */
  function renderDetail(station: Station | undefined, chosenAnew: boolean): void {
    $('station-none').hidden = station !== undefined
    $('station-detail').hidden = station === undefined
    if (!station) return
    $('station-title').textContent = station.name
    $('station-meta').textContent = `Token ${station.prefix}… · made ${when(station.createdAt)} · ${modeLabel(station.mode)}${station.eventName ? ` · ${station.eventName}` : ''}`
    $('station-revoked').hidden = station.revokedAt === null
    $('station-revoked').textContent = station.revokedAt ? `Revoked ${when(station.revokedAt)}: its reader and kiosks are refused.` : ''
    $('station-controls').hidden = station.revokedAt !== null
    if (chosenAnew) {
      $<HTMLInputElement>('station-name').value = station.name
      $<HTMLInputElement>('station-pin').value = ''
      $('kiosk-link').hidden = true
      for (const form of [renameForm, settingsForm, pinForm]) clearFieldErrors(form)
      // A revoke half-confirmed for the station before is not carried over to this one.
      for (const group of $('station-detail').querySelectorAll('.confirm')) group.remove()
      $('station-revoke').hidden = false
    }
    $<HTMLSelectElement>('station-mode').value = station.mode ?? ''
    $<HTMLSelectElement>('station-event').value = station.eventId === null ? '' : String(station.eventId)
  }

  let drawn: Pick<ConsoleState, 'stations' | 'events' | 'kioskTokens' | 'selectedStationId'> | null = null
  return {
    open,
    async load() {
      const [stations, events] = await Promise.all([api.stations(), api.events()])
      if (stations.ok) dispatch({ type: 'stations', stations: stations.body.stations })
      if (events.ok) dispatch({ type: 'events', events: events.body.events })
      const failed = [stations, events].find((a) => !a.ok && a.status !== 401)
      if (failed && !failed.ok) status.show(`The stations could not be loaded: ${failed.message}`, 'error')
    },
    render(state) {
      if (drawn && drawn.stations === state.stations && drawn.events === state.events && drawn.kioskTokens === state.kioskTokens && drawn.selectedStationId === state.selectedStationId) return
      const chosenAnew = drawn?.selectedStationId !== state.selectedStationId
      if (drawn?.events !== state.events) renderEvents(state)
      if (drawn?.stations !== state.stations || chosenAnew) {
        const ordered = [...state.stations].sort((a, b) => Number(a.revokedAt !== null) - Number(b.revokedAt !== null) || a.id - b.id)
        redraw($('station-list'), ordered.map((s) => listItem(s, state.selectedStationId)))
        $('station-list-empty').hidden = state.stations.length > 0
      }
      renderDetail(state.stations.find((s) => s.id === state.selectedStationId), chosenAnew)
      if (drawn?.kioskTokens !== state.kioskTokens || chosenAnew) renderTokens(state)
      drawn = { stations: state.stations, events: state.events, kioskTokens: state.kioskTokens, selectedStationId: state.selectedStationId }
    },
  }
}
