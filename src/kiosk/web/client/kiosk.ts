/*
 * The attendee-facing screen (GET /kiosk#token=…): check-in, and the claim station's customer flow.
 * It only renders what the gateway decided: every state comes from the station's feed over
 * /kiosk/ws (and the answers to the page's two claim calls). Nothing here names a person, a chip or
 * a wallet: the gateway sends this page publicView() events only, and a typed address leaves the
 * screen once it is sent.
 */
import type {
  AttendeeView,
  CheckInSummary,
  ClaimSummary,
  KioskCounts,
  KioskSettings,
  KioskState,
  KioskStation,
  ReaderEventData,
  StationEvent,
  TapEventData,
  TxStatus,
} from '../../../wire/feedProtocol.js'
import { type Handoff, requestHandoff, sendRecipient } from './claimApi.js'
import { createClaimPanel } from './claimPanel.js'
import { chainText, claimStepText, countdown, handoffError, recipientError } from './claimText.js'
import { createCustomerTimeout } from './customerTimeout.js'
import { openLink, tokenFromFragment } from './link.js'
import { captureKeys } from './scanner.js'
import { play, setMuted, isMuted, unlockAudio } from './sound.js'
import { clockTime, iconSvg, OPENED_MS, RESULT_MS, STATES } from './states.js'
import { keepScreenOn } from './wakeLock.js'

const STRIP_LENGTH = 5
/** A check-in whose token waits for a wallet: the welcome first, then the hand-off choices. */
const WELCOME_MS = 3000

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T

type Shown = {
  state: KioskState
  word: string
  detail: string
  test: boolean
  holdMs: number | null
  /** The claim this result is about (claim states, and a check-in that carries one). */
  claim?: ClaimSummary
  /** handoff: the phone link and its QR code. */
  handoff?: Handoff
  /** registered: the countdown runs to this (ISO). */
  until?: string
  /** claimed: where its transaction is. */
  progress?: TxStatus
  /** What follows when the hold runs out (a check-in's welcome, then its hand-off). */
  then?: Shown
  /** The guest of a door with a guest list: first name (or the whole, as the event says) and ticket type, in large type. */
  guest?: { name: string; ticketType: string }
}

const DEFAULT_SETTINGS: KioskSettings = { customerIdleMs: 60_000, customerWarnMs: 20_000, wifiName: null }

const view = {
  station: null as KioskStation | null,
  reader: null as ReaderEventData | null,
  counts: null as KioskCounts | null,
  settings: DEFAULT_SETTINGS,
  connected: false,
  /** Why the page cannot work at all (no token, token refused): shown instead of everything else. */
  fatal: null as { word: string; detail: string } | null,
  retryAt: 0,
  shown: null as Shown | null,
  token: '',
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
  if (mode === 'bind') return { word: 'Tap your wristband', detail: 'After staff have scanned your ticket' }
  if (mode === 'exit') return { word: 'Leaving? Tap your badge', detail: 'So we know who is inside' }
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
  el.dataset.guest = String(Boolean(!view.fatal && view.shown?.guest))
  $('result-icon').innerHTML = iconSvg(look.icon)
  const code = view.fatal ? 'TG-TOKEN' : look.code
  const guest = view.fatal ? undefined : view.shown?.guest
  const html =
    (guest ? `<p class="guest-name">${escapeHtml(guest.name)}</p><p class="guest-type">${escapeHtml(guest.ticketType)}</p>` : '') +
    `<p class="word">${escapeHtml(word)}</p>` +
    (detail ? `<p class="detail">${escapeHtml(detail)}</p>` : '') +
    (view.shown?.until ? `<p class="countdown" id="countdown">${escapeHtml(untilText(view.shown.until))}</p>` : '') +
    (view.shown?.progress ? progressHtml(view.shown.progress) : '') +
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
  renderClaim(state)
}

// ---- the claim on screen ----

const CUSTOMER_FLOW: ReadonlySet<KioskState> = new Set(['product', 'handoff'])

const panel = createClaimPanel({ onPhone: () => void finishOnPhone(), onSend: (recipient) => void sendAddress(recipient) })
const customerTimeout = createCustomerTimeout({
  settings: () => view.settings,
  overlay: $('still-there'),
  count: $('still-there-count'),
  onReset: () => clearShown(),
})
let panelFor: Shown | null = null
let countdownTimer: ReturnType<typeof setInterval> | undefined

function renderClaim(state: KioskState): void {
  const shown = view.fatal ? null : view.shown
  const flow = shown?.claim && CUSTOMER_FLOW.has(state) ? shown : null
  $('result').dataset.layout = flow ? 'claim' : 'plain'
  if (flow && flow !== panelFor) {
    panel.show({ claim: flow.claim!, mode: state === 'handoff' ? 'handoff' : 'product', handoff: flow.handoff ?? null, wifiName: view.settings.wifiName })
  } else if (!flow && panelFor) panel.hide()
  panelFor = flow
  panel.setConnected(view.connected)
  if (flow) customerTimeout.start()
  else customerTimeout.stop()
  clearInterval(countdownTimer)
  if (shown?.until) {
    const until = shown.until
    countdownTimer = setInterval(() => {
      const el = document.getElementById('countdown')
      if (el) el.textContent = untilText(until)
    }, 1000)
  }
}

function untilText(until: string): string {
  const left = countdown(Date.parse(until), Date.now())
  return left ? `Tap again ${left}` : 'You can tap again now'
}

const STEPS: { status: TxStatus; word: string }[] = [
  { status: 'queued', word: 'Queued' },
  { status: 'sent', word: 'Sent' },
  { status: 'confirmed', word: 'In your wallet' },
]

/** The transfer's three steps, the current one marked (a replaced hash is still "sent"). */
function progressHtml(status: TxStatus): string {
  const at = status === 'replaced' ? 1 : status === 'failed' ? -1 : STEPS.findIndex((s) => s.status === status)
  const items = STEPS.map((s, i) => `<li data-done="${i <= at}"${i === at ? ' aria-current="step"' : ''}>${s.word}</li>`).join('')
  return `<ol class="steps" data-tx-status="${status}" aria-label="Progress">${items}</ol>`
}

/** The latest we know of each claim and its transaction (the feed and the kiosk's own calls race). */
const claims = new Map<number, ClaimSummary>()
const claimTx = new Map<number, { status: TxStatus; hash: string | null }>()

function remember(claim: ClaimSummary): void {
  claims.delete(claim.id)
  claims.set(claim.id, claim)
  if (claim.tx && !claimTx.has(claim.id)) claimTx.set(claim.id, { status: claim.tx.status, hash: claim.tx.hash })
  // Only the last few can still be on screen or in the strip.
  while (claims.size > 50) claims.delete(claims.keys().next().value!)
  while (claimTx.size > 50) claimTx.delete(claimTx.keys().next().value!)
}

function productShown(claim: ClaimSummary, test: boolean): Shown {
  const look = STATES.product
  const word = claim.kind === 'guestbook' ? 'Collect your token' : look.word
  return { state: 'product', word, detail: look.detail, test, holdMs: null, claim }
}

function registeredShown(claim: ClaimSummary, test: boolean): Shown {
  const look = STATES.registered
  const at = claim.allowedAt
  return {
    state: 'registered',
    word: at ? `Registered. Tap again after ${clockTime(at)}` : look.word,
    detail: claim.step === 'early' ? 'Too early: nothing was sent. Your address stays registered' : look.detail,
    test,
    holdMs: look.holdMs,
    claim,
    ...(at ? { until: at } : {}),
  }
}

function claimedShown(claim: ClaimSummary, test: boolean): Shown {
  const tx = claimTx.get(claim.id) ?? claim.tx
  if (tx?.status === 'confirmed') return confirmedShown(claim, test, RESULT_MS)
  const status = tx?.status ?? 'queued'
  return { state: 'claimed', word: STATES.claimed.word, detail: chainText(status, tx?.hash ?? null, claim.kind), test, holdMs: STATES.claimed.holdMs, claim, progress: status }
}

function confirmedShown(claim: ClaimSummary | undefined, test: boolean, holdMs: number): Shown {
  const detail = claim ? `${claim.product.name}: it is yours now` : STATES.confirmed.detail
  return { state: 'confirmed', word: STATES.confirmed.word, detail, test, holdMs, ...(claim ? { claim } : {}) }
}

/** The tap's OTP ran out before the claim was finished: nothing was spent, a new tap starts again. */
function expiredShown(claim: ClaimSummary, test: boolean): Shown {
  return { state: 'retry', word: 'Time ran out', detail: 'Tap the tag again to start over', test, holdMs: RESULT_MS, claim }
}

/** The token moved after this tap (another claim, or the shop, took it): said plainly, nothing was sent. */
function movedShown(claim: ClaimSummary, test: boolean): Shown {
  return { state: 'moved', word: STATES.moved.word, detail: STATES.moved.detail, test, holdMs: STATES.moved.holdMs, claim: { ...claim, step: 'moved' } }
}

/** What a claim at its current step shows, when it is the customer's (a tap, the kiosk's own call). */
function claimView(claim: ClaimSummary, test: boolean): Shown {
  switch (claim.step) {
    case 'open':
      return productShown(claim, test)
    case 'opened':
      return { state: 'opened', word: STATES.opened.word, detail: STATES.opened.detail, test, holdMs: STATES.opened.holdMs, claim }
    case 'registered':
    case 'early':
      return registeredShown(claim, test)
    case 'claimed':
      return claimedShown(claim, test)
    case 'expired':
      return expiredShown(claim, test)
    case 'moved':
      return movedShown(claim, test)
  }
}

/** A claim moved on (feed or the kiosk's own call): the screen follows it if it is the one shown. */
function claimUpdated(claim: ClaimSummary): void {
  remember(claim)
  const li = stripByClaim.get(claim.id)
  if (li && li.dataset.txStatus !== 'undone') {
    const tx = claimTx.get(claim.id)
    if (tx) setChain(li, tx.status, chainText(tx.status, tx.hash, claim.kind))
    else setChain(li, 'waiting', claimStepText(claim.step))
  }
  const shown = view.shown
  if (!shown?.claim || shown.claim.id !== claim.id) return
  const onScreen = shown.state
  // Later steps only: a late echo of an earlier step does not take the screen back.
  if (onScreen === 'claimed' || onScreen === 'confirmed') return
  if (claim.step === 'open') return
  if (onScreen === 'registered' && claim.step !== 'claimed') return
  show(claimView(claim, shown.test), true)
}

function txOfClaim(claimId: number, status: TxStatus, hash: string | null, backlog: boolean): void {
  claimTx.set(claimId, { status, hash })
  const claim = claims.get(claimId)
  const shown = view.shown
  if (shown?.claim?.id === claimId && shown.state === 'claimed') {
    if (status === 'confirmed') show(confirmedShown(claim ?? shown.claim, shown.test, RESULT_MS), true)
    else {
      // The same result, further on: its hold keeps running.
      shown.progress = status
      shown.detail = chainText(status, hash, shown.claim.kind)
      render()
    }
    return
  }
  // Finished on a phone (or after the "on its way" hold ran out): a brief "in your wallet", but
  // never over another customer.
  if (status === 'confirmed' && !backlog && !view.shown && restingState() === 'idle') show(confirmedShown(claim, false, OPENED_MS), true)
}

async function finishOnPhone(): Promise<void> {
  const shown = view.shown
  const claim = shown?.claim
  if (!shown || !claim || shown.state !== 'product') return
  panel.phoneError('')
  panel.setPhoneBusy(true)
  const res = await requestHandoff(view.token, claim.id)
  panel.setPhoneBusy(false)
  if (view.shown !== shown) return
  if (res.ok) show({ ...shown, state: 'handoff', word: STATES.handoff.word, detail: STATES.handoff.detail, handoff: res.body }, false)
  else if (res.error === 'claim_expired') show(expiredShown(claim, shown.test), true)
  else if (res.error === 'token_moved') show(movedShown(claim, shown.test), true)
  else panel.phoneError(handoffError(res.error, res.message))
}

async function sendAddress(recipient: string): Promise<void> {
  const shown = view.shown
  const claim = shown?.claim
  if (!shown || !claim || !CUSTOMER_FLOW.has(shown.state)) return
  panel.addressError('')
  panel.setSending(true)
  const res = await sendRecipient(view.token, claim.id, recipient)
  panel.setSending(false)
  if (res.ok) {
    claimUpdated(res.body.claim)
    return
  }
  if (view.shown?.claim?.id !== claim.id || !CUSTOMER_FLOW.has(view.shown.state)) return
  if (res.error === 'claim_expired') show(expiredShown(claim, shown.test), true)
  else if (res.error === 'token_moved') show(movedShown(claim, shown.test), true)
  // The field keeps its text: the customer corrects it.
  else panel.addressError(recipientError(res.error, res.message))
}

function clearShown(): void {
  clearTimeout(holdTimer)
  pausedRemaining = null
  view.shown = null
  render()
}

/** The hold ran out: what follows it, or the resting screen. */
function afterHold(): void {
  const next = view.shown?.then
  if (next) show(next, true)
  else clearShown()
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
    holdTimer = setTimeout(afterHold, shown.holdMs)
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
    holdTimer = setTimeout(afterHold, remaining)
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
  product: 'product',
  // A claim station's tap on a chip linked to no token: an "ask staff" like an unknown badge.
  nothing: 'unknown',
  reentry: 'reentry',
  no_reentry: 'no_reentry',
  not_allowed: 'not_allowed',
  not_on_list: 'not_on_list',
  not_paid: 'not_paid',
  exit: 'exit',
  not_inside: 'not_inside',
  bound: 'bound',
  bind_taken: 'bind_taken',
  bind_waiting: 'bind_waiting',
}

/** The states that let a guest in: a guest the list flags turns them amber ('attention'). */
const ADMITTED: ReadonlySet<TapEventData['state']> = new Set(['accepted', 'reentry', 'bound'])

/** The tap's guest: the one its chip is bound to, or the one its check-in names. */
const tapGuest = (data: TapEventData): AttendeeView | undefined => data.attendee ?? data.checkIn?.attendee ?? undefined

/** The page's state for a tap: the gateway's, with a flagged guest's admission shown amber. */
function pageState(data: TapEventData): KioskState {
  return ADMITTED.has(data.state) && tapGuest(data)?.needsAttention ? 'attention' : PAGE_STATE[data.state]
}

function tapView(data: TapEventData): Shown {
  const test = data.test === true
  if (data.state === 'product' && data.claim) return claimView(data.claim, test)
  if (data.state === 'nothing') return { ...plainTapView(data), word: 'Nothing to claim with this tag', detail: 'Please ask staff' }
  const shown = plainTapView(data)
  // Checked in, the token waits for a wallet: the welcome, then the same hand-off as a product.
  if (data.state === 'accepted' && data.claim?.step === 'open') {
    const detail = data.checkIn ? `${data.checkIn.eventName}: next, collect your token` : shown.detail
    return { ...shown, detail, holdMs: WELCOME_MS, claim: data.claim, then: productShown(data.claim, test) }
  }
  return shown
}

function plainTapView(data: TapEventData): Shown {
  const state = pageState(data)
  const look = STATES[state]
  const attendee = tapGuest(data)
  let word = look.word
  let detail = look.detail
  if (data.state === 'refused') word = 'Badge not accepted here'
  if (state === 'already' && data.checkIn) {
    word = `Already checked in at ${clockTime(data.checkIn.at)} at ${data.checkIn.stationName}`
    detail = 'Nothing more to do: welcome back'
  }
  // With a name above it, "Welcome" needs no second line of its own.
  if (state === 'accepted') {
    if (attendee) word = "You're checked in"
    detail = acceptedDetail(data.checkIn)
  }
  if (state === 'not_allowed' && attendee) detail = `A ${attendee.ticketType} ticket does not open this door: please ask staff`
  // A closed-station tap is shown briefly; the station's own closed screen stays after it.
  return {
    state,
    word,
    detail,
    test: data.test === true,
    holdMs: state === 'closed' ? 4000 : look.holdMs,
    ...(attendee ? { guest: { name: attendee.displayName, ticketType: attendee.ticketType } } : {}),
  }
}

function acceptedDetail(checkIn: CheckInSummary | undefined): string {
  if (!checkIn) return ''
  const event = checkIn.eventName
  return checkIn.tx ? `${event}: your token is on its way` : `${event}: your token can be collected later`
}

// ---- the strip: the last results, anonymous, with their chain status ----

const stripByCheckIn = new Map<number, HTMLLIElement>()
const stripByClaim = new Map<number, HTMLLIElement>()

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
  product: 'Product',
  handoff: '',
  opened: '',
  registered: '',
  claimed: '',
  confirmed: '',
  moved: 'Claimed meanwhile',
  attention: 'In: see staff',
  reentry: 'Back in',
  no_reentry: 'No re-entry',
  not_allowed: 'Wrong door',
  not_on_list: 'Not on the list',
  not_paid: 'Not paid',
  exit: 'Left',
  not_inside: 'Not inside',
  bound: 'Wristband bound',
  bind_taken: 'Wristband taken',
  bind_waiting: 'Scan ticket first',
}

function setChain(li: HTMLLIElement, status: TxStatus | 'waiting' | 'undone', text: string): void {
  li.dataset.txStatus = status
  li.querySelector('.chain')!.textContent = text
}

function addToStrip(event: StationEvent & { kind: 'tap' }): void {
  const state = pageState(event.data)
  const li = document.createElement('li')
  li.dataset.eventId = String(event.id)
  li.dataset.state = state
  li.innerHTML = `${iconSvg(STATES[state].icon)}<span class="what"></span><time></time><span class="chain"></span>`
  const what = event.data.state === 'nothing' ? 'Nothing to claim' : STRIP_WORD[state]
  li.querySelector('.what')!.textContent = what + (event.data.test ? ' (test)' : '')
  const time = li.querySelector('time')!
  time.dateTime = event.at
  time.textContent = clockTime(event.at, true)
  const checkIn = event.data.checkIn
  if ((state === 'accepted' || state === 'attention' || state === 'bound') && checkIn) {
    if (checkIn.tx) setChain(li, checkIn.tx.status, chainText(checkIn.tx.status, checkIn.tx.hash, 'guestbook'))
    else setChain(li, 'waiting', 'Token: collect later')
    stripByCheckIn.set(checkIn.id, li)
  }
  const claim = event.data.claim
  if (claim) {
    remember(claim)
    li.dataset.kind = claim.kind
    const tx = claimTx.get(claim.id) ?? claim.tx
    if (tx) setChain(li, tx.status, chainText(tx.status, tx.hash, claim.kind))
    else if (!checkIn?.tx) setChain(li, 'waiting', claim.kind === 'guestbook' && claim.step === 'open' ? 'Token: collect later' : claimStepText(claim.step))
    stripByClaim.set(claim.id, li)
  }
  const strip = $('strip')
  strip.prepend(li)
  while (strip.children.length > STRIP_LENGTH) {
    const gone = strip.lastElementChild as HTMLLIElement
    for (const [id, el] of stripByCheckIn) if (el === gone) stripByCheckIn.delete(id)
    for (const [id, el] of stripByClaim) if (el === gone) stripByClaim.delete(id)
    gone.remove()
  }
}

// ---- feed ----

function setCounts(counts: KioskCounts): void {
  view.counts = counts
  // A claim station counts claims, an exit door who is inside; every other mode the event's check-ins
  // (of the guests expected, when the event has a guest list).
  const mode = view.station?.mode
  const n = mode === 'claim' ? (counts.claimed ?? 0) : mode === 'exit' ? (counts.inside ?? counts.event) : counts.event
  const el = $('count')
  el.dataset.count = String(n)
  el.textContent = n.toLocaleString()
  const expected = counts.expected ?? null
  $('count-label').textContent =
    mode === 'claim' ? 'claimed' : mode === 'exit' ? 'inside now' : expected === null ? 'checked in' : `of ${expected.toLocaleString()} checked in`
}

function setStation(station: KioskStation): void {
  view.station = station
  const name = station.mode === 'claim' ? station.name : (station.event?.name ?? (station.mode === 'closed' ? station.name : `${station.name}: no event set`))
  $('event-name').textContent = name
  if (view.counts) setCounts(view.counts)
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
      const { checkInId, claimId, status, hash } = event.data
      const li = (claimId == null ? undefined : stripByClaim.get(claimId)) ?? (checkInId === null ? undefined : stripByCheckIn.get(checkInId))
      if (li && li.dataset.txStatus !== 'undone') {
        // Only a product claim's item is a transfer; a check-in's (collected or not) is a mint.
        setChain(li, status, chainText(status, hash, claimId != null && li.dataset.kind === 'token' ? 'token' : 'guestbook'))
        // A claim's chime comes with its "In your wallet" result, when there is one.
        if (status === 'confirmed' && !backlog && claimId == null) play('chime')
      }
      if (claimId != null) txOfClaim(claimId, status, hash, backlog)
      break
    }
    case 'claim':
      claimUpdated(event.data.claim)
      break
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

/** Any touch or key is a customer who is still there. */
function customerActive(): void {
  customerTimeout.touched()
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

// ---- start ----

function start(): void {
  keepScreenOn()
  document.addEventListener('pointerdown', unlockAudio)
  document.addEventListener('pointerdown', customerActive, { capture: true })
  document.addEventListener('keydown', customerActive, { capture: true })
  $('result').addEventListener('pointerdown', togglePause)
  captureKeys({
    active: () => panelFor !== null,
    char: (c) => panel.scannerChar(c),
    back: () => panel.scannerBack(),
    enter: () => panel.scannerEnter(),
  })
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
  view.token = token
  render()
  renderBanner()
  openLink({
    token,
    handlers: {
      welcome(message) {
        view.connected = true
        view.settings = message.settings ?? DEFAULT_SETTINGS
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
