/*
 * The phone page of a claim link (GET /c/<token>, "Finish on your phone"). No app and no wallet
 * connection: the customer types or pastes an address (checked as typed, with the gateway's own
 * parser), or a name when the gateway can resolve names, and the page follows the transfer to
 * confirmed. The gateway decides everything; this page shows where the claim stands.
 */
import { type Answer, claimApi, type PhoneClaim, sessionStore, tokenFromPath } from './claimPhoneApi.js'
import { checkAddress, NAMES_NEED_INTERNET, shortAddress, type Verdict } from './claimPhoneAddress.js'
import { $, countdown, type Outcome, renderOutcome, renderProduct, renderTimer } from './claimPhoneView.js'
import { clockTime } from './states.js'

/** The state element's data-state (issue 11): what the page is showing now. */
type PageState = 'loading' | 'form' | 'invalid' | 'sending' | 'confirmed' | 'used' | 'expired' | 'moved' | 'registered' | 'failed'

/** How often the page asks for the transaction while it is on its way (the contract's second). */
const POLL_MS = 1000
/** After a failed transaction, slower: staff may retry it, and the page should then follow. */
const FAILED_POLL_MS = 5000
/** After a lost connection (open or a poll), the next try. */
const RETRY_MS = 3000
/** A name is looked up once typing pauses this long. */
const LOOKUP_DELAY_MS = 350

type Ended = { state: 'used' | 'expired' | 'moved'; word: string; detail: string; icon: 'padlock' | 'brokenLink' | 'timeUp' | 'tag' }

const USED: Ended = {
  state: 'used',
  icon: 'padlock',
  word: 'This link was already used',
  detail: 'It was opened on another phone, or the token has been claimed. Tap the tag on the kiosk again, or ask staff.',
}
const NOT_VALID: Ended = { state: 'used', icon: 'brokenLink', word: 'This link is not valid', detail: 'Tap the tag on the kiosk again for a new link, or ask staff.' }
const EXPIRED: Ended = { state: 'expired', icon: 'timeUp', word: 'This link has expired', detail: 'Tap the tag on the kiosk again for a new link.' }
/** The token moved after this link's tap (another claim, or the shop, took it): nothing is sent from here. */
const MOVED: Ended = {
  state: 'moved',
  icon: 'tag',
  word: 'This product was claimed meanwhile',
  detail: 'Someone finished claiming it after your tap, so nothing was sent from this link. If it is yours, please ask staff.',
}

const token = tokenFromPath()
const api = claimApi(token ?? '')
const sessions = sessionStore(token ?? '')

const view = {
  session: null as string | null,
  claim: null as PhoneClaim | null,
  /** This page's clock time when the link stops working (expiresInMs counted from the last answer). */
  deadline: Number.POSITIVE_INFINITY,
  verdict: { kind: 'typing', hint: '' } as Verdict,
  /** The lookup of the name that is typed: waiting (both null), its address, or why it failed. */
  lookup: null as { name: string; address: string | null; error: string | null } | null,
  /** What this phone sent (a reload does not know it: the gateway never tells the phone). */
  sentTo: null as { address: string; name: string | null } | null,
  /** The page cannot go on (used, expired, not valid). */
  ended: null as Ended | null,
  /** A send is on its way to the gateway. */
  busy: false,
  /**
   * The gateway refused the address, or could not be reached: its words, by the field. `retry`:
   * the same address may go again (the network, a busy gateway); otherwise the field must change.
   */
  refusal: null as { message: string; retry: boolean } | null,
  /** A poll or the opening could not reach the gateway: said under the progress. */
  notice: null as string | null,
  pasteNote: null as string | null,
}

const claimAccepted = (claim: PhoneClaim) => claim.step === 'claimed' || claim.step === 'registered' || claim.step === 'early'

function stateOf(): PageState {
  if (view.ended) return view.ended.state
  const claim = view.claim
  if (!claim) return 'loading'
  if (claim.step === 'expired') return 'expired'
  if (claim.step === 'moved') return 'moved'
  if (claim.step === 'registered' || claim.step === 'early') return 'registered'
  if (claim.step === 'claimed') {
    if (claim.tx?.status === 'confirmed') return 'confirmed'
    if (claim.tx?.status === 'failed') return 'failed'
    return 'sending'
  }
  if (view.busy) return 'sending'
  if (view.refusal) return 'failed'
  if (view.verdict.kind === 'invalid' || view.lookup?.error) return 'invalid'
  return 'form'
}

/** The address Send would send now, or null: a checked address, or a name whose lookup came back. */
function sendable(): { address: string; name: string | null } | null {
  if (view.verdict.kind === 'address') return { address: view.verdict.address, name: null }
  if (view.verdict.kind === 'name' && view.lookup?.name === view.verdict.name && view.lookup.address) return { address: view.lookup.address, name: view.lookup.name }
  return null
}

// ---- drawing ----

const FORM_STATES: PageState[] = ['form', 'invalid', 'failed']

function render(): void {
  const state = stateOf()
  const main = $('claim')
  const before = main.dataset.state as PageState | undefined
  main.dataset.state = state
  // From the field (at the bottom) to a result (at the top): show the result, not the empty end of the page.
  if (before && FORM_STATES.includes(before) && !FORM_STATES.includes(state)) window.scrollTo(0, 0)
  const claim = view.claim
  const showCard = claim !== null && state !== 'used' && !(state === 'expired' && view.ended)
  $('product').hidden = !showCard
  if (claim && showCard) {
    renderProduct(claim.product)
    $('kicker').textContent = claim.kind === 'guestbook' ? 'Your token for' : 'Your digital twin'
  }
  const formShown = claim !== null && (state === 'form' || state === 'invalid' || (state === 'failed' && !claimAccepted(claim)))
  $('form').hidden = !formShown
  // Without the field, the card is only a reminder of what this is about (claim.css makes it small).
  main.dataset.form = formShown ? 'shown' : 'hidden'
  if (formShown) renderForm(state)
  renderOutcome(outcomeOf(state))
  renderClock()
}

function renderForm(state: PageState): void {
  const claim = view.claim!
  $('recipient-label').textContent = claim.ens ? 'Your wallet address or name' : 'Your wallet address'
  const input = $<HTMLInputElement>('recipient')
  input.setAttribute('aria-invalid', String(state === 'invalid'))
  const hint = $('hint')
  const fieldAlert = $('field-alert')
  const resolved = $('resolved')
  let hintText = ''
  let alertText = ''
  let resolvedText: { line: string; full: string } | null = null
  const verdict = view.verdict
  if (verdict.kind === 'typing') hintText = verdict.hint
  else if (verdict.kind === 'invalid') alertText = verdict.message
  else if (verdict.kind === 'address') resolvedText = { line: '✓ A valid address', full: verdict.address }
  else if (view.lookup?.error) alertText = view.lookup.error
  else if (view.lookup?.address) resolvedText = { line: `${verdict.name} → ${shortAddress(view.lookup.address)}`, full: view.lookup.address }
  else hintText = `Looking up ${verdict.name}…`
  if (view.refusal) {
    // The gateway's word wins over the page's: "a valid address" next to its refusal would contradict it.
    alertText = view.refusal.message
    resolvedText = null
  }
  if (view.pasteNote) hintText = view.pasteNote
  hint.textContent = hintText
  hint.hidden = hintText === ''
  // Only a change is written: an alert region reads out every write.
  if (fieldAlert.textContent !== alertText) fieldAlert.textContent = alertText
  resolved.hidden = resolvedText === null
  if (resolvedText) {
    const line = document.createElement('p')
    line.className = 'resolved-line'
    line.textContent = resolvedText.line
    const full = document.createElement('p')
    full.className = 'mono'
    full.textContent = resolvedText.full
    resolved.replaceChildren(line, full)
  }
  $<HTMLButtonElement>('send').disabled = sendable() === null || view.busy || (view.refusal !== null && !view.refusal.retry)
}

function shortHash(hash: string | null): string {
  return hash ? shortAddress(hash) : ''
}

function sentToLines(): { text: string; mono?: boolean }[] {
  const to = view.sentTo
  if (!to) return []
  return [{ text: to.name ? `To ${to.name}` : 'To your address' }, { text: to.address, mono: true }]
}

function outcomeOf(state: PageState): Outcome | null {
  const claim = view.claim
  const notice = view.notice ? [{ text: view.notice }] : []
  switch (state) {
    case 'loading':
      return { icon: 'hourglass', word: 'Opening your claim…', lines: notice, alert: false }
    case 'form':
    case 'invalid':
      return null
    case 'used':
    case 'expired':
    case 'moved': {
      const ended = view.ended ?? (state === 'moved' ? MOVED : EXPIRED)
      return { icon: ended.icon, word: ended.word, lines: [{ text: ended.detail }], alert: true }
    }
    case 'sending': {
      const status = claim?.step === 'claimed' ? (claim.tx?.status ?? 'queued') : null
      const sent = status === 'sent' || status === 'replaced'
      return {
        icon: 'hourglass',
        word: sent ? 'On its way to your wallet' : 'Sending your token…',
        lines: [...sentToLines(), ...notice],
        steps: [
          { label: 'Accepted', done: status !== null, current: status === 'queued' },
          { label: sent ? `Sent ${shortHash(claim?.tx?.hash ?? null)}` : 'Sent', done: sent, current: sent },
          { label: 'In your wallet', done: false, current: false },
        ],
        alert: false,
      }
    }
    case 'confirmed':
      return {
        icon: 'check',
        word: 'In your wallet ✓',
        lines: [...sentToLines(), ...(claim?.tx?.hash ? [{ text: `Transaction ${shortHash(claim.tx.hash)}` }] : []), { text: 'All done: you can close this page.' }],
        ...(claim?.explorerUrl ? { link: { href: claim.explorerUrl, text: 'See it on the block explorer' } } : {}),
        alert: false,
      }
    case 'registered':
      return {
        icon: 'clockArrow',
        word: 'Registered.',
        lines: [
          { text: claim?.allowedAt ? `Tap the tag on the kiosk again after ${clockTime(claim.allowedAt)}` : 'Tap the tag on the kiosk again', strong: true },
          ...(view.sentTo ? [{ text: 'Your address is saved:' }, { text: view.sentTo.address, mono: true }] : []),
          ...notice,
        ],
        alert: false,
      }
    case 'failed':
      if (claim && !claimAccepted(claim)) return null // the gateway's refusal is shown by the field
      return {
        icon: 'octagon',
        word: 'The transfer did not go through',
        lines: [{ text: 'Nothing was lost: please show this screen to staff, they can try again.' }, ...notice],
        alert: true,
      }
  }
}

/** The parts that follow the clock: the link's time left, the 2-tap wait. */
function renderClock(): void {
  const state = stateOf()
  const left = view.deadline - Date.now()
  const expires = $('expires')
  if (Number.isFinite(view.deadline)) {
    expires.textContent = left < 120_000 ? `This link stops working in ${countdown(left)}` : `This link works until ${clockTime(new Date(view.deadline).toISOString())}`
  }
  if (state === 'registered' && view.claim?.allowedAt) {
    const wait = Date.parse(view.claim.allowedAt) - Date.now()
    renderTimer(wait > 0 ? `You can tap again in ${countdown(wait)}` : 'You can tap the tag on the kiosk now')
  } else renderTimer(null)
}

/** Each second: the link's own expiry (the page's clock, as the gateway's would), and the countdowns. */
function tick(): void {
  const claim = view.claim
  if (claim && !view.ended && !view.busy && !claimAccepted(claim) && Date.now() >= view.deadline) {
    view.ended = EXPIRED
    render()
    return
  }
  renderClock()
}

// ---- talking to the gateway ----

function applyClaim(claim: PhoneClaim): void {
  view.claim = claim
  view.deadline = Date.now() + claim.expiresInMs
  if (view.verdict.kind === 'typing' && view.verdict.hint === '') view.verdict = checkAddress('', claim.ens)
}

/** The answers that end the page (the link is used elsewhere, expired, or not a link at all). */
function endedBy(answer: Answer<unknown>): Ended | null {
  if (answer.ok) return null
  if (answer.status === 410) return EXPIRED
  if (answer.error === 'claim_link_not_found') return NOT_VALID
  if (answer.error === 'token_moved') return MOVED
  if (answer.error === 'claim_link_used' || answer.error === 'claim_session_mismatch') return USED
  return null
}

async function open(): Promise<void> {
  const answer = await api.open(sessions.get())
  if (answer.ok) {
    view.session = answer.body.session
    sessions.set(answer.body.session)
    view.notice = null
    applyClaim(answer.body.claim)
    render()
    if (stateOf() === 'sending' || stateOf() === 'failed') schedulePoll()
    return
  }
  view.ended = endedBy(answer)
  // Not reached, or the gateway is busy: keep trying, the link is still good.
  if (!view.ended) {
    view.notice = answer.message
    setTimeout(() => void open(), RETRY_MS)
  }
  render()
}

let pollTimer: ReturnType<typeof setTimeout> | undefined

function schedulePoll(ms = POLL_MS): void {
  clearTimeout(pollTimer)
  pollTimer = setTimeout(() => void poll(), ms)
}

async function poll(): Promise<void> {
  if (!view.session) return
  const answer = await api.status(view.session)
  if (answer.ok) {
    view.notice = null
    applyClaim(answer.body.claim)
  } else {
    // The claim was accepted: the transfer goes on whatever happens to the link, so the page keeps
    // its progress and says why it cannot follow it.
    view.notice = answer.status === 0 ? answer.message : `${answer.message} (the transfer goes on)`
  }
  render()
  const state = stateOf()
  if (!answer.ok && answer.status !== 0 && answer.status !== 429 && answer.status < 500) return
  if (state === 'sending') schedulePoll(answer.ok ? POLL_MS : RETRY_MS)
  else if (state === 'failed' && view.claim && claimAccepted(view.claim)) schedulePoll(FAILED_POLL_MS)
}

async function send(): Promise<void> {
  const target = sendable()
  if (!target || view.busy || !view.session || stateOf() === 'invalid' || (view.refusal && !view.refusal.retry)) return
  view.busy = true
  view.refusal = null
  view.sentTo = target
  render()
  // What was shown is what is sent: a name goes as the address its lookup showed.
  const answer = await api.recipient(view.session, target.address)
  view.busy = false
  if (answer.ok) {
    applyClaim(answer.body.claim)
    render()
    if (stateOf() === 'sending') schedulePoll()
    return
  }
  view.ended = endedBy(answer)
  if (!view.ended) view.refusal = { message: answer.message, retry: answer.status === 0 || answer.status === 429 || answer.status >= 500 }
  render()
}

let lookupTimer: ReturnType<typeof setTimeout> | undefined


async function lookUp(name: string): Promise<void> {
  if (!view.session) return
  const answer = await api.resolve(view.session, name)
  // Typing went on meanwhile: this answer is for a name no longer in the field.
  if (view.lookup?.name !== name) return
  if (answer.ok) {
    const checked = checkAddress(answer.body.address, false)
    if (checked.kind === 'address') view.lookup = { name, address: checked.address, error: null }
    else view.lookup = { name, address: null, error: `${name} did not give a usable address: use the 0x address` }
  } else if (answer.error === 'ens_not_found') view.lookup = { name, address: null, error: `No wallet found for ${name}: check the spelling, or use the 0x address` }
  else if (answer.error === 'ens_unavailable') view.lookup = { name, address: null, error: NAMES_NEED_INTERNET }
  else if (answer.error === 'ens_unreachable') view.lookup = { name, address: null, error: `${name} could not be looked up right now: use the 0x address` }
  else {
    view.ended = endedBy(answer)
    view.lookup = { name, address: null, error: answer.message }
  }
  render()
}

function onInput(): void {
  const claim = view.claim
  if (!claim) return
  view.verdict = checkAddress($<HTMLInputElement>('recipient').value, claim.ens)
  view.refusal = null
  view.pasteNote = null
  clearTimeout(lookupTimer)
  if (view.verdict.kind === 'name') {
    const name = view.verdict.name
    if (view.lookup?.name !== name) {
      view.lookup = { name, address: null, error: null }
      lookupTimer = setTimeout(() => void lookUp(name), LOOKUP_DELAY_MS)
    }
  } else view.lookup = null
  render()
}

// ---- start ----

function setUpPaste(): void {
  // Browsers only offer clipboard reading on secure pages: on a plain-http LAN address there is no
  // button, and the field's own long-press paste is the way.
  if (typeof navigator.clipboard?.readText !== 'function') return
  const paste = $<HTMLButtonElement>('paste')
  paste.hidden = false
  paste.addEventListener('click', async () => {
    try {
      const text = await navigator.clipboard.readText()
      const input = $<HTMLInputElement>('recipient')
      input.value = text.trim()
      onInput()
    } catch {
      view.pasteNote = 'Paste did not work here: press and hold the field, then choose Paste'
      render()
    }
  })
}

function start(): void {
  if (!token) {
    view.ended = NOT_VALID
    render()
    return
  }
  $('recipient').addEventListener('input', onInput)
  $('form').addEventListener('submit', (event) => {
    event.preventDefault()
    void send()
  })
  setUpPaste()
  setInterval(tick, 1000)
  // A phone that slept: timers were held back, so look again at once.
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState !== 'visible') return
    tick()
    if (stateOf() === 'sending') schedulePoll(0)
  })
  render()
  void open()
}

start()
