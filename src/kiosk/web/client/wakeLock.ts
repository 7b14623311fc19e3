/**
 * Keeps the screen on: asks for a wake lock at load and again whenever the page becomes visible
 * (the browser drops the lock when the page is hidden). Needs a secure context: localhost or HTTPS.
 */
export function keepScreenOn(): void {
  const request = () => {
    if (!('wakeLock' in navigator)) return
    navigator.wakeLock.request('screen').catch(() => {
      // Refused (no secure context, battery saver): the kiosk works, the screen may dim.
    })
  }
  request()
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') request()
  })
}
