import dns from 'node:dns/promises'
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import type { AddressPolicy } from './allowHosts.js'
import { MediaFetchError } from './mediaFetchError.js'

export type ResolvedAddress = { address: string; family: number }
/** Host name → addresses. The system's resolver (/etc/hosts, then DNS) unless a test injects one. */
export type Resolve = (hostname: string) => Promise<readonly ResolvedAddress[]>

export const systemResolve: Resolve = (hostname) => dns.lookup(hostname, { all: true, verbatim: true })

export type GuardedGetOptions = {
  permits: AddressPolicy
  resolve: Resolve
  signal: AbortSignal
  headers: Record<string, string>
}

type LookupCallback = (error: Error | null, address: string | ResolvedAddress[], family?: number) => void

/**
 * A `lookup` for the socket that answers the one address already checked: the connection goes
 * exactly where the policy looked, with no second resolution for a rebinding DNS server to answer
 * differently. (Node asks with `all: true` when it races address families.)
 */
const pinnedLookup =
  (pinned: ResolvedAddress) =>
  (_hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    if (options.all) callback(null, [pinned])
    else callback(null, pinned.address, pinned.family)
  }

/**
 * The address a request to `url` may connect to: the URL's own IP literal, else the first address
 * its host resolves to that the policy permits. Refused before any connection, with one message
 * whatever is (or is not) listening there, so a refusal tells nothing about the port.
 *
 * @throws MediaFetchError `refused`
 */
async function permittedAddress(url: URL, permits: AddressPolicy, resolve: Resolve): Promise<ResolvedAddress> {
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1')
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80))
  const literal = net.isIP(hostname)
  const candidates = literal === 0 ? await resolve(hostname) : [{ address: hostname, family: literal }]
  const permitted = candidates.find(({ address }) => permits({ hostname, port, address }))
  if (permitted === undefined) throw new MediaFetchError('refused', `Refused: ${url.hostname} is not a public address (media.allowHosts lists exceptions)`)
  return permitted
}

/**
 * One GET (no redirects followed) to an address the policy permits, checked on the address the
 * socket connects to. A fresh connection each time (no pool): a kept-alive socket must not carry a
 * later request past the check.
 *
 * @throws MediaFetchError `refused`; the socket's own errors otherwise
 */
export async function guardedGet(url: URL, { permits, resolve, signal, headers }: GuardedGetOptions): Promise<http.IncomingMessage> {
  const pinned = await permittedAddress(url, permits, resolve)
  signal.throwIfAborted()
  const client = url.protocol === 'https:' ? https : http
  return new Promise((settle, reject) => {
    client.get(url, { agent: false, signal, headers, lookup: pinnedLookup(pinned) as net.LookupFunction }, settle).on('error', reject)
  })
}
