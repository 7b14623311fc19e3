/*
 * What the console's file uploads share (a guest list in the Events tab, a chip file in the Products
 * tab): a file refused as a whole imports nothing, and the page says so at the upload, with each bad
 * row and column of the file in a table, and the reason next to the file input, which names it.
 */
import type { ApiFailure } from './consoleApi.js'
import { h, labelledRow } from './consoleDom.js'
import type { RefusedImport } from './consoleState.js'
import { importProblems } from './consoleWords.js'

/**
 * An upload's refusals that say what is wrong with the file (bad rows, an unknown header, too large,
 * not a type the gateway reads): shown at the upload, not in the status line.
 */
export const FILE_REFUSALS = new Set([400, 413, 415])

/** A refused upload as the state keeps it: its message and its problems in the file's order. */
export const refusedImport = (failure: ApiFailure): RefusedImport => ({ kind: 'refused', message: failure.message, problems: importProblems(failure.errors) })

/** The reason beside the file input: the gateway's message, which says "nothing was imported" once. */
export const nothingImported = (message: string) => (/nothing was imported/i.test(message) ? message : `${message.replace(/\.$/, '')}. Nothing was imported.`)

/**
 * A field error on a file input: said next to it (`<id>-error`), read out with it (aria-describedby),
 * and the focus there, where the fix starts.
 */
export function fileError(input: HTMLInputElement, text: string): void {
  input.setAttribute('aria-invalid', 'true')
  const slot = document.getElementById(`${input.id}-error`)
  if (slot) {
    slot.textContent = text
    slot.hidden = false
  }
  input.focus()
}

/** A table of `rows` under `headers`, as cards on a phone. */
export const resultTable = (className: string, headers: string[], rows: HTMLTableRowElement[]) =>
  h('table', { className: `cards ${className}` }, h('thead', {}, h('tr', {}, ...headers.map((text) => h('th', { text })))), h('tbody', {}, ...rows))

/**
 * A refused upload: "Nothing was imported" (`unchanged` says what stayed as it was), and each problem
 * as a row (line, column, problem; `data-line` for a test or a script to find it).
 *
 * @example box.replaceChildren(...refusedView(outcome, 'the guest list is as it was before this upload'))
 */
export function refusedView(outcome: RefusedImport, unchanged: string): Node[] {
  const headers = ['Line', 'Column', 'Problem']
  const rows = outcome.problems.map((problem) => {
    const tr = labelledRow(headers, [problem.line === null ? '—' : String(problem.line), problem.column ?? '—', problem.message])
    if (problem.line !== null) tr.dataset.line = String(problem.line)
    return tr
  })
  return [
    h('p', { className: 'import-refused', text: `Nothing was imported: ${unchanged}.` }),
    h('p', { text: rows.length > 0 ? 'Fix these rows in the file, then upload it again:' : outcome.message }),
    ...(rows.length > 0 ? [resultTable('import-problems', headers, rows)] : []),
  ]
}

/** Shows an upload's outcome in its box (`data-outcome` for the stylesheet), or hides the box. */
export function showOutcome(box: HTMLElement, kind: 'imported' | 'refused' | null, nodes: Node[]): void {
  box.hidden = kind === null
  box.dataset.outcome = kind ?? ''
  box.replaceChildren(...nodes)
}
