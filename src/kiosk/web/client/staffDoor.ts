/*
 * The staff view's door (issue 19): the ticket field a USB scanner types into, the guest a bind
 * station waits to bind, the search (nothing is listed before one: a tablet left on a desk must not
 * show the guest list), the results as cards with their actions, the "needs attention" alert and the
 * guest list's download.
 */
import type { AttendeeView, KioskStation, StationEvent, TapEventData } from '../../../wire/feedProtocol.js'
import { play } from './sound.js'
import {
  type Armed,
  type AttendeeCheckInResponse,
  type BindResponse,
  type SearchResponse,
  type StaffAttendee,
  StaffApiError,
  type StaffCall,
  type StaffFetchFile,
} from './staffDoorApi.js'
import { ticketCodeCandidates } from '../../../door/scannedCode.js'
import { clockTime } from './states.js'

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T

export type Door = {
  setStation(station: KioskStation): void
  /** A feed event: a bound wristband ends the armed state; a flagged guest raises the alert (live events only). */
  event(event: StationEvent, backlog: boolean): void
  /** The session ended: every name leaves the screen. */
  clear(): void
  /** The session started: the scanner's field takes focus on a bind station. */
  focus(): void
}

const MIN_QUERY = 2
/** A door that admits a guest: a flagged guest's admission raises the staff alert. */
const ADMITTED: ReadonlySet<TapEventData['state']> = new Set(['accepted', 'reentry', 'bound'])

/** What a staff member sees of a guest's door status, in words. */
export function guestStatus(a: StaffAttendee): string {
  const c = a.checkIn
  if (!c) return 'Not checked in'
  const at = `${clockTime(c.at)} at ${c.stationName}${c.manual ? ' (by hand)' : ''}`
  if (c.leftAt) return `Went out at ${clockTime(c.leftAt)} (checked in ${at})`
  return `Inside: checked in ${at}`
}

export function createDoor({ api, fetchFile, onChange }: { api: StaffCall; fetchFile: StaffFetchFile; onChange: () => void }): Door {
  let station: KioskStation | null = null
  let lastQuery = ''
  let armedTimer: ReturnType<typeof setInterval> | undefined

  const isBind = () => station?.mode === 'bind'

  function message(text: string, kind: 'ok' | 'error' = 'ok'): void {
    const el = $('door-message')
    el.textContent = text
    el.dataset.kind = kind
  }

  const errorText = (e: unknown) => (e instanceof StaffApiError ? e.body.message : 'The gateway cannot be reached')

  // ---- the armed guest of a bind station ----

  function showArmed(armed: Armed | null): void {
    clearInterval(armedTimer)
    const box = $('armed')
    box.hidden = armed === null
    if (!armed) return
    box.dataset.attendeeId = String(armed.attendee.id)
    $('armed-what').textContent = armed.rebind ? 'Ready to rebind (the old wristband stops working)' : 'Ready to bind'
    $('armed-name').textContent = armed.attendee.name
    $('armed-type').textContent = armed.attendee.ticketType
    const ends = Date.parse(armed.expiresAt)
    const tick = () => {
      const s = Math.ceil((ends - Date.now()) / 1000)
      if (s <= 0) {
        showArmed(null)
        message('Nobody tapped within 2 minutes: scan the ticket again.', 'error')
        return
      }
      $('armed-left').textContent = `(${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')} left)`
    }
    tick()
    armedTimer = setInterval(tick, 1000)
  }

  async function bind(target: { ticketCode: string } | { attendeeId: number }, rebind = false): Promise<void> {
    try {
      const res = (await api('POST', '/kiosk/staff/bind', { ...target, ...(rebind ? { rebind: true } : {}) })) as unknown as BindResponse
      showArmed(res.armed)
      message(`${res.armed.attendee.name}: tap the wristband now.`)
    } catch (e) {
      if (e instanceof StaffApiError && e.body.error === 'already_bound') {
        message(`${e.body.message} Rebind to give them a new one.`, 'error')
        offerRebind(target)
      } else message(errorText(e), 'error')
    } finally {
      focus()
    }
  }

  function offerRebind(target: { ticketCode: string } | { attendeeId: number }): void {
    const button = document.createElement('button')
    button.type = 'button'
    button.dataset.action = 'rebind'
    button.textContent = 'Rebind (lost wristband)'
    button.addEventListener('click', () => void bind(target, true))
    $('door-message').append(' ', button)
  }

  // ---- search and results ----

  async function search(q: string): Promise<StaffAttendee[] | null> {
    lastQuery = q
    if (q.length < MIN_QUERY) {
      $('results').replaceChildren()
      message(`Type at least ${MIN_QUERY} characters of a name, an email or a ticket code.`, 'error')
      return null
    }
    try {
      const res = (await api('GET', `/kiosk/staff/attendees?q=${encodeURIComponent(q)}`)) as unknown as SearchResponse
      // A newer search was typed meanwhile: its answer wins.
      if (lastQuery !== q) return null
      renderResults(res.attendees)
      message(res.attendees.length === 0 ? `Nobody found for "${q}".` : `${res.attendees.length} found${res.attendees.length === 20 ? ' (the first 20: type more)' : ''}.`)
      return res.attendees
    } catch (e) {
      message(errorText(e), 'error')
      return null
    }
  }

  function button(label: string, action: string, run: () => Promise<void>, primary = false): HTMLButtonElement {
    const b = document.createElement('button')
    b.type = 'button'
    b.textContent = label
    b.dataset.action = action
    if (primary) b.className = 'go'
    b.addEventListener('click', () => void run())
    return b
  }

  function line(className: string, text: string): HTMLParagraphElement {
    const p = document.createElement('p')
    p.className = className
    p.textContent = text
    return p
  }

  function card(a: StaffAttendee): HTMLLIElement {
    const li = document.createElement('li')
    li.className = 'guest'
    li.dataset.attendeeId = String(a.id)
    li.dataset.status = a.inside ? 'inside' : a.checkIn ? 'out' : 'expected'
    li.dataset.attention = String(a.needsAttention)
    li.dataset.paid = String(a.paid)
    const name = line('name', a.name)
    const type = document.createElement('span')
    type.className = 'pill'
    type.textContent = a.ticketType
    name.append(' ', type)
    li.append(name, line('meta', [a.ticketCode, a.email].filter(Boolean).join(' · ')))
    if (a.chips.length > 0) li.append(line('meta', `Wristband: ${a.chips.join(', ')}`))
    li.append(line('status', guestStatus(a)))
    if (!a.paid) li.append(line('unpaid', 'Not paid: the order waits for payment (the door refuses this guest)'))
    if (a.needsAttention || a.note) li.append(line('note', `${a.needsAttention ? 'Needs attention' : 'Note'}${a.note ? `: ${a.note}` : ''}`))
    const buttons = document.createElement('div')
    buttons.className = 'buttons'
    const mode = station?.mode
    if (!a.inside && (mode === 'checkin' || mode === 'bind')) buttons.append(button(a.checkIn ? 'Let back in' : 'Check in', 'attendee-check-in', () => checkIn(a), true))
    if (a.checkIn && !a.checkIn.leftAt) buttons.append(button('Undo check-in', 'attendee-undo', () => undo(a)))
    if (mode === 'bind') {
      if (a.chips.length === 0) buttons.append(button('Bind wristband', 'bind', () => bind({ attendeeId: a.id })))
      else buttons.append(button('Rebind (lost wristband)', 'rebind', () => bind({ attendeeId: a.id }, true)))
    }
    if (buttons.children.length > 0) li.append(buttons)
    return li
  }

  function renderResults(attendees: StaffAttendee[]): void {
    $('results').replaceChildren(...attendees.map(card))
  }

  const CHECK_IN_WORDS: Partial<Record<string, string>> = {
    accepted: 'checked in',
    attention: 'checked in (needs attention)',
    reentry: 'back in',
    already: 'was already inside',
    not_allowed: 'NOT allowed at this door (ticket type)',
    no_reentry: 'NOT let back in: this event allows no re-entry',
    not_paid: 'NOT let in: the order is not paid',
  }

  async function checkIn(a: StaffAttendee): Promise<void> {
    try {
      const res = (await api('POST', '/kiosk/staff/attendees/check-in', { attendeeId: a.id })) as unknown as AttendeeCheckInResponse
      const refused = res.state === 'not_allowed' || res.state === 'no_reentry' || res.state === 'not_paid'
      const state = res.state === 'accepted' && a.needsAttention ? 'attention' : res.state
      message(`${a.name}: ${CHECK_IN_WORDS[state] ?? state}.`, refused ? 'error' : 'ok')
    } catch (e) {
      message(errorText(e), 'error')
    }
    await afterAction()
  }

  async function undo(a: StaffAttendee): Promise<void> {
    if (!a.checkIn) return
    try {
      await api('POST', '/kiosk/staff/undo', { checkInId: a.checkIn.id })
      message(`${a.name}: check-in undone.`)
    } catch (e) {
      message(errorText(e), 'error')
    }
    await afterAction()
  }

  /** The cards show the new state, and the numbers follow. */
  async function afterAction(): Promise<void> {
    const text = $('door-message').textContent
    const kind = $('door-message').dataset.kind === 'error' ? 'error' : 'ok'
    if (lastQuery.length >= MIN_QUERY) await search(lastQuery)
    message(text ?? '', kind)
    onChange()
    focus()
  }

  // ---- the ticket field (a USB scanner types the code and Enter) ----

  async function ticket(code: string): Promise<void> {
    if (!code) return
    $<HTMLInputElement>('ticket').value = ''
    if (isBind()) return bind({ ticketCode: code })
    // A check-in door: the scanned code's guest is checked in at once, as a scanner app does.
    const found = await search(code)
    // The scan's own codes (a Luma QR is a URL carrying its pk), as the gateway read them.
    const codes = ticketCodeCandidates(code).map((c) => c.toLowerCase())
    const exact = found?.filter((a) => codes.includes(a.ticketCode.toLowerCase())) ?? []
    if (found && exact.length === 0) message(`No ticket with the code "${code}".`, 'error')
    if (exact.length === 1 && station?.mode === 'checkin' && !exact[0]!.inside) await checkIn(exact[0]!)
    focus()
  }

  // ---- the alert for a guest who needs attention, or whose order is not paid ----

  function attention(data: TapEventData, at: string): void {
    const guest: AttendeeView | undefined = data.attendee ?? data.checkIn?.attendee ?? undefined
    // A wristband's tap (a uid): staff refused by hand see it in their own message already.
    const unpaid = data.state === 'not_paid' && data.uid !== null
    if (!guest || !(unpaid || (guest.needsAttention && ADMITTED.has(data.state)))) return
    const li = document.createElement('li')
    li.dataset.attendeeId = String(guest.id)
    if (unpaid) li.dataset.reason = 'not_paid'
    const why = unpaid ? ': NOT PAID, not let in' : guest.note ? `: ${guest.note}` : ''
    li.textContent = `${clockTime(at)} ${guest.name ?? guest.displayName} (${guest.ticketType})${why}`
    $('attention-list').prepend(li)
    $('attention').hidden = false
    play('threeLow')
  }

  // ---- the guest list's download ----

  async function download(): Promise<void> {
    try {
      const file = await fetchFile('/kiosk/staff/attendees/export?format=csv')
      const a = document.createElement('a')
      a.href = URL.createObjectURL(file.blob)
      a.download = file.filename ?? `guests-event-${station?.event?.id ?? ''}.csv`
      a.click()
      setTimeout(() => URL.revokeObjectURL(a.href), 10_000)
      message('Guest list downloaded.')
    } catch (e) {
      message(errorText(e), 'error')
    }
  }

  function focus(): void {
    if (isBind() && !$('panel').hidden) $<HTMLInputElement>('ticket').focus()
  }

  $('ticket-form').addEventListener('submit', (e) => {
    e.preventDefault()
    void ticket($<HTMLInputElement>('ticket').value.trim())
  })
  $('search-form').addEventListener('submit', (e) => {
    e.preventDefault()
    // A bind station's scanner types into the ticket field: the focus goes back there once the results show.
    void search($<HTMLInputElement>('search').value.trim()).then(() => focus())
  })
  $('armed-cancel').addEventListener('click', () => {
    void api('POST', '/kiosk/staff/bind/cancel', {})
      .then(() => message('Binding cancelled.'))
      .catch((e: unknown) => message(errorText(e), 'error'))
    showArmed(null)
    focus()
  })
  $('attention-seen').addEventListener('click', () => {
    $('attention-list').replaceChildren()
    $('attention').hidden = true
  })
  $('export').addEventListener('click', () => void download())
  // A bind station's scanner types wherever the focus is: a key that would land on no field goes to
  // the ticket field instead (before the character is typed, so it lands there).
  document.addEventListener(
    'keydown',
    (e) => {
      if (!isBind() || $('panel').hidden || e.ctrlKey || e.metaKey || e.altKey) return
      const t = e.target as HTMLElement | null
      if (t && t.matches('input, select, textarea')) return
      if (e.key.length === 1) $<HTMLInputElement>('ticket').focus()
    },
    { capture: true },
  )

  return {
    setStation(next) {
      station = next
      const door = next.mode === 'checkin' || next.mode === 'bind' || next.mode === 'exit'
      $('door').hidden = !door || next.event === null
      $('ticket-go').textContent = next.mode === 'bind' ? 'Bind' : next.mode === 'checkin' ? 'Check in' : 'Find'
      $('ticket-label').textContent = next.mode === 'bind' ? 'Ticket code: scan it, then the guest taps the wristband' : 'Ticket code'
      if (next.mode !== 'bind') showArmed(null)
      focus()
    },
    event(event, backlog) {
      if (event.kind !== 'tap') return
      const data = event.data
      if (data.state === 'bound') {
        showArmed(null)
        const who = data.attendee?.name ?? data.attendee?.displayName ?? 'The guest'
        message(`${who}: wristband ${data.uid ?? ''} bound and checked in.`)
        onChange()
      } else if (data.state === 'bind_taken') {
        message(`That wristband belongs to ${data.boundTo ?? 'another guest'}: use another one.`, 'error')
      }
      if (!backlog) attention(data, event.at)
    },
    clear() {
      lastQuery = ''
      showArmed(null)
      $('results').replaceChildren()
      $('attention-list').replaceChildren()
      $('attention').hidden = true
      $<HTMLInputElement>('search').value = ''
      $<HTMLInputElement>('ticket').value = ''
      message('')
    },
    focus,
  }
}
