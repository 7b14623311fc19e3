/*
 * A USB 2D scanner is a keyboard: it types the wallet's receive QR (`0x…` or `ethereum:0x…`) as fast
 * keystrokes and ends with Enter. While a claim is on screen every physical keystroke goes to the
 * address field, focused or not (a customer cannot be asked to touch the field first), and Enter sends.
 */

export type KeySink = {
  /** Whether keystrokes are for the address field now. */
  active(): boolean
  char(c: string): void
  back(): void
  enter(): void
}

export function captureKeys(sink: KeySink): void {
  // Capture phase: before a focused button could take Enter as a click.
  document.addEventListener(
    'keydown',
    (e) => {
      if (!sink.active() || e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return
      if (e.key === 'Enter') sink.enter()
      else if (e.key === 'Backspace') sink.back()
      else if (e.key.length === 1) sink.char(e.key)
      else return
      e.preventDefault()
    },
    { capture: true },
  )
}
