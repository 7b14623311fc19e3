/*
 * The console's sign-in page (GET /console/sign-in#<link token>). The token rides in the fragment,
 * which no request, server log or Referer carries; the page takes it out of the address bar before
 * anything else (so it is not in the history, a bookmark or a screen share either), trades it for
 * the session cookie, and goes on to the console. The link works once.
 */
import { $ } from './consoleDom.js'

const NEW_LINK = 'tapgate console-link --team <id>'

function say(p: { status?: string; problem?: string; command?: boolean; retry?: boolean }): void {
  $('signin-status').textContent = p.status ?? ''
  $('signin-problem').textContent = p.problem ?? ''
  $('signin-command').hidden = !p.command
  $('signin-retry').hidden = !p.retry
}

async function signIn(link: string): Promise<void> {
  say({ status: 'Signing in…' })
  const res = await fetch('/console/api/session', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ link }),
  }).catch(() => null)
  if (res?.ok) {
    // Read to its end first: leaving with the answer half read aborts it, which the browser reports as a failed request.
    await res.json().catch(() => null)
    say({ status: 'Signed in. Opening the console…' })
    // replace: Back from the console must not land on a spent sign-in page.
    return location.replace('/console')
  }
  if (res?.status === 401) return say({ problem: `This link was already used or has expired. Ask for a new one: ${NEW_LINK}`, command: true })
  const body = res ? ((await res.json().catch(() => null)) as { message?: unknown } | null) : null
  const why = typeof body?.message === 'string' ? body.message : res ? `The gateway answered ${res.status}.` : 'The gateway did not answer.'
  // The link was not spent (no 401): it is kept in this page's memory only, for one more try.
  say({ problem: `Not signed in: ${why}`, retry: true })
}

function start(): void {
  const link = decodeURIComponent(location.hash.slice(1)).trim()
  history.replaceState(null, '', location.pathname + location.search)
  $('signin-command').querySelector('code')!.textContent = NEW_LINK
  if (!link) return say({ problem: 'This page needs a console link. Whoever runs the gateway makes one on its machine:', command: true })
  $('signin-retry').addEventListener('click', () => void signIn(link))
  void signIn(link)
}

start()
