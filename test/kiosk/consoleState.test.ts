import { describe, expect, test } from 'vitest'
import type { Station } from '../../src/kiosk/web/client/consoleApi.js'
import { initialState, tabFromHash, update } from '../../src/kiosk/web/client/consoleState.js'

const station = (id: number, name: string): Station => ({
  id,
  name,
  prefix: `st_${id}`,
  mode: null,
  eventId: null,
  eventName: null,
  ticketTypes: null,
  revokedAt: null,
  createdAt: '2026-11-28T10:00:00.000Z',
  reader: null,
  kiosksConnected: 0,
  lastTapAt: null,
  tapsToday: 0,
})

const team = { id: 1, name: 'Demo team' }
const overview = { success: true as const, team, stations: [station(1, 'Door A')], taps: { today: 0, accepted: 0, refused: 0 } }

describe('the console page state', () => {
  test('a changed station replaces its row in the stations list and the overview; a new one is added to both', () => {
    let state = update(initialState(), { type: 'overview', overview, at: '2026-11-28T10:00:00.000Z' })
    state = update(state, { type: 'stations', stations: [station(1, 'Door A')] })
    state = update(state, { type: 'station', station: { ...station(1, 'Front door'), mode: 'checkin' } })
    expect(state.stations.map((s) => s.name)).toEqual(['Front door'])
    expect(state.overview!.stations.map((s) => [s.name, s.mode])).toEqual([['Front door', 'checkin']])
    state = update(state, { type: 'station', station: station(2, 'Door B') })
    expect(state.stations.map((s) => s.id)).toEqual([1, 2])
    expect(state.overview!.stations.map((s) => s.id)).toEqual([1, 2])
  })

  test('a revoked station leaves the overview and stays in the list, marked', () => {
    let state = update(initialState(), { type: 'overview', overview, at: '2026-11-28T10:00:00.000Z' })
    state = update(state, { type: 'stations', stations: [station(1, 'Door A')] })
    state = update(state, { type: 'stationRevoked', stationId: 1, at: '2026-11-28T11:00:00.000Z' })
    expect(state.overview!.stations).toEqual([])
    expect(state.stations[0]!.revokedAt).toBe('2026-11-28T11:00:00.000Z')
  })

  test("choosing another station forgets the last one's kiosk tokens; a late answer for it is dropped", () => {
    let state = update(initialState(), { type: 'stations', stations: [station(1, 'A'), station(2, 'B')] })
    state = update(state, { type: 'select', stationId: 1 })
    state = update(state, { type: 'kioskTokens', stationId: 1, tokens: [{ prefix: 'tgk_abcdef', createdAt: '2026-11-28T10:00:00.000Z', lastSeenAt: null, revokedAt: null }] })
    expect(state.kioskTokens).toHaveLength(1)
    state = update(state, { type: 'select', stationId: 2 })
    expect(state.kioskTokens).toBeNull()
    state = update(state, { type: 'kioskTokens', stationId: 1, tokens: [] })
    expect(state.kioskTokens).toBeNull()
    // A station list without the chosen one (revoked and gone elsewhere) clears the choice.
    state = update(state, { type: 'stations', stations: [station(1, 'A')] })
    expect(state.selectedStationId).toBeNull()
  })

  test('signed out is final: later answers change nothing, and the first reason stays', () => {
    let state = update(initialState(), { type: 'session', team })
    state = update(state, { type: 'signedOut', how: 'by-user' })
    const after = update(update(state, { type: 'overview', overview, at: '2026-11-28T10:00:00.000Z' }), { type: 'tab', tab: 'keys' })
    expect(after).toBe(state)
    expect(update(state, { type: 'signedOut', how: 'expired' }).signedOut).toBe('by-user')
  })

  test("the address's fragment names the tab; anything else is the overview", () => {
    expect(['#keys', '#taps', 'stations', '', '#nope', '#token=x'].map(tabFromHash)).toEqual(['keys', 'taps', 'stations', 'overview', 'overview', 'overview'])
  })
})
