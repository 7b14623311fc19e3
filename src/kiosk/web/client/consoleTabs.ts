/*
 * The console's tabs, as the WAI-ARIA tabs pattern: one tab stop for the whole row (the
 * selected tab), the arrow keys and Home/End move between tabs and show each, Tab goes on into the
 * panel. A click or Enter works as on any button.
 */
import type { ConsoleState, Tab } from './consoleState.js'

export type Tabs = { render(state: ConsoleState): void }

/**
 * @example
 * const tabs = createTabs(document.getElementById('tabs')!, (tab) => dispatch({ type: 'tab', tab }))
 */
export function createTabs(list: HTMLElement, choose: (tab: Tab) => void): Tabs {
  const tabs = [...list.querySelectorAll<HTMLButtonElement>('[role="tab"]')]
  const tabOf = (button: HTMLButtonElement) => button.dataset.tab as Tab
  for (const button of tabs) button.addEventListener('click', () => choose(tabOf(button)))
  list.addEventListener('keydown', (event) => {
    const at = tabs.indexOf(document.activeElement as HTMLButtonElement)
    if (at === -1) return
    const moves: Record<string, number> = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tabs.length - 1 }
    const next = moves[event.key]
    if (next === undefined) return
    event.preventDefault()
    const target = tabs[(next + tabs.length) % tabs.length]!
    choose(tabOf(target))
    target.focus()
  })

  let drawn: Tab | null = null
  return {
    render(state) {
      if (state.tab === drawn) return
      drawn = state.tab
      for (const button of tabs) {
        const on = tabOf(button) === state.tab
        button.setAttribute('aria-selected', String(on))
        button.tabIndex = on ? 0 : -1
        document.getElementById(button.getAttribute('aria-controls')!)!.hidden = !on
      }
    },
  }
}
