/*
 * The console's Taps tab: the team's tap log, newest first, filtered by chip UID, station and
 * verdict. A refusal is shown in the words a tapper reads (the API's `words`), with its code and
 * the operator's detail beside it for whoever has to dig further.
 */
import type { ConsoleApi, Tap, TapFilter } from './consoleApi.js'
import { $, clearFieldErrors, h, headersOf, labelledRow, onSubmit, redraw, showFailure, type StatusLine, when } from './consoleDom.js'
import type { ConsoleState, Message } from './consoleState.js'

export type TapsSection = {
  load(): Promise<void>
  /** The Taps tab filtered by one chip (a product's chip in the Products tab): its history. */
  showChip(uid: string): void
  render(state: ConsoleState): void
}

/**
 * @example
 * const taps = createTaps({ api, dispatch, status, getState: () => state })
 * await taps.load()
 */
export function createTaps(p: { api: ConsoleApi; dispatch: (message: Message) => void; status: StatusLine; getState: () => ConsoleState }): TapsSection {
  const { api, dispatch, status } = p
  const form = $<HTMLFormElement>('taps-filter')

  /** The filter as the form shows it now; a UID is compared in the hex capitals the log stores. */
  function filter(): TapFilter {
    const uid = $<HTMLInputElement>('filter-uid').value.trim().toUpperCase()
    const station = $<HTMLSelectElement>('filter-station').value
    const verdict = $<HTMLSelectElement>('filter-verdict').value
    return {
      ...(uid ? { uid } : {}),
      ...(station ? { stationId: Number(station) } : {}),
      ...(verdict === 'accepted' || verdict === 'refused' ? { verdict } : {}),
    }
  }

  async function load(): Promise<void> {
    const wanted = filter()
    const answer = await api.taps(wanted)
    if (answer.ok) return dispatch({ type: 'taps', taps: answer.body.taps, filter: wanted })
    if (answer.status !== 401) showFailure(answer, status, form)
  }
  onSubmit(form, load)

  /** A refusal in words, its code and detail beneath (an accepted tap has no reason to show). */
  const reason = (tap: Tap): Node | string => {
    if (tap.accepted) return ''
    const code = [tap.reason, tap.detail].filter(Boolean).join(': ')
    if (!tap.words) return h('span', { className: 'code', text: code })
    return h('span', {}, h('span', { className: 'words', text: tap.words }), h('span', { className: 'code', text: code }))
  }

  let drawnTaps: ConsoleState['taps'] | null = null
  let drawnStations: ConsoleState['stations'] | null = null
  return {
    load,
    showChip(uid) {
      // The filter is the form's: set there, the tab's own load (console.ts, on showing it) asks with it.
      $<HTMLInputElement>('filter-uid').value = uid
      $<HTMLSelectElement>('filter-station').value = ''
      $<HTMLSelectElement>('filter-verdict').value = ''
      clearFieldErrors(form)
      if (p.getState().tab === 'taps') void load()
      else dispatch({ type: 'tab', tab: 'taps' })
      $('taps-results').focus()
    },
    render(state) {
      if (drawnStations !== state.stations) {
        // The station filter lists every station, revoked ones too: their taps stay in the log.
        const select = $<HTMLSelectElement>('filter-station')
        const keep = select.value
        select.replaceChildren(h('option', { text: 'All stations', attrs: { value: '' } }), ...state.stations.map((s) => h('option', { text: s.revokedAt ? `${s.name} (revoked)` : s.name, attrs: { value: String(s.id) } })))
        select.value = keep
      }
      if (drawnTaps === state.taps && drawnStations === state.stations) return
      drawnTaps = state.taps
      drawnStations = state.stations
      const names = new Map(state.stations.map((s) => [s.id, s.name]))
      const headers = headersOf($<HTMLTableElement>('taps-table'))
      const now = new Date()
      redraw(
        $('taps'),
        state.taps.map((tap) => {
          const station = tap.stationId === null ? '—' : (names.get(tap.stationId) ?? `#${tap.stationId}`)
          const verdict = h('span', { className: 'verdict', text: tap.accepted ? '✓ Accepted' : '✕ Refused', data: { verdict: tap.accepted ? 'accepted' : 'refused' } })
          const tr = labelledRow(headers, [
            h('time', { text: when(tap.at, now), attrs: { datetime: tap.at } }),
            station,
            tap.uid ? h('code', { text: tap.uid }) : '—',
            verdict,
            reason(tap),
            tap.counter === null ? '' : String(tap.counter),
            tap.source,
          ])
          tr.dataset.tapId = String(tap.id)
          tr.dataset.verdict = tap.accepted ? 'accepted' : 'refused'
          return tr
        }),
      )
      $('taps-empty').hidden = state.taps.length > 0
      $('taps-table').hidden = state.taps.length === 0
    },
  }
}
