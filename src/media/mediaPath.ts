import type { Repositories } from '../db/store.js'
import { mediaKey, parseMediaUrl } from './mediaUrl.js'

/**
 * The gateway path a page shows an image URL from metadata by (`/media/<key>`), recording the URL
 * (once) so GET /media/<key> and the cache know what to fetch; null when there is no usable URL
 * (the page shows its placeholder). Synchronous, for use inside a store.tx.
 *
 * @example
 * const image = await store.tx((tx) => mediaPath(tx, metadata.image, now)) // '/media/3f2a…' or null
 */
export async function mediaPath(store: Pick<Repositories, 'media'>, url: string | null | undefined, now: number): Promise<string | null> {
  if (parseMediaUrl(url) === null) return null
  const trimmed = url!.trim()
  const key = mediaKey(trimmed)
  // Read first: a phone polling its claim every second must not take the write lock each time.
  if (!await store.media.get(key)) await store.media.insert({ key, url: trimmed, now })
  return `/media/${key}`
}
