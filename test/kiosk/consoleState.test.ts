import { describe, expect, test } from 'vitest'
import { type ConsoleEvent, type GuestPage, guestListType, type Station } from '../../src/kiosk/web/client/consoleApi.js'
import { initialState, tabFromHash, update } from '../../src/kiosk/web/client/consoleState.js'
import { importProblems } from '../../src/kiosk/web/client/consoleWords.js'

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

const event = (id: number, name: string): ConsoleEvent => ({ id, name, guests: 0, checkedIn: 0, reentry: true, publicNames: 'first', admitUnpaid: false })
const noGuests: GuestPage = { success: true, attendees: [], total: 0 }

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
    expect(['#keys', '#taps', 'stations', '#events', '', '#nope', '#token=x'].map(tabFromHash)).toEqual(['keys', 'taps', 'stations', 'events', 'overview', 'overview', 'overview'])
  })

  test("a new or changed event replaces its row; choosing another event forgets the last one's guests, numbers and upload; late answers are dropped", () => {
    let state = update(initialState(), { type: 'events', events: [event(1, 'Booth')] })
    state = update(state, { type: 'event', event: event(2, 'Main door') })
    state = update(state, { type: 'event', event: { ...event(2, 'Main door'), reentry: false } })
    expect(state.events.map((e) => [e.id, e.reentry])).toEqual([[1, true], [2, false]])
    state = update(state, { type: 'selectEvent', eventId: 2 })
    state = update(state, { type: 'guests', eventId: 2, query: { q: 'lena', offset: 0 }, page: noGuests })
    state = update(state, { type: 'guestImport', eventId: 2, outcome: { kind: 'refused', message: 'x', problems: [] } })
    expect(state.guests?.query.q).toBe('lena')
    expect(state.guestImport?.outcome.kind).toBe('refused')
    state = update(state, { type: 'selectEvent', eventId: 1 })
    expect([state.guests, state.guestImport, state.eventStats]).toEqual([null, null, null])
    expect(update(state, { type: 'guests', eventId: 2, query: { q: '', offset: 0 }, page: noGuests })).toBe(state)
    // An event list without the chosen one clears the choice.
    state = update(state, { type: 'events', events: [event(2, 'Main door')] })
    expect(state.selectedEventId).toBeNull()
  })

  test("a refused guest list's errors become rows: line, column, problem, in the file's order", () => {
    expect(
      importProblems({
        'line 12, Ticket Email': '"x" is not an email address',
        'line 3': 'the field in column "Barcode" is too long',
        more: '60 more problems not listed',
        'line 3, Ticket Reference': 'The ticket code is empty',
      }),
    ).toEqual([
      { line: 3, column: null, message: 'the field in column "Barcode" is too long' },
      { line: 3, column: 'Ticket Reference', message: 'The ticket code is empty' },
      { line: 12, column: 'Ticket Email', message: '"x" is not an email address' },
      { line: null, column: null, message: '60 more problems not listed' },
    ])
    expect(importProblems({ header: '"a", "b"' })).toEqual([{ line: 1, column: null, message: 'The header row: "a", "b"' }])
  })

  test("a guest list file is sent as CSV or .xlsx: the browser's type when it is one of those, else told by the name", () => {
    const xlsx = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'
    expect(
      [
        { name: 'tito.csv', type: 'text/csv' },
        // Windows with Excel installed calls a .csv this.
        { name: 'tito.csv', type: 'application/vnd.ms-excel' },
        { name: 'guests.CSV', type: '' },
        { name: 'pretix.xlsx', type: xlsx },
        { name: 'pretix.XLSX', type: '' },
      ].map(guestListType),
    ).toEqual(['text/csv', 'text/csv', 'text/csv', xlsx, xlsx])
  })
})
