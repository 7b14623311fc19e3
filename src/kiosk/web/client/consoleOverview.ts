/*
 * The console's Overview tab: each active station at a glance (mode, event, reader, kiosks, last
 * tap, taps today) and the team's taps today. console.ts fetches it again every few seconds while
 * the tab is shown and whenever the page comes back into view.
 */
import type { ConsoleApi, Station } from './consoleApi.js'
import { $, button, h, redraw, type StatusLine, when } from './consoleDom.js'
import type { ConsoleState, Message } from './consoleState.js'
import { modeLabel, readerWords } from './consoleWords.js'

export type OverviewSection = { load(): Promise<void>; render(state: ConsoleState): void }

/**
 * @example
 * const overview = createOverview({ api, dispatch, status, manage: (id) => openStation(id) })
 * await overview.load()
 */
export function createOverview(p: { api: ConsoleApi; dispatch: (message: Message) => void; status: StatusLine; manage: (stationId: number) => void }): OverviewSection {
  const card = (station: Station, now: Date) => {
    const reader = readerWords(station.reader)
    const line = (label: string, value: string, data: Record<string, string> = {}) => [h('dt', { text: label }), h('dd', { text: value, data })]
    return h(
      'li',
      { className: 'station-card', data: { stationId: String(station.id), mode: station.mode ?? 'none' } },
      h('div', { className: 'card-head' }, h('h2', { text: station.name }), h('span', { className: 'pill mode', text: modeLabel(station.mode), data: { mode: station.mode ?? 'none' } })),
      h(
        'dl',
        {},
        ...line('Event', station.eventName ?? 'None'),
        ...line('Reader', reader.text, { reader: reader.state, field: 'reader' }),
        ...line('Kiosks connected', String(station.kiosksConnected), { field: 'kiosks' }),
        ...line('Last tap', station.lastTapAt === null ? 'None yet' : when(station.lastTapAt, now), { field: 'last-tap' }),
        ...line('Taps today', String(station.tapsToday), { field: 'taps-today' }),
      ),
      button('Manage', () => p.manage(station.id), { className: 'quiet', attrs: { 'aria-label': `Manage ${station.name}` }, data: { focusKey: `manage-${station.id}` } }),
    )
  }

  async function fetchOnce(): Promise<void> {
    const answer = await p.api.overview()
    if (answer.ok) p.dispatch({ type: 'overview', overview: answer.body, at: new Date().toISOString() })
    else if (answer.status !== 401) p.status.show(`The overview could not be loaded: ${answer.message}`, 'error')
  }

  let drawn: ConsoleState['overview'] | undefined
  // One request at a time: a slow gateway must not get a new one every few seconds on top of the last.
  let pending: Promise<void> | null = null
  return {
    load() {
      pending ??= fetchOnce().finally(() => (pending = null))
      return pending
    },
    render(state) {
      if (state.overview === drawn) return
      drawn = state.overview
      const overview = state.overview
      if (!overview) return
      const now = new Date()
      $('total-today').textContent = String(overview.taps.today)
      $('total-accepted').textContent = String(overview.taps.accepted)
      $('total-refused').textContent = String(overview.taps.refused)
      const active = overview.stations.filter((s) => s.revokedAt === null)
      redraw($('overview-stations'), active.map((s) => card(s, now)))
      $('overview-empty').hidden = active.length > 0
      $('overview-updated').textContent = state.overviewAt ? `Updated ${when(state.overviewAt, now)}` : ''
    },
  }
}
