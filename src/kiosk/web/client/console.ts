/*
 * The web console (GET /console, issue 28): a team's stations, events and guest lists, products and chips, API keys and tap log, for an
 * operator signed in with a one-time console link (signin.ts). The session is an HttpOnly cookie
 * this code never sees; when the gateway stops taking it (12 h, "Sign out", a revoke) every panel
 * gives way to the signed-out screen, which says how to get a new link.
 */
import { createConsoleApi } from './consoleApi.js'
import { $, createStatusLine } from './consoleDom.js'
import { createEvents } from './consoleEvents.js'
import { createKeys } from './consoleKeys.js'
import { createOverview } from './consoleOverview.js'
import { createProducts } from './consoleProducts.js'
import { createProvisioning, provisioningOn } from './consoleProvisioning.js'
import { type ConsoleState, initialState, type Message, type Tab, tabFromHash, update } from './consoleState.js'
import { createStations } from './consoleStations.js'
import { createTabs } from './consoleTabs.js'
import { createTaps } from './consoleTaps.js'

/** How often the overview (or a chosen event's numbers) asks again while on screen: a tap shows within this. */
const OVERVIEW_EVERY_MS = 4000
/** How often a provisioning run on screen is asked for: a placed chip shows within this. */
const PROVISIONING_EVERY_MS = 1000

let state: ConsoleState = initialState(tabFromHash(location.hash))

function dispatch(message: Message): void {
  const before = state
  state = update(state, message)
  if (state === before) return
  render(before)
  if (state.tab !== before.tab) tabShown(state.tab)
}

const status = createStatusLine($('status'))
const api = createConsoleApi({ onSignedOut: () => dispatch({ type: 'signedOut', how: 'expired' }) })
const tabs = createTabs($('tabs'), (tab) => dispatch({ type: 'tab', tab }))
const stations = createStations({ api, dispatch, status, getState: () => state })
const overview = createOverview({ api, dispatch, status, manage: (stationId) => stations.open(stationId) })
const events = createEvents({ api, dispatch, status, getState: () => state })
const keys = createKeys({ api, dispatch, status })
const taps = createTaps({ api, dispatch, status, getState: () => state })
const products = createProducts({ api, dispatch, status, getState: () => state, showChipTaps: (uid) => taps.showChip(uid) })
const provisioning = createProvisioning({ api, dispatch, status, getState: () => state })
let overviewTimer: ReturnType<typeof setInterval> | undefined
let provisioningTimer: ReturnType<typeof setInterval> | undefined

const LOADERS: Record<Tab, () => Promise<void>> = {
  overview: overview.load,
  stations: stations.load,
  events: events.load,
  products: () => Promise.all([products.load(), provisioning.load()]).then(() => undefined),
  keys: keys.load,
  taps: taps.load,
}

/** A tab just shown: its data is fetched fresh, and the address keeps it for a reload. */
function tabShown(tab: Tab): void {
  history.replaceState(null, '', `#${tab}`)
  status.clear()
  void LOADERS[tab]()
}

function render(before: ConsoleState): void {
  if (state.signedOut) return showSignedOut(before)
  $('team-name').textContent = state.team?.name ?? '…'
  if (state.team) document.title = `${state.team.name} · tapgate console`
  tabs.render(state)
  overview.render(state)
  stations.render(state)
  events.render(state)
  products.render(state)
  provisioning.render(state)
  keys.render(state)
  taps.render(state)
}

function showSignedOut(before: ConsoleState): void {
  if (before.signedOut) return
  clearInterval(overviewTimer)
  clearInterval(provisioningTimer)
  for (const id of ['tabs', 'main', 'status', 'sign-out']) $(id).hidden = true
  $('signed-out').hidden = false
  $('signed-out-why').textContent =
    state.signedOut === 'by-user'
      ? 'You signed out: this browser holds no console session any more.'
      : 'The gateway no longer takes this browser’s console session: it is older than 12 hours, was signed out, or was revoked.'
  $('signed-out-command').textContent = `tapgate console-link --team ${state.team?.id ?? '<id>'}`
  $('signed-out').focus()
}

/** The data on screen again after the page was in the background: it may be minutes old. */
function refreshShown(): void {
  if (state.signedOut || document.visibilityState !== 'visible') return
  if (state.tab === 'overview' || state.tab === 'taps' || state.tab === 'products') void LOADERS[state.tab]()
  if (state.tab === 'events') void events.refreshNumbers()
}

async function start(): Promise<void> {
  $('sign-out').addEventListener('click', async () => {
    const answer = await api.signOut()
    if (answer.ok) dispatch({ type: 'signedOut', how: 'by-user' })
    else if (answer.status !== 401) status.show(`Not signed out: ${answer.message}`, 'error')
  })
  const session = await api.session()
  if (!session.ok) {
    if (session.status !== 401) status.show(`The console cannot start: ${session.message} Reload the page to try again.`, 'error')
    return
  }
  dispatch({ type: 'session', team: session.body.team })
  history.replaceState(null, '', `#${state.tab}`)
  // The station names are needed on every tab (the taps' station column and filter).
  await Promise.all([stations.load(), state.tab === 'stations' ? Promise.resolve() : LOADERS[state.tab]()])
  overviewTimer = setInterval(() => {
    if (document.visibilityState !== 'visible') return
    if (state.tab === 'overview') void overview.load()
    if (state.tab === 'events') void events.refreshNumbers()
    // The readers (a chip on one or not) while no run is on; a run has its own, faster pace.
    if (state.tab === 'products' && !provisioningOn(state)) void provisioning.poll()
  }, OVERVIEW_EVERY_MS)
  provisioningTimer = setInterval(() => {
    if (document.visibilityState === 'visible' && state.tab === 'products' && provisioningOn(state)) void provisioning.poll()
  }, PROVISIONING_EVERY_MS)
  document.addEventListener('visibilitychange', refreshShown)
  window.addEventListener('focus', refreshShown)
}

void start()
