/*
 * The event's numbers on the staff view (GET /kiosk/staff/stats): checked in of expected and %, per
 * ticket type, inside now, refused at the doors, and arrivals per 5 minutes as a chart. They are the
 * event's, read from the gateway's database: every door and every gateway counts.
 */
import { arrivalsChart } from './chart.js'
import type { StaffCall, StaffStats, StatsResponse } from './staffDoorApi.js'
import { clockTime } from './states.js'

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T

/** At most one request this often however fast taps come; a quiet door still refreshes every 30 s. */
const THROTTLE_MS = 1000
const PERIOD_MS = 30_000

export type Numbers = {
  /** Something changed (a tap, an undo, a staff action): read the numbers again soon. */
  changed(): void
  start(): void
  stop(): void
}

export function renderStats(stats: StaffStats): void {
  $('numbers').hidden = false
  $('numbers').dataset.eventId = String(stats.eventId)
  const checked = $('stat-checked')
  checked.dataset.count = String(stats.checkedIn)
  checked.textContent = stats.expected === null ? String(stats.checkedIn) : `${stats.checkedIn} / ${stats.expected}`
  $('stat-of').textContent = stats.percent === null ? 'checked in' : `checked in (${Math.round(stats.percent)} %)`
  $('stat-inside').textContent = String(stats.inside)
  const { notAllowed, noReentry, notOnList, notPaid } = stats.refused
  $('stat-refused').textContent = String(notAllowed + noReentry + notOnList + notPaid)
  const progress = $('stat-progress')
  progress.hidden = stats.percent === null
  const pct = Math.max(0, Math.min(100, stats.percent ?? 0))
  progress.setAttribute('aria-valuenow', String(Math.round(pct)))
  ;(progress.firstElementChild as HTMLElement).style.width = `${pct}%`
  $('per-type').replaceChildren(
    ...stats.perType.map((t) => {
      const li = document.createElement('li')
      li.dataset.ticketType = t.ticketType
      li.textContent = `${t.ticketType}: ${t.checkedIn} / ${t.expected}`
      return li
    }),
  )
  const detail = $('refused-detail')
  detail.replaceChildren()
  for (const [label, n] of [
    ['Wrong door (ticket type)', notAllowed],
    ['No re-entry', noReentry],
    ['Not on the list', notOnList],
    ['Not paid', notPaid],
  ] as const) {
    if (n === 0) continue
    const dt = document.createElement('dt')
    dt.textContent = label
    const dd = document.createElement('dd')
    dd.textContent = String(n)
    detail.append(dt, dd)
  }
  const chart = $('chart-body')
  chart.replaceChildren(arrivalsChart(stats.arrivals, (ms) => clockTime(new Date(ms).toISOString())))
  $('chart').querySelector('figcaption')!.textContent = stats.since ? `Arrivals per 5 minutes since ${clockTime(stats.since)}` : 'Arrivals per 5 minutes'
}

export function createNumbers(api: StaffCall): Numbers {
  let timer: ReturnType<typeof setTimeout> | undefined
  let period: ReturnType<typeof setInterval> | undefined
  let last = 0
  let running = false

  async function load(): Promise<void> {
    last = Date.now()
    try {
      const res = (await api('GET', '/kiosk/staff/stats')) as unknown as StatsResponse
      if (running) renderStats(res.stats)
    } catch {
      // No event at this station (or a gateway without the numbers): the section stays hidden.
      $('numbers').hidden = true
    }
  }

  return {
    changed() {
      if (!running || timer !== undefined) return
      timer = setTimeout(
        () => {
          timer = undefined
          void load()
        },
        Math.max(0, last + THROTTLE_MS - Date.now()),
      )
    },
    start() {
      running = true
      void load()
      clearInterval(period)
      period = setInterval(() => void load(), PERIOD_MS)
    },
    stop() {
      running = false
      clearInterval(period)
      clearTimeout(timer)
      timer = undefined
      $('numbers').hidden = true
    },
  }
}
