import type { Store, Repositories } from '../db/store.js'
import type { VerifiedTap } from './verifyTap.js'

/** What the tap page shows: the chip, its token and its events, and the ref for the integrator. */
export type TapPageView = {
  uid: string
  counter: number | null
  authenticated: boolean
  serviceRef: string
  token: { name: string | null; image: string | null; chainId: number; contractAddress: string; tokenId: string } | null
  proofEvents: { name: string; status: string }[]
  guestbookEvents: { name: string }[]
}

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Escapes text for HTML element content and quoted attribute values. */
export const escapeHtml = (value: string | number): string => String(value).replace(/[&<>"']/g, (c) => escapes[c]!)

/**
 * Where an accepted tap goes instead of the tap page: the chip's redirect URL,
 * else its team's, with `serviceRef=<ref id>` appended to the URL's own query
 * (with compat=iyk also `iykRef=<ref id>`, the name apps written for the hosted API read).
 *
 * @returns the URL, or null when neither the chip nor its team has a usable one
 * @example
 * tapRedirectUrl(store, tap) // 'https://shop.example/landing?campaign=nfc&serviceRef=V1StGXR8_Z5jdHi6B-myT'
 */
export async function tapRedirectUrl(store: Repositories, tap: Pick<VerifiedTap, 'chip' | 'refId'>, { compat }: { compat?: 'iyk' | undefined } = {}): Promise<string | null> {
  const base = tap.chip.redirectUrl ?? (await store.teams.get(tap.chip.teamId))?.redirectUrl ?? null
  // Team redirect URLs set outside the importer are not validated; an unusable one falls back to the tap page.
  if (base === null || !URL.canParse(base)) return null
  return withServiceRef(base, tap.refId, compat === 'iyk' ? ['serviceRef', 'iykRef'] : ['serviceRef'])
}

/** Appends serviceRef (or the names given) to the query, leaving the existing query byte for byte (URLSearchParams would re-encode it). */
export function withServiceRef(base: string, refId: string, names: readonly string[] = ['serviceRef']): string {
  const url = new URL(base)
  const param = names.map((name) => `${name}=${encodeURIComponent(refId)}`).join('&')
  const query = url.search.slice(1)
  url.search = query === '' ? param : `${query}${query.endsWith('&') ? '' : '&'}${param}`
  return url.href
}

/**
 * Gathers what the tap page shows about a verified tap's chip.
 *
 * @example
 * const html = renderTapPage(tapPageView(store, tap))
 */
export async function tapPageView(store: Repositories, tap: Pick<VerifiedTap, 'uid' | 'counter' | 'authenticated' | 'refId'>): Promise<TapPageView> {
  const token = await store.tokens.findByChip(tap.uid)
  const meta = token?.metadata ? parseMetadata(token.metadata) : {}
  return {
    uid: tap.uid,
    counter: tap.counter,
    authenticated: tap.authenticated,
    serviceRef: tap.refId,
    token: token
      ? { name: meta.name ?? null, image: meta.image ?? null, chainId: token.chainId, contractAddress: token.contractAddress, tokenId: token.tokenId }
      : null,
    proofEvents: (await store.proofEvents.listByChip(tap.uid)).map((e) => ({ name: e.name, status: e.status })),
    guestbookEvents: (await store.guestbook.listEventsByChip(tap.uid)).map((e) => ({ name: e.name })),
  }
}

function parseMetadata(json: string): { name?: string; image?: string } {
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch {
    return {}
  }
  if (typeof value !== 'object' || value === null) return {}
  const { name, image } = value as Record<string, unknown>
  return {
    ...(typeof name === 'string' && name !== '' ? { name } : {}),
    // Only web images: a javascript: or data: URL from metadata has no business in an <img>.
    ...(typeof image === 'string' && /^https?:\/\//i.test(image) && URL.canParse(image) ? { image } : {}),
  }
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f6f4;color:#1b1b1b}
main{max-width:32rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:12px}
h1{font-size:1.5rem;margin-top:0}h2{font-size:1.1rem;margin-bottom:.25rem}
img{max-width:100%;height:auto;border-radius:8px}code{font-size:.95em;word-break:break-all}
dt{font-weight:600}dd{margin:0 0 .5rem}.note{padding:.5rem .75rem;border-left:4px solid #b26b00;background:#fff6e5}
.ok{border-left:4px solid #2e7d32;padding-left:.75rem}.bad{border-left:4px solid #c62828;padding-left:.75rem}`

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`
}

/**
 * The page a phone shows after an accepted tap with no redirect URL: the chip,
 * its linked token (name, image) and its events, plus the ref as `serviceRef`
 * for an integrator's page or app. Self-contained (no scripts, no external CSS);
 * every value is escaped.
 *
 * @example
 * reply.type('text/html; charset=utf-8').send(renderTapPage(tapPageView(store, tap)))
 */
export function renderTapPage(view: TapPageView): string {
  const parts: string[] = []
  parts.push(`<h1 class="ok">Chip verified</h1>`)
  if (!view.authenticated)
    parts.push(`<p class="note">This chip cannot prove it is genuine (it sends no signature), so this tap is recorded as unverified.</p>`)
  parts.push(
    `<dl>
<dt>Chip</dt><dd><code id="uid">${escapeHtml(view.uid)}</code></dd>
${view.counter === null ? '' : `<dt>Tap number</dt><dd>${escapeHtml(view.counter)}</dd>\n`}<dt>serviceRef</dt><dd><code id="serviceRef" data-service-ref="${escapeHtml(view.serviceRef)}">${escapeHtml(view.serviceRef)}</code></dd>
</dl>`,
  )
  if (view.token) {
    const t = view.token
    const name = t.name ?? `Token #${t.tokenId}`
    parts.push(`<section aria-labelledby="token"><h2 id="token">Linked token</h2>
<p id="token-name">${escapeHtml(name)}</p>
${t.image ? `<img src="${escapeHtml(t.image)}" alt="${escapeHtml(name)}" width="320">\n` : ''}<p><small>Token ${escapeHtml(t.tokenId)} of <code>${escapeHtml(t.contractAddress)}</code> on chain ${escapeHtml(t.chainId)}</small></p>
</section>`)
  } else parts.push(`<p>No token is linked to this chip.</p>`)
  const events = [
    ...view.proofEvents.map((e) => `<li>${escapeHtml(e.name || 'Unnamed event')} <small>(${escapeHtml(e.status)})</small></li>`),
    ...view.guestbookEvents.map((e) => `<li>${escapeHtml(e.name)} <small>(guestbook)</small></li>`),
  ]
  if (events.length > 0) parts.push(`<section aria-labelledby="events"><h2 id="events">Events</h2>\n<ul>\n${events.join('\n')}\n</ul>\n</section>`)
  return page('Chip verified', parts.join('\n'))
}

/** What anyone at a refused tap is told: the same words whatever the reason. */
export const REFUSED_TAP_VERDICT = 'This tap was not accepted. Tap the chip again; if it is still not accepted, please ask staff for help.'

/**
 * The page a phone shows when a tap is refused: one plain verdict, the same for
 * every reason. The reason and the diagnosis (UIDs, counters, what decrypted)
 * would tell a stranger which UIDs are registered and what kind of chip they
 * are; they go to the tap log and the server log, for staff.
 *
 * @example
 * reply.code(400).type('text/html; charset=utf-8').send(renderRejectedTapPage())
 */
export function renderRejectedTapPage(): string {
  return page('Tap not accepted', `<h1 class="bad">Tap not accepted</h1>\n<p id="verdict" role="alert">${escapeHtml(REFUSED_TAP_VERDICT)}</p>`)
}

/**
 * The page for a tap the gateway could not check at all (its keys do not open):
 * the person is told to ask staff, and staff get the error code (a state of the
 * gateway, not of this chip); the cause is in the server log.
 */
export function renderUnavailableTapPage(p: { code: string }): string {
  return page(
    'Tap not checked',
    `<h1 class="bad">This tap could not be checked</h1>
<p id="verdict" role="alert">The gateway cannot verify taps right now. Please ask staff for help.</p>
<p><small>Code for staff: <code id="reason-code">${escapeHtml(p.code)}</code></small></p>`,
  )
}
