/*
 * The console's DOM helpers: elements built with createElement/textContent only (every name,
 * label and reason shown comes from the gateway, so none is ever parsed as HTML), field errors
 * tied to their inputs, the status line, copy buttons and the two-step confirm of a revoke.
 */
import type { ApiFailure } from './consoleApi.js'

export const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T

type Props = { className?: string; text?: string; attrs?: Record<string, string>; data?: Record<string, string> }

/**
 * An element with a class, text, attributes and children.
 *
 * @example
 * h('li', { className: 'card', data: { stationId: '3' } }, h('h3', { text: station.name }))
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  if (props.className) el.className = props.className
  if (props.text !== undefined) el.textContent = props.text
  for (const [name, value] of Object.entries(props.attrs ?? {})) el.setAttribute(name, value)
  for (const [name, value] of Object.entries(props.data ?? {})) el.dataset[name] = value
  el.append(...children)
  return el
}

/** A `<button type="button">`: a button in a form must never submit it by accident. */
export function button(text: string, onClick: () => void, props: Props = {}): HTMLButtonElement {
  const b = h('button', { ...props, text, attrs: { type: 'button', ...props.attrs } })
  b.addEventListener('click', onClick)
  return b
}

export type StatusLine = { show(text: string, kind?: 'ok' | 'error'): void; clear(): void }

/** How long a "done" line stays: it sits over the page's bottom edge. A refusal stays until the next action. */
const DONE_SHOWN_MS = 8000

/**
 * The page's one status line, for what has no field to sit next to. It stays in the page when empty
 * (the stylesheet folds it away): a live region that appears together with its text is not always read out.
 */
export function createStatusLine(el: HTMLElement): StatusLine {
  let timer: ReturnType<typeof setTimeout> | undefined
  const clear = () => {
    clearTimeout(timer)
    el.textContent = ''
  }
  return {
    show(text, kind = 'ok') {
      clearTimeout(timer)
      el.dataset.kind = kind
      el.textContent = text
      if (kind === 'ok') timer = setTimeout(clear, DONE_SHOWN_MS)
    },
    clear,
  }
}

/** The element that shows a field's error: `<input id="x">` has `<p id="x-error">`, named by its aria-describedby. */
const errorOf = (field: HTMLElement) => document.getElementById(`${field.id}-error`)

export function clearFieldErrors(form: HTMLFormElement): void {
  for (const field of form.querySelectorAll<HTMLElement>('[aria-invalid]')) field.removeAttribute('aria-invalid')
  for (const el of form.querySelectorAll<HTMLElement>('.field-error')) {
    el.textContent = ''
    el.hidden = true
  }
}

/**
 * Puts each message of a 400's `errors` next to the form's field of that body name (its `name`
 * attribute, or `data-field` where the body name differs), and anything else in the status line.
 * The first invalid field gets the focus, so a keyboard user lands where the fix is.
 */
export function showFailure(failure: ApiFailure, status: StatusLine, form?: HTMLFormElement): void {
  const unplaced: string[] = []
  let first: HTMLElement | null = null
  for (const [name, message] of Object.entries(failure.errors)) {
    const field = form?.querySelector<HTMLElement>(`[data-field="${CSS.escape(name)}"], [name="${CSS.escape(name)}"]`)
    const slot = field ? errorOf(field) : null
    if (!field || !slot) {
      unplaced.push(`${name}: ${message}`)
      continue
    }
    field.setAttribute('aria-invalid', 'true')
    slot.textContent = message
    slot.hidden = false
    first ??= field
  }
  first?.focus()
  if (unplaced.length > 0 || first === null) status.show(unplaced.length > 0 ? `${failure.message}: ${unplaced.join('; ')}` : failure.message, 'error')
}

/**
 * Runs `action` when the form is submitted (a click or Enter in any field), with its errors
 * cleared and its submit button disabled meanwhile so a double press sends once.
 */
export function onSubmit(form: HTMLFormElement, action: () => Promise<void>): void {
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]')
    if (submit?.disabled) return
    clearFieldErrors(form)
    if (submit) submit.disabled = true
    void action().finally(() => {
      if (submit) submit.disabled = false
    })
  })
}

/**
 * Copies `text`. The Clipboard API exists only in a secure context (HTTPS or localhost), and a
 * console opened over a LAN address is neither: then the text is selected for Ctrl+C / long press.
 */
export async function copyText(text: string, source: HTMLElement): Promise<'copied' | 'selected'> {
  try {
    if (!navigator.clipboard) throw new Error('no clipboard')
    await navigator.clipboard.writeText(text)
    return 'copied'
  } catch {
    const range = document.createRange()
    range.selectNodeContents(source)
    const selection = getSelection()
    selection?.removeAllRanges()
    selection?.addRange(range)
    return 'selected'
  }
}

/** A copy button for the text of `source`, which says what it did beside itself. */
export function copyButton(source: HTMLElement, label: string): HTMLElement {
  const said = h('span', { className: 'copy-said', attrs: { 'aria-live': 'polite' } })
  const b = button('Copy', () => {
    void copyText(source.textContent ?? '', source).then((how) => {
      said.textContent = how === 'copied' ? 'Copied' : 'Selected: press Ctrl+C (⌘C) to copy'
    })
  }, { attrs: { 'aria-label': `Copy ${label}` } })
  return h('span', { className: 'copy' }, b, said)
}

/**
 * A revoke in two steps: the button opens "<question> [confirm] [Cancel]" in its place, with the
 * focus on Cancel, so a double Enter cannot revoke anything by itself. Escape cancels too.
 */
export function confirmStep(trigger: HTMLButtonElement, p: { question: string; confirm: string; onConfirm: () => Promise<void> }): void {
  trigger.addEventListener('click', () => {
    const question = h('span', { className: 'confirm-question', text: p.question })
    const group = h('span', { className: 'confirm', attrs: { role: 'group', 'aria-label': p.question } }, question)
    const close = () => {
      group.remove()
      trigger.hidden = false
      trigger.focus()
    }
    const yes = button(p.confirm, () => {
      yes.disabled = true
      void p.onConfirm().finally(() => {
        // The list may have been drawn again meanwhile; a group still in the page goes back to its button.
        if (group.isConnected) close()
      })
    }, { className: 'danger' })
    const no = button('Cancel', close)
    group.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') close()
    })
    group.append(yes, no)
    trigger.hidden = true
    trigger.after(group)
    no.focus()
  })
}

/**
 * Replaces a container's children with `render()`'s, and gives the focus back to the new element
 * with the same `data-focus-key` if the old one had it: a list drawn again while a keyboard user is
 * on one of its buttons does not throw them back to the top of the page.
 */
export function redraw(container: HTMLElement, children: Node[]): void {
  const active = document.activeElement
  const key = active instanceof HTMLElement && container.contains(active) ? active.dataset.focusKey : undefined
  container.replaceChildren(...children)
  if (key) container.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(key)}"]`)?.focus()
}

const sameDay = (a: Date, b: Date) => a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate()

/** A time as the operator reads it: "14:05:12" today, "27 Nov, 14:05" before. */
export function when(iso: string, now = new Date()): string {
  const at = new Date(iso)
  if (sameDay(at, now)) return new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).format(at)
  return new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(at)
}

/**
 * A table row whose cells carry their column's header (`data-label`): on a phone the stylesheet
 * shows each row as a card of "label value" lines, as the staff view does.
 */
export function labelledRow(headers: string[], cells: (string | Node)[]): HTMLTableRowElement {
  const tr = document.createElement('tr')
  cells.forEach((cell, i) => {
    const td = h('td', { data: { label: headers[i] ?? '' } })
    if (cell !== '') td.append(cell)
    tr.append(td)
  })
  return tr
}

/** The text of a table's header cells, for labelledRow. */
export const headersOf = (table: HTMLTableElement) => [...table.querySelectorAll('thead th')].map((th) => th.textContent ?? '')

/**
 * A secret the gateway shows once (a station token, an API key): the value as selectable text, a
 * copy button, what it is for, and "Done", which forgets it. The box takes the focus so a screen
 * reader reads it at once.
 */
export function showSecret(box: HTMLElement, p: { title: string; value: string; note: string }): void {
  const value = h('code', { className: 'secret-value', text: p.value })
  const done = button('Done, I saved it', () => {
    box.replaceChildren()
    box.hidden = true
  })
  box.replaceChildren(
    h('h2', { text: p.title }),
    h('p', { className: 'warn', text: 'Shown only this once: copy it now. The gateway keeps only a hash of it.' }),
    h('p', { className: 'url-line' }, value),
    copyButton(value, p.title),
    h('p', { className: 'hint', text: p.note }),
    done,
  )
  box.hidden = false
  box.focus()
}
