import { checkImage, type ImageType } from './imageType.js'

export type FetchLimits = {
  /** The whole fetch, redirects and body included. */
  timeoutMs: number
  /** Larger bodies are cut off (a Content-Length above it is refused before reading). */
  maxBytes: number
  maxRedirects: number
  userAgent: string
}

export type MediaFetchErrorCode = 'http_status' | 'timeout' | 'too_large' | 'wrong_type' | 'redirects' | 'bad_url' | 'network' | 'aborted'

/** Why an image could not be fetched: `message` is the sentence staff see on the media row. */
export class MediaFetchError extends Error {
  override name = 'MediaFetchError'
  constructor(
    readonly code: MediaFetchErrorCode,
    message: string,
  ) {
    super(message)
  }
}

export type FetchedImage = { contentType: ImageType; body: Buffer }

const ACCEPT = 'image/avif,image/webp,image/png,image/jpeg,image/gif,image/svg+xml;q=0.9'
const isRedirect = (status: number) => status === 301 || status === 302 || status === 303 || status === 307 || status === 308

/**
 * GETs an image over http(s) with Node's fetch, within the limits: redirects are followed by hand
 * (each hop must stay http/https, at most `maxRedirects`), one deadline covers everything, and the
 * body is counted as it streams in so an endless one is cut off at `maxBytes`.
 *
 * @throws MediaFetchError
 */
export async function fetchImage(start: URL, limits: FetchLimits, cancel?: AbortSignal): Promise<FetchedImage> {
  const controller = new AbortController()
  const timer = setTimeout(
    () => controller.abort(new MediaFetchError('timeout', `No image within ${limits.timeoutMs} ms`)),
    limits.timeoutMs,
  )
  const onCancel = () => controller.abort(new MediaFetchError('aborted', 'The gateway stopped'))
  cancel?.addEventListener('abort', onCancel, { once: true })
  if (cancel?.aborted) onCancel()
  try {
    let url = start
    for (let hops = 0; ; hops++) {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new MediaFetchError('bad_url', `Not an http(s) URL: ${url.protocol}`)
      const response = await fetch(url.href, {
        redirect: 'manual',
        signal: controller.signal,
        headers: { accept: ACCEPT, 'user-agent': limits.userAgent },
      })
      const location = response.headers.get('location')
      if (isRedirect(response.status) && location !== null) {
        await response.body?.cancel()
        if (hops >= limits.maxRedirects) throw new MediaFetchError('redirects', `More than ${limits.maxRedirects} redirects`)
        if (!URL.canParse(location, url.href)) throw new MediaFetchError('bad_url', 'A redirect to an invalid URL')
        url = new URL(location, url)
        continue
      }
      if (!response.ok) {
        await response.body?.cancel()
        throw new MediaFetchError('http_status', `HTTP ${response.status} from ${url.host}`)
      }
      const declared = response.headers.get('content-type')
      const length = Number(response.headers.get('content-length') ?? Number.NaN)
      if (length > limits.maxBytes) {
        await response.body?.cancel()
        throw tooLarge(limits.maxBytes)
      }
      const body = await readAtMost(response, limits.maxBytes, controller)
      const check = checkImage(declared, body)
      if (!check.ok) throw new MediaFetchError('wrong_type', check.reason)
      return { contentType: check.type, body }
    }
  } catch (error) {
    // An abort surfaces as whatever the stream threw; the reason says what happened.
    const reason: unknown = controller.signal.aborted ? controller.signal.reason : error
    if (reason instanceof MediaFetchError) throw reason
    throw new MediaFetchError('network', `Cannot fetch from ${start.host}: ${describe(error)}`)
  } finally {
    clearTimeout(timer)
    cancel?.removeEventListener('abort', onCancel)
    // Frees the connection of a body left unread on an error path; a no-op after success.
    controller.abort()
  }
}

const tooLarge = (maxBytes: number) => new MediaFetchError('too_large', `Larger than ${maxBytes} bytes`)

async function readAtMost(response: Response, maxBytes: number, controller: AbortController): Promise<Buffer> {
  const chunks: Uint8Array[] = []
  let size = 0
  if (response.body === null) return Buffer.alloc(0)
  // A reader rather than `for await`: the DOM lib's ReadableStream (the browser tests' tsconfig) has no async iterator.
  const reader = response.body.getReader()
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    const chunk = next.value
    size += chunk.byteLength
    if (size > maxBytes) {
      const error = tooLarge(maxBytes)
      controller.abort(error)
      throw error
    }
    chunks.push(chunk)
  }
  return Buffer.concat(chunks, size)
}

// undici wraps the socket error (ECONNREFUSED, ENOTFOUND…) as the cause of "fetch failed".
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = error.cause
  if (cause instanceof Error) return (cause as NodeJS.ErrnoException).code ?? cause.message
  return error.message
}
