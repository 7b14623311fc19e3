import type http from 'node:http'
import type { AddressPolicy } from './allowHosts.js'
import { guardedGet, systemResolve, type Resolve } from './guardedGet.js'
import { checkImage, type ImageType } from './imageType.js'
import { MediaFetchError } from './mediaFetchError.js'

export { MediaFetchError, type MediaFetchErrorCode } from './mediaFetchError.js'

export type FetchLimits = {
  /** The whole fetch, redirects and body included. */
  timeoutMs: number
  /** Larger bodies are cut off (a Content-Length above it is refused before reading). */
  maxBytes: number
  maxRedirects: number
  userAgent: string
}

export type FetchImageOptions = FetchLimits & {
  /** Where a request may connect (media.allowHosts over "public addresses only"), checked on every hop. */
  permits: AddressPolicy
  /** Default: the system resolver. */
  resolve?: Resolve
}

export type FetchedImage = { contentType: ImageType; body: Buffer }

const ACCEPT = 'image/avif,image/webp,image/png,image/jpeg,image/gif,image/svg+xml;q=0.9'
const isRedirect = (status: number) => status === 301 || status === 302 || status === 303 || status === 307 || status === 308

/**
 * GETs an image over http(s) within the limits, from public addresses only (or the allow list's):
 * each hop's address is checked where its socket connects, redirects are followed by hand (each
 * must stay http/https, at most `maxRedirects`), one deadline covers everything, and the body is
 * counted as it streams in so an endless one is cut off at `maxBytes`.
 *
 * @throws MediaFetchError
 */
export async function fetchImage(start: URL, options: FetchImageOptions, cancel?: AbortSignal): Promise<FetchedImage> {
  const { permits, resolve = systemResolve } = options
  const controller = new AbortController()
  const timer = setTimeout(
    () => controller.abort(new MediaFetchError('timeout', `No image within ${options.timeoutMs} ms`)),
    options.timeoutMs,
  )
  const onCancel = () => controller.abort(new MediaFetchError('aborted', 'The gateway stopped'))
  cancel?.addEventListener('abort', onCancel, { once: true })
  if (cancel?.aborted) onCancel()
  const headers = { accept: ACCEPT, 'user-agent': options.userAgent }
  let response: http.IncomingMessage | undefined
  try {
    let url = start
    for (let hops = 0; ; hops++) {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new MediaFetchError('bad_url', `Not an http(s) URL: ${url.protocol}`)
      if (url.username !== '' || url.password !== '') throw new MediaFetchError('bad_url', 'A URL with credentials')
      response = await guardedGet(url, { permits, resolve, signal: controller.signal, headers })
      const status = response.statusCode ?? 0
      const location = response.headers.location
      if (isRedirect(status) && location !== undefined) {
        response.destroy()
        if (hops >= options.maxRedirects) throw new MediaFetchError('redirects', `More than ${options.maxRedirects} redirects`)
        if (!URL.canParse(location, url.href)) throw new MediaFetchError('bad_url', 'A redirect to an invalid URL')
        url = new URL(location, url)
        continue
      }
      if (status < 200 || status > 299) throw new MediaFetchError('http_status', `HTTP ${status} from ${url.host}`)
      const length = Number(response.headers['content-length'] ?? Number.NaN)
      if (length > options.maxBytes) throw tooLarge(options.maxBytes)
      const body = await readAtMost(response, options.maxBytes)
      const check = checkImage(response.headers['content-type'], body)
      if (!check.ok) throw new MediaFetchError('wrong_type', check.reason)
      return { contentType: check.type, body }
    }
  } catch (error) {
    // An abort surfaces as whatever the socket threw; the reason says what happened.
    const reason: unknown = controller.signal.aborted ? controller.signal.reason : error
    if (reason instanceof MediaFetchError) throw reason
    throw new MediaFetchError('network', `Cannot fetch from ${start.host}: ${describe(error)}`)
  } finally {
    clearTimeout(timer)
    cancel?.removeEventListener('abort', onCancel)
    // Frees the connection of a body left unread on an error path; a no-op after success.
    response?.destroy()
  }
}

const tooLarge = (maxBytes: number) => new MediaFetchError('too_large', `Larger than ${maxBytes} bytes`)

async function readAtMost(response: http.IncomingMessage, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of response as AsyncIterable<Buffer>) {
    size += chunk.byteLength
    if (size > maxBytes) throw tooLarge(maxBytes)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks, size)
}

// The socket's error code (ECONNREFUSED, ENOTFOUND…) says more to staff than its message.
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  return (error as NodeJS.ErrnoException).code ?? error.message
}
