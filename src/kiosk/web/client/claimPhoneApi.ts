/*
 * The phone page's side of /c/:token/* (issue 11's contract). Every call is a same-origin POST with
 * a JSON body; an answer is either the claim or the gateway's `{ error, message }`, or `network`
 * when the phone could not reach the gateway at all (it left the shop's Wi-Fi).
 */
import type { ClaimStep, ProductCard, TxStatus } from '../../../wire/feedProtocol.js'

/** What the gateway tells the phone of its claim (never the OTPs, never another phone's data). */
export type PhoneClaim = {
  kind: 'token' | 'guestbook'
  product: ProductCard
  step: ClaimStep
  twoTap: boolean
  /** ISO: a 2-tap token's registered address may claim from then on. */
  allowedAt: string | null
  /** How long the link still works, from the moment of the answer (the page counts with its own clock). */
  expiresInMs: number
  /** Whether the gateway can resolve names (an ENS RPC is configured and answers). */
  ens: boolean
  tx: { status: TxStatus; hash: string | null } | null
  /** The transaction on a block explorer, when the gateway knows one (the contract has it; the gateway may leave it out). */
  explorerUrl?: string | null
}

export type Answer<T> = { ok: true; body: T } | { ok: false; status: number; error: string; message: string }

/** The link's token, the last part of /c/<token>. */
export function tokenFromPath(pathname = location.pathname): string | null {
  const match = /^\/c\/([A-Za-z0-9_-]+)\/?$/.exec(pathname)
  return match ? match[1]! : null
}

async function post<T>(path: string, body: object): Promise<Answer<T>> {
  let res: Response
  try {
    res = await fetch(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      cache: 'no-store',
      credentials: 'same-origin',
    })
  } catch {
    return { ok: false, status: 0, error: 'network', message: 'No connection to the shop: check that this phone is on its Wi-Fi, then try again' }
  }
  let json: unknown = null
  try {
    json = await res.json()
  } catch {
    // A proxy's HTML error page, or an empty answer: reported by status below.
  }
  if (res.ok && json !== null) return { ok: true, body: json as T }
  const err = (json ?? {}) as { error?: unknown; message?: unknown }
  return {
    ok: false,
    status: res.status,
    error: typeof err.error === 'string' ? err.error : `http_${res.status}`,
    message: typeof err.message === 'string' && err.message !== '' ? err.message : `The shop's system answered ${res.status}: please try again`,
  }
}

export type ClaimApi = {
  open(session: string | null): Promise<Answer<{ session: string; claim: PhoneClaim }>>
  resolve(session: string, name: string): Promise<Answer<{ name: string; address: string }>>
  recipient(session: string, recipient: string): Promise<Answer<{ claim: PhoneClaim }>>
  status(session: string): Promise<Answer<{ claim: PhoneClaim }>>
}

export function claimApi(token: string): ClaimApi {
  const base = `/c/${encodeURIComponent(token)}`
  return {
    open: (session) => post(`${base}/open`, session ? { session } : {}),
    resolve: (session, name) => post(`${base}/resolve`, { session, name }),
    recipient: (session, recipient) => post(`${base}/recipient`, { session, recipient }),
    status: (session) => post(`${base}/status`, { session }),
  }
}

/**
 * The session that binds the link to this phone, kept for the tab's life (a reload sends it and
 * gets the claim back). sessionStorage can throw (storage disabled): then it lives in memory only.
 */
export function sessionStore(token: string): { get(): string | null; set(session: string): void } {
  const key = `tapgate-claim:${token}`
  let memory: string | null = null
  return {
    get() {
      try {
        return sessionStorage.getItem(key) ?? memory
      } catch {
        return memory
      }
    },
    set(session) {
      memory = session
      try {
        sessionStorage.setItem(key, session)
      } catch {
        // memory only
      }
    },
  }
}
