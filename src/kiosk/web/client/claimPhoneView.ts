/*
 * What the phone page draws: the product card (with its placeholder) and the outcome panel. No
 * state lives here; claim.ts decides, these functions only put it on the screen.
 */
import type { ProductCard } from '../../../wire/feedProtocol.js'
import { iconSvg, type IconName } from './states.js'

export const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T

/** The drawing shown when a product has no picture or it does not load: a frame with hills and a sun. */
const PLACEHOLDER =
  '<svg class="placeholder-art" viewBox="0 0 96 72" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="3" stroke-linecap="round" stroke-linejoin="round">' +
  '<rect x="4" y="4" width="88" height="64" rx="6"/><circle cx="68" cy="22" r="7"/><path d="M4 56l24-22 18 16 12-10 34 26"/></svg>'

function showPlaceholder(picture: HTMLElement): void {
  picture.dataset.picture = 'none'
  picture.innerHTML = `${PLACEHOLDER}<span class="placeholder-text">No picture</span>`
}

let shownProduct = ''

/**
 * The card from the token's (or event's) metadata. Only gateway paths are loaded as images: the
 * page may reach no other origin (CSP self), and a cached `/media/<key>` is what works offline.
 */
export function renderProduct(product: ProductCard): void {
  $('product').hidden = false
  // Every poll redraws: the same card is left alone, so a picture that failed is not asked for
  // again each second (and the placeholder does not flicker with it).
  const key = JSON.stringify(product)
  if (key === shownProduct) return
  shownProduct = key
  $('product-name').textContent = product.name
  const description = $('product-description')
  description.textContent = product.description ?? ''
  description.hidden = !product.description
  const attributes = $('product-attributes')
  attributes.replaceChildren()
  for (const { trait, value } of product.attributes) {
    const row = document.createElement('div')
    const dt = document.createElement('dt')
    const dd = document.createElement('dd')
    dt.textContent = trait
    dd.textContent = value
    row.append(dt, dd)
    attributes.append(row)
  }
  attributes.hidden = product.attributes.length === 0
  const picture = $('picture')
  if (!product.image || !product.image.startsWith('/') || product.image.startsWith('//')) {
    showPlaceholder(picture)
    return
  }
  const img = document.createElement('img')
  img.alt = `Picture of ${product.name}`
  img.decoding = 'async'
  img.addEventListener('error', () => showPlaceholder(picture), { once: true })
  img.src = product.image
  picture.dataset.picture = 'image'
  picture.replaceChildren(img)
}

/** The kiosk's icons, plus the phone's own: a clock run out (the link expired). */
export type ClaimIcon = IconName | 'timeUp'

function claimIcon(name: ClaimIcon): string {
  if (name !== 'timeUp') return iconSvg(name)
  return '<svg class="icon" data-icon="timeUp" viewBox="0 0 48 48" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="3.5" stroke-linecap="round" stroke-linejoin="round"><circle cx="24" cy="26" r="17"/><path d="M24 16v10h-8M18 4h12M24 4v5"/><path d="M8 42L40 10"/></svg>'
}

/** What the outcome panel says: an icon shape per state (never colour alone), a word, details. */
export type Outcome = {
  icon: ClaimIcon | null
  word: string
  /** Lines under the word; `mono` ones are addresses and hashes (wrapped anywhere); `strong`: what to do. */
  lines?: { text: string; mono?: boolean; strong?: boolean }[]
  /** The steps of the transaction, with the one reached (sending, confirmed). */
  steps?: { label: string; done: boolean; current: boolean }[]
  link?: { href: string; text: string }
  /** Something went wrong or needs the person: announced assertively (role=alert). */
  alert: boolean
}

let rendered = ''

export function renderOutcome(outcome: Outcome | null): void {
  // Polls redraw often: an unchanged outcome is left alone, so a screen reader hears it once.
  const key = JSON.stringify(outcome)
  if (key === rendered) return
  rendered = key
  const panel = $('outcome')
  panel.hidden = outcome === null
  const status = $('outcome-status')
  const alert = $('outcome-alert')
  if (!outcome) {
    status.replaceChildren()
    alert.replaceChildren()
    return
  }
  $('outcome-icon').innerHTML = outcome.icon ? claimIcon(outcome.icon) : ''
  const parts: Node[] = []
  const word = document.createElement('p')
  word.className = 'word'
  word.id = 'outcome-word'
  word.textContent = outcome.word
  parts.push(word)
  for (const line of outcome.lines ?? []) {
    const p = document.createElement('p')
    p.className = line.mono ? 'line mono' : line.strong ? 'line strong' : 'line'
    p.textContent = line.text
    parts.push(p)
  }
  if (outcome.steps) {
    const ol = document.createElement('ol')
    ol.className = 'steps'
    for (const step of outcome.steps) {
      const li = document.createElement('li')
      li.dataset.done = String(step.done)
      if (step.current) li.setAttribute('aria-current', 'step')
      li.textContent = step.label
      ol.append(li)
    }
    parts.push(ol)
  }
  if (outcome.link) {
    const a = document.createElement('a')
    a.className = 'button'
    a.href = outcome.link.href
    a.rel = 'noreferrer noopener'
    a.target = '_blank'
    a.textContent = outcome.link.text
    parts.push(a)
  }
  // Only the region in use holds text: a status line is never read out as an alert, and back.
  ;(outcome.alert ? alert : status).replaceChildren(...parts)
  ;(outcome.alert ? status : alert).replaceChildren()
}

/** A live countdown under the outcome: outside the live regions, so it is not read out every second. */
export function renderTimer(text: string | null): void {
  const timer = $('outcome-timer')
  timer.hidden = text === null
  timer.textContent = text ?? ''
}

/** m:ss (or h:mm:ss) left until `ms`, for countdowns. */
export function countdown(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000))
  const h = Math.floor(total / 3600)
  const m = Math.floor((total % 3600) / 60)
  const s = total % 60
  const ss = String(s).padStart(2, '0')
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`
}
