/*
 * The staff view (GET /kiosk/staff#token=…): a PIN pad, then the live feed with operator detail,
 * counts, health and the station's actions. The session lives in this page's memory only and ends
 * after a minute without use (the gateway ends it too; either way the PIN pad comes back).
 */
import type { KioskCounts, KioskStation, StationEvent } from '../../../wire/feedProtocol.js'
import { type Link, openLink, tokenFromFragment } from './link.js'
import { clockTime } from './states.js'
import { createDoor } from './staffDoor.js'
import { type ApiError, StaffApiError } from './staffDoorApi.js'
import { createNumbers } from './staffNumbers.js'
import { keepScreenOn } from './wakeLock.js'

const IDLE_MS = 60_000
/** A touch refreshes the state (which the gateway counts as use) at most this often. */
const KEEPALIVE_MS = 15_000
const FEED_LENGTH = 200
const PIN_MAX = 12

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T

type Json = Record<string, unknown>

const token = tokenFromFragment()
let session: string | null = null
let link: Link | null = null
let pin = ''
let lastUse = 0
let lastActivity = 0
let idleTimer: ReturnType<typeof setInterval> | undefined

async function request(method: 'GET' | 'POST', path: string, body?: Json): Promise<Response> {
  const headers: Record<string, string> = { 'x-kiosk-token': token ?? '' }
  if (session) headers['x-staff-session'] = session
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  lastUse = Date.now()
  if (!res.ok) {
    const error = (await res.json().catch(() => ({ success: false, error: 'bad_response', message: `The gateway answered ${res.status}` }))) as ApiError
    if (error.error === 'staff_session_ended' || error.error === 'invalid_staff_session') endSession('Your staff session ended. Enter the PIN again.')
    throw new StaffApiError(res.status, error)
  }
  return res
}

async function api(method: 'GET' | 'POST', path: string, body?: Json): Promise<Json> {
  const res = await request(method, path, body)
  return (await res.json().catch(() => {
    throw new StaffApiError(res.status, { success: false, error: 'bad_response', message: `The gateway answered ${res.status} with no JSON` })
  })) as Json
}

async function fetchFile(path: string): Promise<{ blob: Blob; filename: string | null }> {
  const res = await request('GET', path)
  const filename = /filename="?([^";]+)"?/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? null
  return { blob: await res.blob(), filename }
}

const numbers = createNumbers(api)
const door = createDoor({ api, fetchFile, onChange: () => numbers.changed() })

// ---- PIN pad ----

function renderPin(): void {
  $('pin-display').textContent = pin ? '•'.repeat(pin.length) : 'Enter PIN'
  $('pin-display').dataset.length = String(pin.length)
}

function pinMessage(text: string, kind: 'error' | 'info' = 'error'): void {
  const el = $('pin-message')
  el.textContent = text
  el.dataset.kind = kind
}

const timeOf = (t: string | number) => clockTime(new Date(t).toISOString())

async function submitPin(): Promise<void> {
  if (pin.length < 4) return pinMessage('A PIN has 4 to 12 digits')
  const tried = pin
  pin = ''
  renderPin()
  try {
    const res = await api('POST', '/kiosk/staff/session', { pin: tried })
    session = String(res.session)
    pinMessage('', 'info')
    startSession()
  } catch (e) {
    if (!(e instanceof StaffApiError)) return pinMessage('The gateway cannot be reached. Try again.')
    const { error, message, triesLeft, lockedUntil } = e.body
    if (error === 'invalid_pin') pinMessage(`Wrong PIN. ${triesLeft ?? '?'} ${triesLeft === 1 ? 'try' : 'tries'} left.`)
    else if (error === 'pin_locked') pinMessage(`Locked after too many wrong PINs. Try again at ${lockedUntil === undefined ? 'a later time' : timeOf(lockedUntil)}.`)
    else if (error === 'pin_not_set') pinMessage('No staff PIN is set. Run: tapgate station staff-pin --station ID')
    else pinMessage(message)
    $('pin-message').dataset.error = error
  }
}

function pressKey(key: string): void {
  if (/^[0-9]$/.test(key) && pin.length < PIN_MAX) pin += key
  else if (key === 'back') pin = pin.slice(0, -1)
  else if (key === 'enter') return void submitPin()
  renderPin()
}

// ---- the session ----

function startSession(): void {
  $('login').hidden = true
  $('panel').hidden = false
  lastActivity = Date.now()
  clearInterval(idleTimer)
  idleTimer = setInterval(() => {
    if (Date.now() - lastActivity >= IDLE_MS) {
      void api('POST', '/kiosk/staff/end').catch(() => undefined)
      endSession('Session ended after a minute without use. Enter the PIN again.')
    }
  }, 1000)
  void refresh()
  numbers.start()
  door.focus()
  link?.close()
  link = openLink({
    token: token ?? '',
    staffSession: session ?? '',
    handlers: {
      welcome(message) {
        setBanner(null)
        setStation(message.station)
        setCounts(message.counts)
      },
      event(event, counts, backlog) {
        setCounts(counts)
        if (currentStation) followCounts(currentStation, counts)
        addFeedRow(event)
        door.event(event, backlog)
        if (event.kind === 'tap' || event.kind === 'undo' || event.kind === 'mode') numbers.changed()
        if (event.kind === 'mode') void refresh()
      },
      down(retryInMs) {
        setBanner(`Not connected to the gateway: retrying in ${Math.ceil(retryInMs / 1000)} s`)
      },
      refused() {
        endSession('Your staff session ended. Enter the PIN again.')
      },
    },
  })
}

function endSession(message: string): void {
  session = null
  link?.close()
  link = null
  clearInterval(idleTimer)
  numbers.stop()
  door.clear()
  $('feed').replaceChildren()
  $('panel').hidden = true
  $('login').hidden = false
  pinMessage(message, 'info')
}

function activity(): void {
  lastActivity = Date.now()
  if (session && Date.now() - lastUse > KEEPALIVE_MS) void refresh()
}

// ---- panel ----

function setBanner(text: string | null): void {
  $('banner').hidden = text === null
  $('banner-text').textContent = text ?? ''
  for (const el of document.querySelectorAll<HTMLButtonElement | HTMLInputElement | HTMLSelectElement>('[data-action]')) el.disabled = text !== null
}

/** The station as the last welcome, state or mode change said. */
let currentStation: KioskStation | null = null

function setStation(station: KioskStation): void {
  currentStation = station
  $('station-name').textContent = `: ${station.name}`
  $('station-mode').textContent = station.mode === null ? 'no mode set' : station.mode + (station.event ? `: ${station.event.name}` : '')
  const mode = $<HTMLSelectElement>('mode')
  if (station.mode) mode.value = station.mode
  // The PIN switches the mode of this event only (403 staff_event_locked otherwise): no event picker.
  $('mode-event').textContent = station.event ? station.event.name : 'none'
  door.setStation(station)
}

function setCounts(counts: KioskCounts): void {
  $('count-event').textContent = String(counts.event)
  $('count-station').textContent = String(counts.station)
  $('count-5min').textContent = String(counts.last5Minutes)
  $('count-claimed').textContent = String(counts.claimed)
}

async function refresh(): Promise<void> {
  try {
    const state = await api('GET', '/kiosk/staff/state')
    renderState(state as unknown as StaffState)
  } catch {
    // Shown by endSession or the banner.
  }
}

/** Label: value rows of any flat object (the state's health and counts). */
function definitionList(target: HTMLElement, entries: [string, unknown][]): void {
  target.replaceChildren(
    ...entries.flatMap(([k, v]) => {
      const dt = document.createElement('dt')
      dt.textContent = k
      const dd = document.createElement('dd')
      dd.textContent = typeof v === 'object' && v !== null ? (Array.isArray(v) ? v.join(', ') || 'none' : JSON.stringify(v)) : String(v)
      return [dt, dd]
    }),
  )
}

type StaffState = {
  station: KioskStation
  counts: KioskCounts
  testUntil: string | null
  team: {
    events: { eventId: number; name: string; checkedIn: number }[]
    stations: { stationId: number; name: string; mode: string | null; checkedIn: number; last5Minutes: number }[]
  }
  health: {
    reader: { readers: string[]; cardPresent: boolean; pcscd: boolean } | null
    chains: { chainId: number; reachable: boolean | null }[]
    outboxPending: number
    kiosksConnected: number
  }
  claims: ClaimStats[]
  recent: StationEvent[]
}

type ClaimStats = {
  product: string
  taps: number
  claimed: number
  registered: number
  linksShown: number
  linksOpened: number
  linksUsed: number
  linksExpired: number
  expired: number
}

/**
 * A table row whose cells carry their column's header (`data-label`): below a desktop's width the
 * stylesheet shows each row as a card of label: value lines instead of columns one letter wide.
 */
function labelledRow(table: HTMLElement, cells: (string | Node)[]): HTMLTableRowElement {
  const headers = [...table.querySelectorAll('thead th')].map((th) => th.textContent ?? '')
  const tr = document.createElement('tr')
  cells.forEach((cell, i) => {
    const td = document.createElement('td')
    td.dataset.label = headers[i] ?? ''
    if (cell !== '') td.append(cell)
    tr.append(td)
  })
  return tr
}

/** One row per product (or event, for check-ins collected later): how its claims went. */
function renderClaims(claims: ClaimStats[]): void {
  const keys = ['taps', 'claimed', 'registered', 'linksShown', 'linksOpened', 'linksUsed', 'linksExpired', 'expired'] as const
  $('claims').replaceChildren(...claims.map((c) => labelledRow($('claims-table'), [c.product, ...keys.map((k) => String(c[k]))])))
}

const yesNo = (v: boolean | null) => (v === null ? 'unknown' : v ? 'yes' : 'NO')

/** The team's rows as of the last state, this station's and its event's kept current by the feed's counts. */
let teamCounts: StaffState['team'] | null = null

function renderTeamCounts(): void {
  if (!teamCounts) return
  definitionList($('counts-detail'), [
    ...teamCounts.events.map((e): [string, unknown] => [`Event "${e.name}"`, e.checkedIn]),
    ...teamCounts.stations.map((st): [string, unknown] => [`Station "${st.name}" (${st.mode ?? 'no mode'})`, `${st.checkedIn} (${st.last5Minutes} in 5 min)`]),
  ])
}

/**
 * Every feed message carries this station's counts: its row and its event's row follow them, so the
 * staff view never shows two numbers for one event (fetching the whole state on each tap would count as
 * staff activity and keep an unattended session open).
 */
function followCounts(station: KioskStation, counts: KioskCounts): void {
  if (!teamCounts) return
  teamCounts = {
    events: teamCounts.events.map((e) => (e.eventId === station.event?.id ? { ...e, checkedIn: counts.event } : e)),
    stations: teamCounts.stations.map((st) => (st.stationId === station.id ? { ...st, checkedIn: counts.station, last5Minutes: counts.last5Minutes } : st)),
  }
  renderTeamCounts()
}

function renderState(state: StaffState): void {
  setStation(state.station)
  setCounts(state.counts)
  const { reader, chains, outboxPending, kiosksConnected } = state.health
  definitionList($('health'), [
    ['Readers', reader === null ? 'no report yet' : reader.readers.join(', ') || 'NONE'],
    ['pcscd', reader === null ? 'unknown' : reader.pcscd ? 'running' : 'LOST'],
    ['Card on reader', reader === null ? 'unknown' : yesNo(reader.cardPresent)],
    ...chains.map((c): [string, unknown] => [`Chain ${c.chainId} reachable`, yesNo(c.reachable)]),
    ['Outbox pending', outboxPending],
    ['Kiosks connected', kiosksConnected],
    ['Test chip until', state.testUntil === null ? 'off' : clockTime(state.testUntil, true)],
  ])
  teamCounts = state.team
  renderTeamCounts()
  renderClaims(state.claims)
  if ($('feed').children.length === 0) for (const event of [...state.recent].sort((a, b) => a.id - b.id)) addFeedRow(event)
}

const shortHash = (h: string | null | undefined) => (h ? `${h.slice(0, 10)}…${h.slice(-6)}` : '')

function addFeedRow(event: StationEvent): void {
  const feed = $('feed')
  if (feed.querySelector(`tr[data-event-id="${event.id}"]`)) return
  const cells: (string | Node)[] = [clockTime(event.at, true), event.kind]
  let state: string | undefined
  switch (event.kind) {
    case 'tap': {
      const d = event.data
      state = d.state
      const tx = d.checkIn?.tx ?? d.claim?.tx
      cells.push(
        d.readerName ?? '',
        d.state + (d.test ? ' (test)' : '') + (d.checkIn?.manual ? ' (manual)' : '') + (d.claim ? ` claim #${d.claim.id} ${d.claim.step}` : ''),
        d.uid ?? '',
        [d.reason, d.detail, d.claim?.recipient ? `to ${d.claim.recipient}` : ''].filter(Boolean).join(': '),
        d.counter === undefined || d.counter === null ? '' : String(d.counter),
        tx ? `#${tx.id} ${tx.status} ${shortHash(tx.hash)}` : '',
      )
      break
    }
    case 'tx': {
      const d = event.data
      const txCell = document.createElement('span')
      txCell.textContent = `#${d.txId} ${d.status} ${d.hash ?? ''}${d.error ? ` (${d.error})` : ''}`
      if (d.status === 'failed') {
        const retry = document.createElement('button')
        retry.type = 'button'
        retry.textContent = 'Retry'
        retry.dataset.action = 'retry'
        retry.addEventListener('click', () => act('/kiosk/staff/retry', { txId: d.txId }))
        txCell.append(' ', retry)
      }
      cells.push('', d.status + (d.claimId ? ` (claim #${d.claimId})` : ''), '', d.error ?? '', '', txCell)
      break
    }
    case 'reader':
      cells.push(event.data.readers.join(', ') || 'none', event.data.pcscd ? (event.data.cardPresent ? 'card present' : 'ready') : 'pcscd lost', '', '', '', '')
      break
    case 'mode':
      cells.push('', event.data.mode ?? 'none', '', event.data.eventName ?? '', '', '')
      break
    case 'staff':
      cells.push('', event.data.action, '', event.data.summary, '', event.data.txId ? `#${event.data.txId}` : '')
      break
    case 'claim': {
      const c = event.data.claim
      const how = c.via ? ` via ${c.via}` : ''
      cells.push('', `claim #${c.id} ${c.step}${how}`, '', [c.product.name, c.recipient ? `to ${c.recipient}` : ''].filter(Boolean).join(': '), '', c.tx ? `#${c.tx.id} ${c.tx.status}` : '')
      break
    }
    case 'undo':
      cells.push('', 'undo', '', `check-in ${event.data.checkInId}${event.data.tokenStays ? '; its token stays' : ''}`, '', '')
      break
  }
  const tr = labelledRow($('feed-table'), cells)
  tr.dataset.eventId = String(event.id)
  tr.dataset.kind = event.kind
  if (state) tr.dataset.state = state
  feed.prepend(tr)
  while (feed.children.length > FEED_LENGTH) feed.lastElementChild!.remove()
}

/** What the action did, in words (the undo says whether the attendee keeps the token). */
function actionSummary(path: string, res: Json): string {
  if (path.endsWith('/undo')) return `Check-in ${res.checkInId} undone: the count went down.${res.tokenStays ? ' The token was already minted and stays with the attendee.' : ''}`
  if (path.endsWith('/check-in')) return res.state === 'already' ? 'That chip was already checked in.' : 'Checked in by hand.'
  if (path.endsWith('/retry')) return `Transaction ${res.txId} sent again: ${String(res.txnHash ?? '')}`
  if (path.endsWith('/test-chip')) return `Test chip until ${clockTime(String(res.testUntil), true)}: taps until then do not count.`
  if (path.endsWith('/mode')) return 'Mode changed.'
  if (path.endsWith('/dismiss')) return 'Alert dismissed: the check-in screen is back to idle.'
  return 'Done.'
}

async function act(path: string, body?: Json): Promise<void> {
  const out = $('action-result')
  try {
    const res = await api('POST', path, body ?? {})
    out.dataset.kind = 'ok'
    out.textContent = actionSummary(path, res)
    void refresh()
    numbers.changed()
  } catch (e) {
    out.dataset.kind = 'error'
    out.textContent = e instanceof StaffApiError ? e.body.message : 'The gateway cannot be reached'
  }
}

// ---- start ----

function start(): void {
  keepScreenOn()
  const back = $<HTMLAnchorElement>('back')
  back.href = `/kiosk${location.hash}`
  if (!token) {
    pinMessage('This page has no kiosk link: open the URL that tapgate station kiosk-url prints, then add /staff after /kiosk.')
    return
  }
  for (const b of document.querySelectorAll<HTMLButtonElement>('[data-key]')) b.addEventListener('click', () => pressKey(b.dataset.key!))
  document.addEventListener('keydown', (e) => {
    if ($('login').hidden) return
    if (/^[0-9]$/.test(e.key)) pressKey(e.key)
    else if (e.key === 'Backspace') pressKey('back')
    else if (e.key === 'Enter') pressKey('enter')
  })
  for (const type of ['pointerdown', 'keydown'] as const) document.addEventListener(type, activity)
  $('end').addEventListener('click', () => {
    void api('POST', '/kiosk/staff/end').catch(() => undefined)
    endSession('Session ended.')
  })
  $('mode-form').addEventListener('submit', (e) => {
    e.preventDefault()
    void act('/kiosk/staff/mode', { mode: $<HTMLSelectElement>('mode').value })
  })
  $('checkin-form').addEventListener('submit', (e) => {
    e.preventDefault()
    void act('/kiosk/staff/check-in', { uid: $<HTMLInputElement>('uid').value.trim() })
  })
  $('undo').addEventListener('click', () => act('/kiosk/staff/undo'))
  $('test-chip').addEventListener('click', () => act('/kiosk/staff/test-chip', { seconds: 60 }))
  $('dismiss').addEventListener('click', () => act('/kiosk/staff/dismiss'))
  renderPin()
}

start()
