import { KIOSK_CLOSE, KIOSK_TOKEN_FRAGMENT, type KioskClientMessage, type KioskCounts, type KioskServerMessage, type StationEvent } from '../../../wire/feedProtocol.js'

type Welcome = Extract<KioskServerMessage, { type: 'welcome' }>

export type LinkHandlers = {
  welcome(message: Welcome): void
  /** `backlog`: the event happened before this (re)connection; it is shown in the lists, not as a fresh result. */
  event(event: StationEvent, counts: KioskCounts, backlog: boolean): void
  /** The link is down; the next try is in `retryInMs`. */
  down(retryInMs: number): void
  /** The gateway refused for good (unknown or revoked token, ended staff session): no more tries. */
  refused(code: number, message: string): void
}

export type Link = { close(): void; send(message: KioskClientMessage): void; readonly lastEventId: number }

/** Backoff: 0.5 s doubling to 10 s, each wait ±30 % so a room of kiosks does not reconnect in step. */
export function backoffMs(attempt: number, random = Math.random): number {
  const base = Math.min(10_000, 500 * 2 ** attempt)
  return Math.round(base * (0.7 + 0.6 * random()))
}

/** How often the page checks the link, and how long an answer may take before the link counts as lost. */
const PING_MS = 5000
const PONG_MS = 2500

/** The kiosk token from `#token=…` (a fragment never reaches a server or its logs). */
export function tokenFromFragment(): string | null {
  return new URLSearchParams(location.hash.slice(1)).get(KIOSK_TOKEN_FRAGMENT)
}

/**
 * The page's side of GET /kiosk/ws: hello (with the last event id seen, after a reconnect), then
 * events. Reconnects with backoff and jitter, forever; never reloads the page. Each event is handed
 * on exactly once: anything at or below the last id seen is dropped.
 */
export function openLink(options: { token: string; staffSession?: string; handlers: LinkHandlers }): Link {
  const { token, staffSession, handlers } = options
  let lastEventId = 0
  // The gateway's newest id at the first welcome: a reconnect resumes from there at the least, even
  // when nothing happened in between (a first hello has no `since` and may get no backlog).
  let floor = 0
  let welcomed = false
  let backlogUntil = 0
  let attempt = 0
  let socket: WebSocket | null = null
  let closed = false
  let lastError = ''
  let retryTimer: ReturnType<typeof setTimeout> | undefined
  let pingTimer: ReturnType<typeof setInterval> | undefined
  let pongTimer: ReturnType<typeof setTimeout> | undefined

  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/kiosk/ws`

  const stopTimers = () => {
    clearInterval(pingTimer)
    clearTimeout(pongTimer)
  }

  const scheduleRetry = () => {
    stopTimers()
    if (closed) return
    const wait = backoffMs(attempt++)
    handlers.down(wait)
    clearTimeout(retryTimer)
    retryTimer = setTimeout(connect, wait)
  }

  const send = (message: KioskClientMessage) => {
    if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message))
  }

  function connect() {
    if (closed) return
    const ws = new WebSocket(url)
    socket = ws
    ws.onopen = () => {
      const since = welcomed ? { since: Math.max(lastEventId, floor) } : {}
      const hello: KioskClientMessage = { type: 'hello', token, ...since, ...(staffSession ? { staffSession } : {}) }
      ws.send(JSON.stringify(hello))
      pingTimer = setInterval(() => {
        send({ type: 'ping' })
        clearTimeout(pongTimer)
        // No answer: the link is dead even if TCP has not noticed (a pulled cable, a sleeping Wi-Fi).
        pongTimer = setTimeout(() => ws.close(), PONG_MS)
      }, PING_MS)
    }
    ws.onmessage = (raw) => {
      let message: KioskServerMessage
      try {
        message = JSON.parse(String(raw.data)) as KioskServerMessage
      } catch {
        return
      }
      switch (message.type) {
        case 'welcome':
          attempt = 0
          backlogUntil = message.lastEventId
          if (!welcomed) floor = message.lastEventId
          welcomed = true
          handlers.welcome(message)
          break
        case 'event':
          if (message.event.id <= lastEventId) return
          lastEventId = message.event.id
          handlers.event(message.event, message.counts, message.event.id <= backlogUntil)
          break
        case 'pong':
          clearTimeout(pongTimer)
          break
        case 'error':
          // The close that follows says whether to try again (its code), this says why.
          lastError = message.message
          break
      }
    }
    ws.onclose = (e) => {
      if (socket !== ws) return
      socket = null
      if (e.code === KIOSK_CLOSE.unauthorized || e.code === KIOSK_CLOSE.staffSessionEnded) {
        stopTimers()
        if (!closed) handlers.refused(e.code, lastError || e.reason)
        closed = true
        return
      }
      scheduleRetry()
    }
  }

  connect()
  return {
    close() {
      closed = true
      stopTimers()
      clearTimeout(retryTimer)
      socket?.close()
    },
    send,
    get lastEventId() {
      return lastEventId
    },
  }
}
