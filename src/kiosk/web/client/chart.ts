/*
 * Arrivals per 5 minutes as a bar chart in plain SVG: a few dozen rectangles need no chart library
 * (nothing to fetch, nothing for the page's CSP to allow), and the colours come from the style sheet.
 */

/** One 5-minute bucket of GET /kiosk/staff/stats: its start (ISO) and the check-ins in it. */
export type Arrival = { at: string; count: number }

export const BUCKET_MS = 5 * 60_000

const SVG = 'http://www.w3.org/2000/svg'

/**
 * The buckets from the first to the last, a gap (five quiet minutes the gateway may leave out) filled
 * with 0 so the time axis stays even.
 *
 * @example arrivalBars([{ at: '…10:00Z', count: 3 }, { at: '…10:10Z', count: 1 }]) // 3, 0, 1
 */
export function arrivalBars(arrivals: Arrival[]): { at: number; count: number }[] {
  const byStart = new Map<number, number>()
  for (const a of arrivals) {
    const at = Date.parse(a.at)
    if (Number.isFinite(at)) byStart.set(at, (byStart.get(at) ?? 0) + a.count)
  }
  if (byStart.size === 0) return []
  const starts = [...byStart.keys()]
  const first = Math.min(...starts)
  const last = Math.max(...starts)
  const bars: { at: number; count: number }[] = []
  for (let at = first; at <= last; at += BUCKET_MS) bars.push({ at, count: byStart.get(at) ?? 0 })
  return bars
}

/** A round top for the y axis: 1, 2, 5, 10, 20, 50… at or above the highest bar. */
export function niceMax(max: number): number {
  if (max <= 1) return 1
  const power = 10 ** Math.floor(Math.log10(max))
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= max) return step * power
  return 10 * power
}

function el<K extends keyof SVGElementTagNameMap>(name: K, attrs: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, name)
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v))
  if (text !== undefined) node.textContent = text
  return node
}

/**
 * The chart as an <svg> (scales to its box's width). `time` labels a bucket's start (HH:MM in the
 * venue's zone). Carries data-bars and data-total for a reader of the page that is not a person.
 */
export function arrivalsChart(arrivals: Arrival[], time: (ms: number) => string): SVGSVGElement {
  const bars = arrivalBars(arrivals)
  // Drawn at about a phone card's width, so its labels stay readable there; it scales up elsewhere.
  const width = 400
  const height = 170
  const left = 34
  const bottom = 22
  const top = 10
  const svg = el('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img' })
  const total = bars.reduce((n, b) => n + b.count, 0)
  svg.dataset.bars = String(bars.length)
  svg.dataset.total = String(total)
  if (bars.length === 0) {
    // One line of text, not an empty plot: scaled to a desk's column, the full height stood 250 px tall.
    const line = 36
    svg.setAttribute('viewBox', `0 0 ${width} ${line}`)
    svg.setAttribute('aria-label', 'No arrivals yet')
    svg.append(el('text', { x: width / 2, y: line / 2 + 5, 'text-anchor': 'middle', class: 'empty' }, 'No arrivals yet'))
    return svg
  }
  const max = niceMax(Math.max(...bars.map((b) => b.count)))
  const plotW = width - left - 4
  const plotH = height - top - bottom
  // The first minutes of a door have one or two bars: kept bar-sized, not stretched over the chart.
  const slot = Math.min(plotW / bars.length, 30)
  const peak = bars.reduce((best, b) => (b.count > best.count ? b : best))
  svg.setAttribute('aria-label', `Arrivals per 5 minutes from ${time(bars[0]!.at)}: ${total} in all, at most ${peak.count} (${time(peak.at)})`)
  svg.append(
    el('line', { class: 'axis', x1: left, y1: top + plotH, x2: width - 4, y2: top + plotH }),
    el('line', { class: 'axis', x1: left, y1: top, x2: left, y2: top + plotH }),
    el('text', { x: left - 5, y: top + 8, 'text-anchor': 'end' }, String(max)),
    el('text', { x: left - 5, y: top + plotH, 'text-anchor': 'end' }, '0'),
  )
  // About six time labels, whatever the number of bars.
  const every = Math.max(1, Math.ceil(bars.length / 6))
  bars.forEach((b, i) => {
    const h = (b.count / max) * plotH
    const rect = el('rect', { class: 'bar', x: left + i * slot + slot * 0.12, y: top + plotH - h, width: Math.max(1, slot * 0.76), height: h })
    rect.append(el('title', {}, `${time(b.at)}–${time(b.at + BUCKET_MS)}: ${b.count}`))
    svg.append(rect)
    if (i % every === 0) svg.append(el('text', { x: left + i * slot + slot / 2, y: height - 6, 'text-anchor': 'middle' }, time(b.at)))
  })
  return svg
}
