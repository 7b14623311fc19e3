/*
 * The console page's one state object and the messages that change it (style.md §6): answers of
 * the API, the tab and the station being managed. Pure, so it is tested without a browser; the
 * fetches, timers and the DOM sit at the edges (console.ts and the section modules).
 */
import type {
  ApiKey,
  ChipImport,
  ChipProfile,
  ConsoleEvent,
  EventStats,
  GuestPage,
  GuestQuery,
  ImportReport,
  KioskToken,
  Overview,
  Product,
  Provisioning,
  ProvisioningRun,
  Station,
  Tap,
  TapFilter,
  Team,
} from './consoleApi.js'
import type { ImportProblem } from './consoleWords.js'

export const TABS = ['overview', 'stations', 'events', 'products', 'keys', 'taps'] as const
export type Tab = (typeof TABS)[number]

export type ConsoleState = {
  team: Team | null
  /** Set once the gateway refused the session (expired, revoked) or the user signed out: the page stops asking. */
  signedOut: 'expired' | 'by-user' | null
  tab: Tab
  overview: Overview | null
  /** When the overview was last fetched (it is fetched again every few seconds while shown). */
  overviewAt: string | null
  stations: Station[]
  events: ConsoleEvent[]
  keys: ApiKey[]
  taps: Tap[]
  tapFilter: TapFilter
  selectedStationId: number | null
  /** The selected station's kiosk tokens (null: not loaded yet). */
  kioskTokens: KioskToken[] | null
  selectedEventId: number | null
  /** The chosen event's guest search: what was asked and the page it answered (null: not yet). */
  guests: { eventId: number; query: GuestQuery; page: GuestPage } | null
  /** The chosen event's numbers (null: not loaded yet). */
  eventStats: { eventId: number; stats: EventStats } | null
  /** The last guest list upload of the chosen event: its counts, or why nothing was imported. */
  guestImport: { eventId: number; outcome: ImportOutcome } | null
  /** The team's products with their chips and owners (null: not loaded yet). */
  products: Product[] | null
  selectedProductId: number | null
  /** The product whose metadata was just saved: "Saved" shows until the form is edited again or another is chosen. */
  productSaved: number | null
  /** The last chip file upload: its counts, or why nothing was imported. */
  chipImport: ChipImportOutcome | null
  /** The team's chip profiles, for provisioning (null: not loaded yet). */
  chipProfiles: ChipProfile[] | null
  /** This gateway's readers and the team's provisioning run (null: not loaded yet). */
  provisioning: Provisioning | null
}

/** An upload that imported nothing (a guest list, a chip file): the message and each bad row and column. */
export type RefusedImport = { kind: 'refused'; message: string; problems: ImportProblem[] }
/** A guest list upload's end: in (the report's counts), or refused with each bad row and column. */
export type ImportOutcome = { kind: 'imported'; report: ImportReport } | RefusedImport
/** A chip file upload's end: in (the import's counts), or refused. */
export type ChipImportOutcome = { kind: 'imported'; result: ChipImport } | RefusedImport

export type Message =
  | { type: 'session'; team: Team }
  | { type: 'signedOut'; how: 'expired' | 'by-user' }
  | { type: 'tab'; tab: Tab }
  | { type: 'overview'; overview: Overview; at: string }
  | { type: 'stations'; stations: Station[] }
  | { type: 'station'; station: Station }
  | { type: 'stationRevoked'; stationId: number; at: string }
  | { type: 'events'; events: ConsoleEvent[] }
  | { type: 'keys'; keys: ApiKey[] }
  | { type: 'taps'; taps: Tap[]; filter: TapFilter }
  | { type: 'select'; stationId: number | null }
  | { type: 'kioskTokens'; stationId: number; tokens: KioskToken[] }
  | { type: 'event'; event: ConsoleEvent }
  | { type: 'selectEvent'; eventId: number | null }
  | { type: 'guests'; eventId: number; query: GuestQuery; page: GuestPage }
  | { type: 'eventStats'; eventId: number; stats: EventStats }
  | { type: 'guestImport'; eventId: number; outcome: ImportOutcome }
  | { type: 'products'; products: Product[] }
  | { type: 'selectProduct'; productId: number | null }
  /** A product's metadata saved: its new row, and "Saved" shown. */
  | { type: 'productSaved'; product: Product }
  /** The metadata form changed or was refused since it was saved: "Saved" goes. */
  | { type: 'productEdited' }
  | { type: 'chipImport'; outcome: ChipImportOutcome }
  | { type: 'chipProfiles'; profiles: ChipProfile[] }
  | { type: 'provisioning'; provisioning: Provisioning }
  /** A run started or stopped here: the readers stay as last read. */
  | { type: 'provisioningRun'; run: ProvisioningRun }

export const initialState = (tab: Tab = 'overview'): ConsoleState => ({
  team: null,
  signedOut: null,
  tab,
  overview: null,
  overviewAt: null,
  stations: [],
  events: [],
  keys: [],
  taps: [],
  tapFilter: {},
  selectedStationId: null,
  kioskTokens: null,
  selectedEventId: null,
  guests: null,
  eventStats: null,
  guestImport: null,
  products: null,
  selectedProductId: null,
  productSaved: null,
  chipImport: null,
  chipProfiles: null,
  provisioning: null,
})

/** What belongs to the chosen event only: forgotten when another is chosen. */
const noEventDetail = { guests: null, eventStats: null, guestImport: null } as const

/** A station changed (created, renamed, its mode set): every list that shows it follows. */
function withStation(list: Station[], station: Station, addIfMissing: boolean): Station[] {
  const i = list.findIndex((s) => s.id === station.id)
  if (i === -1) return addIfMissing ? [...list, station] : list
  return list.map((s) => (s.id === station.id ? station : s))
}

/**
 * The next state.
 *
 * @example
 * state = update(state, { type: 'tab', tab: 'keys' })
 */
export function update(state: ConsoleState, message: Message): ConsoleState {
  // Signed out is final for this page: a late answer must not bring the panels back.
  if (state.signedOut && message.type !== 'signedOut') return state
  switch (message.type) {
    case 'session':
      return { ...state, team: message.team }
    case 'signedOut':
      return { ...state, signedOut: state.signedOut ?? message.how }
    case 'tab':
      return { ...state, tab: message.tab }
    case 'overview':
      return { ...state, overview: message.overview, overviewAt: message.at, team: message.overview.team }
    case 'stations': {
      const selected = message.stations.some((s) => s.id === state.selectedStationId) ? state.selectedStationId : null
      return { ...state, stations: message.stations, selectedStationId: selected, kioskTokens: selected === null ? null : state.kioskTokens }
    }
    case 'station':
      return {
        ...state,
        stations: withStation(state.stations, message.station, true),
        overview: state.overview && { ...state.overview, stations: withStation(state.overview.stations, message.station, !message.station.revokedAt) },
      }
    case 'stationRevoked': {
      const revoke = (s: Station): Station => (s.id === message.stationId ? { ...s, revokedAt: message.at } : s)
      return {
        ...state,
        stations: state.stations.map(revoke),
        overview: state.overview && { ...state.overview, stations: state.overview.stations.filter((s) => s.id !== message.stationId) },
      }
    }
    case 'events': {
      const kept = message.events.some((e) => e.id === state.selectedEventId)
      return kept ? { ...state, events: message.events } : { ...state, events: message.events, selectedEventId: null, ...noEventDetail }
    }
    case 'event': {
      const known = state.events.some((e) => e.id === message.event.id)
      return { ...state, events: known ? state.events.map((e) => (e.id === message.event.id ? message.event : e)) : [...state.events, message.event] }
    }
    case 'selectEvent':
      return message.eventId === state.selectedEventId ? state : { ...state, selectedEventId: message.eventId, ...noEventDetail }
    // An answer for an event no longer chosen is late: dropped.
    case 'guests':
      return message.eventId === state.selectedEventId ? { ...state, guests: { eventId: message.eventId, query: message.query, page: message.page } } : state
    case 'eventStats':
      return message.eventId === state.selectedEventId ? { ...state, eventStats: { eventId: message.eventId, stats: message.stats } } : state
    case 'guestImport':
      return message.eventId === state.selectedEventId ? { ...state, guestImport: { eventId: message.eventId, outcome: message.outcome } } : state
    case 'products': {
      const kept = message.products.some((p) => p.id === state.selectedProductId)
      return { ...state, products: message.products, ...(kept ? {} : { selectedProductId: null, productSaved: null }) }
    }
    case 'selectProduct':
      return message.productId === state.selectedProductId ? state : { ...state, selectedProductId: message.productId, productSaved: null }
    case 'productSaved': {
      const saved = message.product
      const products = (state.products ?? []).map((p) => (p.id === saved.id ? saved : p))
      return { ...state, products, productSaved: saved.id === state.selectedProductId ? saved.id : state.productSaved }
    }
    case 'productEdited':
      return state.productSaved === null ? state : { ...state, productSaved: null }
    case 'chipImport':
      return { ...state, chipImport: message.outcome }
    case 'chipProfiles':
      return { ...state, chipProfiles: message.profiles }
    case 'provisioning':
      return { ...state, provisioning: message.provisioning }
    case 'provisioningRun':
      return { ...state, provisioning: { ...(state.provisioning ?? { success: true, readers: [], unavailable: null }), run: message.run } }
    case 'keys':
      return { ...state, keys: message.keys }
    case 'taps':
      return { ...state, taps: message.taps, tapFilter: message.filter }
    case 'select':
      return message.stationId === state.selectedStationId ? state : { ...state, selectedStationId: message.stationId, kioskTokens: null }
    case 'kioskTokens':
      return message.stationId === state.selectedStationId ? { ...state, kioskTokens: message.tokens } : state
  }
}

/** The tab a URL's fragment names (`/console#keys`), so a reload keeps the operator where they were. */
export function tabFromHash(hash: string): Tab {
  const name = hash.replace(/^#/, '')
  return (TABS as readonly string[]).includes(name) ? (name as Tab) : 'overview'
}
