/*
 * A customer who walks away from the product card, the QR or the address field must not hold the
 * kiosk: after `idleMs` without a touch or a key the page asks "Still there?" with a visible
 * countdown of `warnMs`, and resets the screen unless someone touches it. A claim that a phone has
 * opened stays usable there: the reset only clears this screen.
 */

export type CustomerTimeout = {
  /** Starts (or restarts) the idle wait; a running one keeps its start. */
  start(): void
  stop(): void
  /** A touch or a key: the customer is there. */
  touched(): void
  readonly running: boolean
  readonly warning: boolean
}

export function createCustomerTimeout(p: {
  settings: () => { customerIdleMs: number; customerWarnMs: number }
  overlay: HTMLElement
  count: HTMLElement
  onReset: () => void
}): CustomerTimeout {
  let running = false
  let warnAt = 0
  let idleTimer: ReturnType<typeof setTimeout> | undefined
  let tickTimer: ReturnType<typeof setInterval> | undefined

  const hideWarning = () => {
    clearInterval(tickTimer)
    tickTimer = undefined
    p.overlay.hidden = true
  }
  const armIdle = () => {
    clearTimeout(idleTimer)
    hideWarning()
    idleTimer = setTimeout(warn, p.settings().customerIdleMs)
  }
  const warn = () => {
    warnAt = Date.now()
    const warnMs = p.settings().customerWarnMs
    const tick = () => {
      const left = warnMs - (Date.now() - warnAt)
      if (left <= 0) {
        stop()
        p.onReset()
        return
      }
      p.count.textContent = String(Math.ceil(left / 1000))
    }
    p.overlay.hidden = false
    tick()
    tickTimer = setInterval(tick, 250)
  }
  const stop = () => {
    running = false
    clearTimeout(idleTimer)
    hideWarning()
  }
  return {
    start() {
      if (running) return
      running = true
      armIdle()
    },
    stop,
    touched() {
      if (running) armIdle()
    },
    get running() {
      return running
    },
    get warning() {
      return tickTimer !== undefined
    },
  }
}
