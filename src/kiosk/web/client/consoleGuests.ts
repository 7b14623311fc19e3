/*
 * The chosen event's guest list in the console's Events tab: the file upload (the same import as
 * `tapgate attendees import` and POST /events/:id/attendees/import), what it did or why it did
 * nothing (each bad row and column in a table next to the upload), the search over the guests and
 * the CSV download, which is a plain link: the browser's own GET sends the session cookie.
 */
import { type ConsoleApi, GUESTS_PER_PAGE, type Guest, type GuestQuery, guestListType, type ImportReport } from './consoleApi.js'
import { $, h, headersOf, labelledRow, onSubmit, redraw, showFailure, type StatusLine } from './consoleDom.js'
import type { ConsoleState, Message } from './consoleState.js'
import { FILE_REFUSALS, fileError, nothingImported, refusedImport, refusedView, resultTable, showOutcome } from './consoleUpload.js'

export type GuestsSection = {
  /** Asks for a page of the event's guests (`q` empty: everyone). */
  search(eventId: number, query: GuestQuery): Promise<void>
  render(state: ConsoleState): void
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

/**
 * @example
 * const guests = createGuests({ api, dispatch, status, getState: () => state, imported: (id) => reloadCounts(id) })
 */
export function createGuests(p: {
  api: ConsoleApi
  dispatch: (message: Message) => void
  status: StatusLine
  getState: () => ConsoleState
  /** A list went in: the event's counts and numbers are read again. */
  imported: (eventId: number) => Promise<void>
}): GuestsSection {
  const { api, dispatch, status } = p
  const uploadForm = $<HTMLFormElement>('guest-upload-form')
  const searchForm = $<HTMLFormElement>('guest-search-form')
  const fileInput = $<HTMLInputElement>('guest-file')

  async function search(eventId: number, query: GuestQuery): Promise<void> {
    const answer = await api.guests(eventId, query)
    if (answer.ok) return dispatch({ type: 'guests', eventId, query, page: answer.body })
    if (answer.status !== 401) showFailure(answer, status, searchForm)
  }

  onSubmit(uploadForm, async () => {
    const eventId = p.getState().selectedEventId
    if (eventId === null) return
    const file = fileInput.files?.[0]
    if (!file) return fileError(fileInput, 'Choose the guest list file first: a .csv or .xlsx export.')
    const answer = await api.uploadGuests(eventId, file, guestListType(file), $<HTMLInputElement>('guest-map').value.trim())
    if (answer.ok) {
      dispatch({ type: 'guestImport', eventId, outcome: { kind: 'imported', report: answer.body.report } })
      status.show(`${file.name}: ${plural(answer.body.report.imported, 'guest')} on the list.`)
      uploadForm.reset()
      await Promise.all([p.imported(eventId), search(eventId, { q: $<HTMLInputElement>('guest-q').value.trim(), offset: 0 })])
      $('guest-import').focus()
      return
    }
    if (answer.status === 401) return
    if (!FILE_REFUSALS.has(answer.status)) return showFailure(answer, status, uploadForm)
    // What the page says about this file is at the upload: an older "done" line would only distract.
    status.clear()
    dispatch({ type: 'guestImport', eventId, outcome: refusedImport(answer) })
    fileError(fileInput, nothingImported(answer.message))
  })

  onSubmit(searchForm, async () => {
    const eventId = p.getState().selectedEventId
    if (eventId !== null) await search(eventId, { q: $<HTMLInputElement>('guest-q').value.trim(), offset: 0 })
  })

  const page = (step: 1 | -1) => {
    const { selectedEventId, guests } = p.getState()
    if (selectedEventId === null || !guests) return
    void search(selectedEventId, { q: guests.query.q, offset: Math.max(0, guests.query.offset + step * GUESTS_PER_PAGE) })
  }
  $('guest-prev').addEventListener('click', () => page(-1))
  $('guest-next').addEventListener('click', () => page(1))

  // ---- the views ----

  function importedView(report: ImportReport): Node[] {
    const counts: [string, number][] = [
      ['On the list from this file', report.imported],
      ['New', report.inserted],
      ['Updated', report.updated],
      ['Skipped (cancelled, void…)', report.skipped.length],
      ['Not paid', report.unpaid],
      ['Without a name', report.nameless],
      ['Chips bound', report.chipsBound],
    ]
    const nodes: Node[] = [
      h('p', { className: 'import-ok', text: `✓ ${report.formatLabel}: the list is in.` }),
      h('dl', { className: 'import-counts' }, ...counts.flatMap(([label, n]) => [h('dt', { text: label }), h('dd', { text: String(n), data: { count: label } })])),
    ]
    const headers = ['Line', 'Column', 'Note']
    const notes = [
      ...report.skipped.map((s) => labelledRow(headers, [String(s.line), s.ticketCode, `Skipped: ${s.reason}`])),
      ...report.warnings.map((w) => labelledRow(headers, [String(w.line), w.column, w.message])),
    ]
    if (notes.length > 0) nodes.push(h('p', { className: 'hint', text: 'Left out or changed, the rest went in:' }), resultTable('import-notes', headers, notes))
    return nodes
  }

  const noteOf = (guest: Guest) =>
    [guest.paid ? null : 'Not paid', guest.needsAttention ? 'Needs attention' : null, guest.note]
      .filter((text): text is string => !!text)
      .join(' · ')

  let drawn: Pick<ConsoleState, 'guests' | 'guestImport' | 'selectedEventId'> | null = null
  return {
    search,
    render(state) {
      if (drawn && drawn.guests === state.guests && drawn.guestImport === state.guestImport && drawn.selectedEventId === state.selectedEventId) return
      const chosenAnew = drawn?.selectedEventId !== state.selectedEventId
      if (chosenAnew) {
        uploadForm.reset()
        searchForm.reset()
        for (const form of [uploadForm, searchForm]) for (const field of form.querySelectorAll('[aria-invalid]')) field.removeAttribute('aria-invalid')
        for (const slot of [$('guest-file-error'), $('guest-q-error')]) slot.hidden = true
      }
      if (drawn?.guestImport !== state.guestImport || chosenAnew) {
        const outcome = state.guestImport?.outcome
        const nodes = !outcome ? [] : outcome.kind === 'imported' ? importedView(outcome.report) : refusedView(outcome, 'the guest list is as it was before this upload')
        showOutcome($('guest-import'), outcome?.kind ?? null, nodes)
      }
      if (drawn?.guests !== state.guests || chosenAnew) {
        const guests = state.guests
        const headers = headersOf($<HTMLTableElement>('guests-table'))
        redraw(
          $('guests'),
          (guests?.page.attendees ?? []).map((guest) => {
            const tr = labelledRow(headers, [guest.name || '(no name yet)', guest.email ?? '—', guest.ticketType, h('code', { text: guest.ticketCode }), noteOf(guest)])
            tr.dataset.ticketCode = guest.ticketCode
            return tr
          }),
        )
        const total = guests?.page.total ?? 0
        const shown = guests?.page.attendees.length ?? 0
        const offset = guests?.query.offset ?? 0
        const q = guests?.query.q ?? ''
        $('guest-count').textContent = !guests
          ? ''
          : total === 0
            ? q
              ? `No guest matches "${q}".`
              : 'No guests yet: upload the list above.'
            : `${q ? `${plural(total, 'guest')} ${total === 1 ? 'matches' : 'match'} "${q}"` : `${plural(total, 'guest')} on the list`}${total > shown ? `: ${offset + 1}–${offset + shown} shown` : ''}.`
        $('guests-table').hidden = shown === 0
        $('guest-pager').hidden = total <= GUESTS_PER_PAGE
        $<HTMLButtonElement>('guest-prev').disabled = offset === 0
        $<HTMLButtonElement>('guest-next').disabled = offset + shown >= total
      }
      drawn = { guests: state.guests, guestImport: state.guestImport, selectedEventId: state.selectedEventId }
    },
  }
}
