/*
 * The console's API keys tab: create a key (shown once), the team's keys, revoke one. A key is
 * the team's credential for the whole JSON API, so a revoke asks twice and the key itself is never
 * listed again: only its prefix, which is what `tapgate` and the logs name it by.
 */
import type { ApiKey, ConsoleApi } from './consoleApi.js'
import { $, button, confirmStep, h, headersOf, labelledRow, onSubmit, redraw, showFailure, showSecret, type StatusLine, when } from './consoleDom.js'
import type { ConsoleState, Message } from './consoleState.js'

export type KeysSection = { load(): Promise<void>; render(state: ConsoleState): void }

/**
 * @example
 * const keys = createKeys({ api, dispatch, status })
 * await keys.load()
 */
export function createKeys(p: { api: ConsoleApi; dispatch: (message: Message) => void; status: StatusLine }): KeysSection {
  const { api, dispatch, status } = p

  async function load(): Promise<void> {
    const answer = await api.apiKeys()
    if (answer.ok) dispatch({ type: 'keys', keys: answer.body.keys })
    else if (answer.status !== 401) status.show(`The API keys could not be loaded: ${answer.message}`, 'error')
  }

  const form = $<HTMLFormElement>('key-create-form')
  onSubmit(form, async () => {
    const input = $<HTMLInputElement>('key-label')
    const answer = await api.createApiKey(input.value.trim() || undefined)
    if (!answer.ok) return showFailure(answer, status, form)
    const label = input.value.trim()
    input.value = ''
    status.show(`API key ${answer.body.prefix} created.`)
    showSecret($('key-secret'), {
      title: label ? `API key "${label}"` : 'New API key',
      value: answer.body.apiKey,
      note: 'Send it as the x-service-api-key header. Anyone holding it acts for your team: keep it in a secret store, not in code.',
    })
    await load()
  })

  const row = (headers: string[], key: ApiKey) => {
    let action: HTMLElement | string = ''
    if (key.revokedAt === null) {
      const revoke = button('Revoke', () => undefined, { className: 'danger', attrs: { 'aria-label': `Revoke key ${key.prefix}` }, data: { focusKey: `key-${key.prefix}` } })
      confirmStep(revoke, {
        question: 'Programs using it are refused at once.',
        confirm: 'Yes, revoke',
        onConfirm: async () => {
          const answer = await api.revokeApiKey(key.prefix)
          if (!answer.ok) return showFailure(answer, status)
          status.show(`API key ${key.prefix} revoked.`)
          await load()
        },
      })
      action = revoke
    }
    const tr = labelledRow(headers, [
      h('code', { text: key.prefix }),
      key.label ?? '—',
      when(key.createdAt),
      key.revokedAt === null ? h('span', { className: 'pill', text: 'Active', data: { state: 'active' } }) : `Revoked ${when(key.revokedAt)}`,
      action,
    ])
    tr.dataset.prefix = key.prefix
    tr.dataset.revoked = String(key.revokedAt !== null)
    return tr
  }

  let drawn: ConsoleState['keys'] | null = null
  return {
    load,
    render(state) {
      if (state.keys === drawn) return
      drawn = state.keys
      const headers = headersOf($<HTMLTableElement>('keys-table'))
      // Active keys first: they are the ones an operator acts on.
      const ordered = [...state.keys].sort((a, b) => Number(a.revokedAt !== null) - Number(b.revokedAt !== null) || b.createdAt.localeCompare(a.createdAt))
      redraw($('keys'), ordered.map((key) => row(headers, key)))
      $('keys-empty').hidden = state.keys.length > 0
      $('keys-table').hidden = state.keys.length === 0
    },
  }
}
