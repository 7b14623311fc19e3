import type { Config } from '../config.js'
import type { Store } from '../db/store.js'
import type { MediaRow } from '../db/media.js'
import { createAddressPolicy } from './allowHosts.js'
import { fetchImage, type FetchedImage } from './fetchImage.js'
import type { Resolve } from './guardedGet.js'
import { checkImage } from './imageType.js'
import { createMediaBudget } from './mediaBudget.js'
import { MediaFetchError } from './mediaFetchError.js'
import { mediaFileSize, readMediaFile, writeMediaFile } from './mediaFiles.js'
import { decodeDataPayload, ipfsGatewayUrl, isMediaKey, parseMediaUrl } from './mediaUrl.js'

export { mediaPath } from './mediaPath.js'

/** A failed fetch is not tried again before this (a page reloading an offline image must not hammer the origin). */
export const MEDIA_RETRY_MS = 60_000
const MAX_REDIRECTS = 3

export type MediaLookup =
  | { status: 'ok'; contentType: string; body: Buffer }
  /** No such key (never recorded by mediaPath). */
  | { status: 'unknown' }
  /** Known, but not cached and not fetchable now; `error` is the row's. */
  | { status: 'unavailable'; error: string }

export type MediaCache = {
  /** Fetch now, in the background, so the card shows offline later. Never throws; one fetch per key at a time. */
  prefetch(key: string): void
  /** The image of a key: from the data dir, or fetched now (bounded by media.fetchTimeoutMs). Never throws. */
  get(key: string): Promise<MediaLookup>
  /** Resolves when no fetch is in flight (tests; shutdown). */
  idle(): Promise<void>
  /** Aborts fetches in flight and waits for them: call before the store closes. */
  close(): Promise<void>
}

type Log = { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void }

export type MediaCacheOptions = {
  store: Store
  config: Pick<Config, 'dataDir' | 'media'>
  now: () => number
  log: Log
  userAgent: string
  /** Host name → addresses for the fetcher; default: the system resolver. */
  resolve?: Resolve
}

/**
 * The fetcher's allow list: media.allowHosts, and the IPFS gateway the operator configured (often
 * a local node, http://127.0.0.1:8080/ipfs/), by its host and port only.
 */
function allowedHosts(media: Config['media']): string[] {
  const gateway = new URL(media.ipfsGateway)
  return [...media.allowHosts, `${gateway.hostname}:${gateway.port || (gateway.protocol === 'https:' ? 443 : 80)}`]
}

/**
 * The product image cache: rows in the media table (mediaPath records them), bytes in
 * <dataDir>/media/<key>. A key is fetched at most once at a time however many callers ask (a claim's
 * prefetch, the kiosk and a phone loading the card together all wait on the same fetch).
 */
export function createMediaCache({ store, config, now, log, userAgent, resolve }: MediaCacheOptions): MediaCache {
  const inFlight = new Map<string, Promise<MediaLookup>>()
  const prefetching = new Set<Promise<void>>()
  const stop = new AbortController()
  const limits = { timeoutMs: config.media.fetchTimeoutMs, maxBytes: config.media.maxBytes, maxRedirects: MAX_REDIRECTS, userAgent }
  const permits = createAddressPolicy(allowedHosts(config.media))
  const budget = createMediaBudget({ dataDir: config.dataDir, maxBytes: config.media.cacheMaxBytes, now })
  // The cap is housekeeping: a failure to evict or to note a use must not fail the image.
  const keepBudget = (change: Promise<void>) => change.catch((error: unknown) => log.warn({ err: error }, 'media cache cap not kept'))

  // A row says fetched and the file holds exactly its bytes (a crash or a hand-deleted file means fetch again).
  const isCached = (row: MediaRow, size: number | null) => row.fetchedAt !== null && row.contentType !== null && size === row.bytes
  const failedRecently = (row: MediaRow) => row.failedAt !== null && now() - row.failedAt < MEDIA_RETRY_MS

  async function download(row: MediaRow): Promise<FetchedImage> {
    const source = parseMediaUrl(row.url)
    if (source === null) throw new MediaFetchError('bad_url', 'Not an image URL the gateway can fetch')
    if (source.kind === 'data') {
      const body = decodeDataPayload(source)
      if (body.length > limits.maxBytes) throw new MediaFetchError('too_large', `Larger than ${limits.maxBytes} bytes`)
      const check = checkImage(source.contentType, body)
      if (!check.ok) throw new MediaFetchError('wrong_type', check.reason)
      return { contentType: check.type, body }
    }
    const url = source.kind === 'ipfs' ? ipfsGatewayUrl(config.media.ipfsGateway, source.path) : source.url
    return fetchImage(url, { ...limits, permits, resolve }, stop.signal)
  }

  async function fetchAndStore(row: MediaRow): Promise<MediaLookup> {
    try {
      const image = await download(row)
      await writeMediaFile(config.dataDir, row.key, image.body)
      if (stop.signal.aborted) return { status: 'unavailable', error: 'The gateway stopped' }
      await store.tx((tx) => tx.media.setFetched(row.key, { contentType: image.contentType, bytes: image.body.length, now: now() }))
      await keepBudget(budget.added(row.key, image.body.length))
      return { status: 'ok', contentType: image.contentType, body: image.body }
    } catch (caught) {
      const error = caught instanceof MediaFetchError ? caught.message : `Cannot store the image: ${(caught as Error).message}`
      // Stopping is not the origin's fault, and the store may be closing: leave the row as it was.
      if (stop.signal.aborted) return { status: 'unavailable', error }
      log.info({ mediaKey: row.key, error }, 'product image not fetched')
      try {
        await store.tx((tx) => tx.media.setFailed(row.key, { error, now: now() }))
      } catch (dbError) {
        log.warn({ mediaKey: row.key, err: dbError }, 'cannot record a failed image fetch')
      }
      return { status: 'unavailable', error }
    }
  }

  function fetchOnce(row: MediaRow): Promise<MediaLookup> {
    const running = inFlight.get(row.key)
    if (running) return running
    const job = fetchAndStore(row).finally(() => inFlight.delete(row.key))
    inFlight.set(row.key, job)
    return job
  }

  async function lookup(key: string, wantBytes: boolean): Promise<MediaLookup> {
    if (!isMediaKey(key) || stop.signal.aborted) return { status: 'unknown' }
    const row = await store.media.get(key)
    if (!row) return { status: 'unknown' }
    const running = inFlight.get(key)
    if (running) return running
    if (row.fetchedAt !== null && row.contentType !== null) {
      if (wantBytes) {
        const body = await readMediaFile(config.dataDir, key)
        if (body !== null && isCached(row, body.length)) {
          void keepBudget(budget.used(key, body.length))
          return { status: 'ok', contentType: row.contentType, body }
        }
      } else if (isCached(row, await mediaFileSize(config.dataDir, key))) {
        void keepBudget(budget.used(key, row.bytes!))
        return { status: 'ok', contentType: row.contentType, body: Buffer.alloc(0) }
      }
    }
    if (failedRecently(row)) return { status: 'unavailable', error: row.error ?? 'The last fetch failed' }
    return fetchOnce(row)
  }

  return {
    prefetch(key) {
      // Counted from the call, not from the fetch: the row is read first, and idle() must wait for that too.
      const job = lookup(key, false)
        .then(() => undefined)
        .catch((error: unknown) => log.warn({ mediaKey: key, err: error }, 'image prefetch failed'))
        .finally(() => prefetching.delete(job))
      prefetching.add(job)
    },
    async get(key) {
      try {
        return await lookup(key, true)
      } catch (error) {
        log.warn({ mediaKey: key, err: error }, 'cannot read a cached image')
        return { status: 'unavailable', error: 'The cached image cannot be read' }
      }
    },
    async idle() {
      while (inFlight.size > 0 || prefetching.size > 0) await Promise.allSettled([...inFlight.values(), ...prefetching])
      await budget.idle()
    },
    async close() {
      stop.abort()
      while (inFlight.size > 0 || prefetching.size > 0) await Promise.allSettled([...inFlight.values(), ...prefetching])
      await budget.idle()
    },
  }
}
