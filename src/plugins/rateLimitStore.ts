import type { FastifyRateLimitStore } from '@fastify/rate-limit'

type Window = { current: number; startedAt: number }

/**
 * @fastify/rate-limit's store: a fixed window per key, at most `capacity` keys (the least recently
 * counted is forgotten first, as the plugin's own LocalStore does). Ours because the plugin's
 * LocalStore (11.2.0) hands every request the same mutable counter, which the plugin reads only
 * after an `await`: requests arriving in one tick all read the final count, so a burst of 200
 * under a limit of 120 was refused whole instead of 80 of it (seen with 200 parallel claims).
 * Each answer here is a copy taken when the request was counted.
 */
export class SnapshotStore implements FastifyRateLimitStore {
  private readonly windows = new Map<string, Window>()
  private readonly capacity: number

  /** The plugin constructs it with its own options; `cache` is its bound on keys. */
  constructor(
    options: { cache?: number } = {},
    // Read at each call, not captured: a test that fakes Date moves the windows too.
    private readonly now: () => number = () => Date.now(),
  ) {
    this.capacity = options.cache ?? 5000
  }

  incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number): void {
    const now = this.now()
    let window = this.windows.get(key)
    if (!window || window.startedAt + timeWindow <= now) window = { current: 0, startedAt: now }
    window.current++
    // Re-inserted, so the Map's order is the order of last use.
    this.windows.delete(key)
    this.windows.set(key, window)
    if (this.windows.size > this.capacity) this.windows.delete(this.windows.keys().next().value!)
    callback(null, { current: window.current, ttl: window.startedAt + timeWindow - now })
  }

  /** Each route with its own limit counts in a store of its own, as with the plugin's store. */
  child(): FastifyRateLimitStore {
    return new SnapshotStore({ cache: this.capacity }, this.now)
  }
}
