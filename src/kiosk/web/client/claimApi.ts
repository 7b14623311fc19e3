/*
 * The kiosk's two claim calls (POST /kiosk/claims/:id/handoff and …/recipient), authenticated by
 * the page's kiosk token like the staff calls. Errors come back as values: the page shows them.
 */
import type { ClaimSummary } from '../../../wire/feedProtocol.js'

export type ApiResult<T> = { ok: true; body: T } | { ok: false; status: number; error: string; message: string }

export type Handoff = { url: string; svg: string; expiresAt: string }

async function post<T>(token: string, path: string, body?: Record<string, unknown>): Promise<ApiResult<T>> {
  const headers: Record<string, string> = { 'x-kiosk-token': token }
  if (body !== undefined) headers['content-type'] = 'application/json'
  let res: Response
  try {
    res = await fetch(path, { method: 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body) })
  } catch {
    return { ok: false, status: 0, error: 'network', message: 'The gateway did not answer' }
  }
  const json = (await res.json().catch(() => null)) as Record<string, unknown> | null
  if (res.ok && json) return { ok: true, body: json as T }
  return {
    ok: false,
    status: res.status,
    error: typeof json?.error === 'string' ? json.error : 'bad_response',
    message: typeof json?.message === 'string' ? json.message : `The gateway answered ${res.status}`,
  }
}

/** A fresh one-time link for the phone (an earlier one stops working). */
export function requestHandoff(token: string, claimId: number): Promise<ApiResult<Handoff>> {
  return post(token, `/kiosk/claims/${claimId}/handoff`)
}

/** The address given at the kiosk (typed, or typed by a USB scanner). */
export function sendRecipient(token: string, claimId: number, recipient: string): Promise<ApiResult<{ claim: ClaimSummary }>> {
  return post(token, `/kiosk/claims/${claimId}/recipient`, { recipient })
}
