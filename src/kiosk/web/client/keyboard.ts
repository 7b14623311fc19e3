/*
 * The on-screen keyboard of the address field: what an address or an ENS name is made of (digits,
 * a–z, '.') and nothing else, so every key is big enough to hit. Lower case only: an all-lowercase
 * address carries no EIP-55 checksum and is still valid.
 */

export type Key = { char: string } | { action: 'back' | 'clear' | 'send' }

const ROWS = ['1234567890', 'qwertyuiop', 'asdfghjkl.', 'zxcvbnm']

/** Builds the keys into `container` (once) and reports each press. */
export function buildKeyboard(container: HTMLElement, onKey: (key: Key) => void): { setSendEnabled(enabled: boolean): void } {
  const button = (label: string, key: Key, extra: { className?: string; ariaLabel?: string } = {}) => {
    const b = document.createElement('button')
    b.type = 'button'
    b.textContent = label
    if (extra.className) b.className = extra.className
    if (extra.ariaLabel) b.setAttribute('aria-label', extra.ariaLabel)
    b.dataset.key = 'char' in key ? key.char : key.action
    // pointerdown would also fire for a finger that slides off; click is the deliberate press.
    b.addEventListener('click', () => onKey(key))
    return b
  }
  container.replaceChildren()
  for (const row of ROWS) {
    const div = document.createElement('div')
    div.className = 'keys'
    for (const char of row) div.append(button(char, { char }))
    container.append(div)
  }
  const last = container.lastElementChild as HTMLElement
  last.append(button('⌫', { action: 'back' }, { className: 'wide', ariaLabel: 'Delete last character' }))
  const controls = document.createElement('div')
  controls.className = 'keys controls'
  controls.append(button('0x', { char: '0x' }, { ariaLabel: 'Type 0x' }))
  controls.append(button('Clear', { action: 'clear' }, { className: 'wide' }))
  const send = button('Send', { action: 'send' }, { className: 'wide primary' })
  controls.append(send)
  container.append(controls)
  return {
    setSendEnabled(enabled) {
      send.disabled = !enabled
    },
  }
}
