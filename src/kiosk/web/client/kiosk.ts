/*
 * The attendee-facing check-in screen (GET /kiosk#token=…). It only renders what the gateway
 * decided: every state comes from the station's feed over /kiosk/ws. Nothing here names a person,
 * a chip or a wallet: the gateway sends this page publicView() events only.
 */
import type { CheckInSummary, KioskCounts, KioskState, KioskStation, ReaderEventData, StationEvent, TapEventData, TxStatus } from '../../protocol.js'
import { openLink, tokenFromFragment } from './link.js'
import { play, setMuted, isMuted, unlockAudio } from './sound.js'
import { clockTime, iconSvg, STATES } from './states.js'
import { keepScreenOn } from './wakeLock.js'

const STRIP_LENGTH = 5

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T

type Shown = { state: KioskState; word: string; detail: string; test: boolean; holdMs: number | null }

const view = {
  station: null as KioskStation | null,
  reader: null as ReaderEventData | null,
  connected: false,
  /** Why the page cannot work at all (no token, token refused): shown instead of everything else. */
  fatal: null as { word: string; detail: string } | null,
  retryAt: 0,
  shown: null as Shown | null,
}

// ---- the result panel ----

let holdTimer: ReturnType<typeof setTimeout> | undefined
let holdEndsAt = 0
let pausedRemaining: number | null = null

function restingState(): KioskState {
  if (!view.connected) return 'offline'
  if (view.station?.mode === 'closed') return 'closed'
  const reader = view.reader
  if (reader && (!reader.pcscd || reader.readers.length === 0)) return 'no-reader'
  if (reader?.cardPresent) return 'reading'
  return 'idle'
}

function idleWord(): { word: string; detail: string } {
  const mode = view.station?.mode ?? null
  if (mode === 'claim') return { word: 'Tap the tag on your product', detail: 'Hold it flat on the reader' }
  return { word: STATES.idle.word, detail: STATES.idle.detail }
}

let lastRendered: KioskState | null = null

function render(): void {
  const el = $('result')
  const state = view.fatal ? 'offline' : (view.shown?.state ?? restingState())
  const look = STATES[state]
  let word = look.word
  let detail = look.detail
  if (view.fatal) ({ word, detail } = view.fatal)
  else if (view.shown) ({ word, detail } = view.shown)
  else if (state === 'idle') ({ word, detail } = idleWord())
  else if (state === 'no-reader' && view.reader && !view.reader.pcscd) detail = 'The card reader service stopped; staff have been told'
  el.dataset.state = state
  el.dataset.sound = look.sound
  $('result-icon').innerHTML = iconSvg(look.icon)
  const code = view.fatal ? 'TG-TOKEN' : look.code
  const html =
    `<p class="word">${escapeHtml(word)}</p>` +
    (detail ? `<p class="detail">${escapeHtml(detail)}</p>` : '') +
    (view.shown?.test ? '<p class="tag">Test tap: not counted</p>' : '') +
    (code ? `<p class="code">Code ${code}</p>` : '')
  // Staff-needed results are announced assertively; the rest politely. The other region is emptied.
  $('result-alert').innerHTML = look.alert ? html : ''
  $('result-status').innerHTML = look.alert ? '' : html
  const bar = $('result-bar')
  bar.hidden = !(view.shown && view.shown.holdMs !== null)
  if (state === 'reading' && lastRendered !== 'reading') play('tick')
  lastRendered = state
  renderActions()
}

function clearShown(): void {
  clearTimeout(holdTimer)
  pausedRemaining = null
  view.shown = null
  render()
}

function startBar(ms: number): void {
  const bar = $('result-bar')
  const fill = bar.firstElementChild as HTMLElement
  fill.style.transition = 'none'
  fill.style.transform = `scaleX(${ms / (view.shown?.holdMs ?? ms)})`
  // Read layout so the next transition starts from here.
  void fill.offsetWidth
  fill.style.transition = `transform ${ms}ms linear`
  fill.style.transform = 'scaleX(0)'
}

function show(shown: Shown, sound: boolean): void {
  clearTimeout(holdTimer)
  pausedRemaining = null
  view.shown = shown
  render()
  if (sound) play(STATES[shown.state].sound)
  if (shown.holdMs !== null) {
    holdEndsAt = Date.now() + shown.holdMs
    startBar(shown.holdMs)
    holdTimer = setTimeout(clearShown, shown.holdMs)
  }
}

/** A touch on a result pauses its countdown (someone is reading it); a second touch resumes it. */
function togglePause(): void {
  if (!view.shown || view.shown.holdMs === null) return
  const fill = $('result-bar').firstElementChild as HTMLElement
  if (pausedRemaining === null) {
    pausedRemaining = Math.max(0, holdEndsAt - Date.now())
    clearTimeout(holdTimer)
    fill.style.transition = 'none'
    fill.style.transform = `scaleX(${pausedRemaining / view.shown.holdMs})`
    $('result').dataset.paused = 'true'
  } else {
    const remaining = pausedRemaining
    pausedRemaining = null
    delete $('result').dataset.paused
    holdEndsAt = Date.now() + remaining
    startBar(remaining)
    holdTimer = setTimeout(clearShown, remaining)
  }
}

// ---- taps → what the attendee sees ----

const PAGE_STATE: Record<TapEventData['state'], KioskState> = {
  accepted: 'accepted',
  already: 'already',
  replay: 'replay',
  unknown: 'unknown',
  retry: 'retry',
  // Any other refusal (a card that is not a badge, a malformed read): one plain "ask staff".
  refused: 'unknown',
  closed: 'closed',
}

function tapView(data: TapEventData): Shown {
  const state = PAGE_STATE[data.state]
  const look = STATES[state]
  let word = look.word
  let detail = look.detail
  if (data.state === 'refused') word = 'Badge not accepted here'
  if (state === 'already' && data.checkIn) {
    word = `Already checked in at ${clockTime(data.checkIn.at)} at ${data.checkIn.stationName}`
    detail = 'Nothing more to do: welcome back'
  }
  if (state === 'accepted') detail = acceptedDetail(data.checkIn)
  // A closed-station tap is shown briefly; the station's own closed screen stays after it.
  return { state, word, detail, test: data.test === true, holdMs: state === 'closed' ? 4000 : look.holdMs }
}

function acceptedDetail(checkIn: CheckInSummary | undefined): string {
  if (!checkIn) return ''
  const event = checkIn.eventName
  return checkIn.tx ? `${event}: your token is on its way` : `${event}: your token can be collected later`
}

// ---- the strip: the last results, anonymous, with their chain status ----

const stripByCheckIn = new Map<number, HTMLLIElement>()

const STRIP_WORD: Record<KioskState, string> = {
  idle: '',
  reading: '',
  accepted: 'Checked in',
  already: 'Already in',
  replay: 'Ask staff',
  unknown: 'Not registered',
  retry: 'Hold longer',
  'no-reader': '',
  offline: '',
  closed: 'Closed',
}

function chainText(status: TxStatus, hash: string | null): string {
  const short = hash ? `${hash.slice(0, 6)}…${hash.slice(-4)}` : ''
  switch (status) {
    case 'queued':
      return 'Minting…'
    case 'sent':
      return `Sent ${short}`
    case 'replaced':
      return `Replaced ${short}`
    case 'confirmed':
      return `In the wallet ✓ ${short}`
    case 'failed':
      return 'Mint failed: staff will retry'
  }
}

function setChain(li: HTMLLIElement, status: TxStatus | 'waiting' | 'undone', text: string): void {
  li.dataset.txStatus = status
  li.querySelector('.chain')!.textContent = text
}

function addToStrip(event: StationEvent & { kind: 'tap' }): void {
  const state = PAGE_STATE[event.data.state]
  const li = document.createElement('li')
  li.dataset.eventId = String(event.id)
  li.dataset.state = state
  li.innerHTML = `${iconSvg(STATES[state].icon)}<span class="what"></span><time></time><span class="chain"></span>`
  li.querySelector('.what')!.textContent = STRIP_WORD[state] + (event.data.test ? ' (test)' : '')
  const time = li.querySelector('time')!
  time.dateTime = event.at
  time.textContent = clockTime(event.at, true)
  const checkIn = event.data.checkIn
  if (state === 'accepted' && checkIn) {
    if (checkIn.tx) setChain(li, checkIn.tx.status, chainText(checkIn.tx.status, checkIn.tx.hash))
    else setChain(li, 'waiting', 'Token: collect later')
    stripByCheckIn.set(checkIn.id, li)
  }
  const strip = $('strip')
  strip.prepend(li)
  while (strip.children.length > STRIP_LENGTH) {
    const gone = strip.lastElementChild as HTMLLIElement
    for (const [id, el] of stripByCheckIn) if (el === gone) stripByCheckIn.delete(id)
    gone.remove()
  }
}

// ---- feed ----

function setCounts(counts: KioskCounts): void {
  const el = $('count')
  el.dataset.count = String(counts.event)
  el.textContent = counts.event.toLocaleString()
}

function setStation(station: KioskStation): void {
  view.station = station
  $('event-name').textContent = station.event?.name ?? (station.mode === 'closed' ? station.name : `${station.name}: no event set`)
}

function setReader(reader: ReaderEventData | null): void {
  view.reader = reader
  const el = $('reader')
  const ok = reader === null ? null : reader.pcscd && reader.readers.length > 0
  el.dataset.reader = ok === null ? 'unknown' : ok ? 'ready' : 'missing'
  el.textContent = ok === null ? 'Reader: waiting' : ok ? 'Reader ready' : 'No reader'
}

/** A result older than its hold time (a tap made while this page was away) goes to the strip only. */
const isFresh = (at: string) => Date.now() - Date.parse(at) < 4000

function onEvent(event: StationEvent, counts: KioskCounts, backlog: boolean): void {
  setCounts(counts)
  switch (event.kind) {
    case 'tap': {
      addToStrip(event)
      if (!backlog || isFresh(event.at)) show(tapView(event.data), true)
      break
    }
    case 'reader':
      setReader(event.data)
      render()
      break
    case 'tx': {
      const li = event.data.checkInId === null ? undefined : stripByCheckIn.get(event.data.checkInId)
      if (li && li.dataset.txStatus !== 'undone') {
        setChain(li, event.data.status, chainText(event.data.status, event.data.hash))
        if (event.data.status === 'confirmed' && !backlog) play('chime')
      }
      break
    }
    case 'mode':
      setStation({
        ...(view.station ?? { id: event.stationId, name: '' }),
        mode: event.data.mode,
        event: event.data.eventId === null ? null : { id: event.data.eventId, name: event.data.eventName ?? '' },
      })
      // A new mode starts from its own resting screen.
      clearShown()
      break
    case 'undo': {
      const li = stripByCheckIn.get(event.data.checkInId)
      if (li) setChain(li, 'undone', 'Undone by staff')
      break
    }
    case 'staff':
      // Staff dismissed the alert on screen (only this action reaches the public page).
      if (event.data.action === 'dismiss' && view.shown && STATES[view.shown.state].alert) clearShown()
      break
  }
}

// ---- the link banner and the actions ----

let bannerTimer: ReturnType<typeof setInterval> | undefined

function renderBanner(): void {
  const banner = $('banner')
  clearInterval(bannerTimer)
  if (view.connected || view.fatal) {
    banner.hidden = true
    return
  }
  banner.hidden = false
  const tick = () => {
    const s = Math.max(0, Math.ceil((view.retryAt - Date.now()) / 1000))
    $('banner-text').textContent = s > 0 ? `Not connected to the gateway: retrying in ${s} s` : 'Not connected to the gateway: retrying now…'
  }
  tick()
  bannerTimer = setInterval(tick, 250)
}

function renderActions(): void {
  for (const el of document.querySelectorAll<HTMLButtonElement>('[data-action]')) el.disabled = !view.connected && el.dataset.action !== 'sound'
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

// ---- start ----

function start(): void {
  keepScreenOn()
  document.addEventListener('pointerdown', unlockAudio)
  $('result').addEventListener('pointerdown', togglePause)
  const sound = $<HTMLButtonElement>('sound')
  sound.addEventListener('click', () => {
    setMuted(!isMuted())
    sound.textContent = isMuted() ? 'Sound off' : 'Sound on'
    sound.setAttribute('aria-pressed', String(!isMuted()))
  })
  const token = tokenFromFragment()
  $('staff').addEventListener('click', () => location.assign(`/kiosk/staff${location.hash}`))
  if (!token) {
    view.fatal = { word: 'This screen has no kiosk link', detail: 'Open the URL that tapgate station kiosk-url prints' }
    render()
    return
  }
  render()
  renderBanner()
  openLink({
    token,
    handlers: {
      welcome(message) {
        view.connected = true
        setStation(message.station)
        setReader(message.reader)
        setCounts(message.counts)
        renderBanner()
        render()
      },
      event: onEvent,
      down(retryInMs) {
        view.connected = false
        view.retryAt = Date.now() + retryInMs
        renderBanner()
        render()
      },
      refused(_code, message) {
        view.connected = false
        view.fatal = { word: 'This kiosk link is not valid', detail: message || 'Ask staff for a new one' }
        renderBanner()
        render()
      },
    },
  })
}

start()
