import type { Repositories } from '../db/store.js'
import type { StationEvent } from '../wire/feedProtocol.js'

type Subscriber = { lastId: number; deliver: (events: StationEvent[]) => void }

export type FeedHub = {
  /** After a commit that appended feed rows (the store's `tapgate_feed`): subscribers get them on the next turn of the event loop. */
  changed(): void
  /**
   * Follows one station's feed from after `afterId`: the backlog is delivered at once (in pages),
   * then every new row, in id order, exactly once.
   *
   * @returns unsubscribe
   */
  subscribe(stationId: number, afterId: number, deliver: (events: StationEvent[]) => void): Promise<() => void>
  /** Subscribers per station (the staff view's "kiosks connected"). */
  subscribers(stationId: number): number
  close(): void
}

/**
 * The live side of the feed. The table is the truth: a hub only reads rows after what each
 * subscriber has seen, so a reconnecting kiosk resumes by id, two kiosks see the same rows, and a
 * row appended by another process on the same data dir (the CLI's `station set`, a second server)
 * arrives through the poll, at most `pollMs` later (on PostgreSQL at once: LISTEN). Rows this process
 * appends arrive on `changed()`, which the app subscribes to the store's `tapgate_feed` once.
 */
export async function createFeedHub(
  store: Repositories,
  { pollMs = 500, onError = () => {} }: { pollMs?: number; onError?: (error: unknown) => void } = {},
): Promise<FeedHub> {
  const byStation = new Map<number, Set<Subscriber>>()
  let seenMaxId = await store.stationEvents.maxId()
  let scheduled = false

  const flushStation = async (stationId: number, subscribers: Set<Subscriber>) => {
    let from = Infinity
    for (const s of subscribers) from = Math.min(from, s.lastId)
    for (;;) {
      const events = await store.stationEvents.after(stationId, from, 500)
      if (events.length === 0) return
      for (const s of subscribers) {
        const fresh = events.filter((e) => e.id > s.lastId)
        if (fresh.length === 0) continue
        s.lastId = fresh.at(-1)!.id
        s.deliver(fresh)
      }
      from = events.at(-1)!.id
    }
  }
  let closed = false
  const flush = async () => {
    scheduled = false
    // A changed() just before close() (a station reporting its readers gone on shutdown): the store may be closed by now.
    if (closed) return
    seenMaxId = await store.stationEvents.maxId()
    for (const [stationId, subscribers] of byStation) await flushStation(stationId, subscribers)
  }
  // A timer's rejection would be unhandled (and end the process): a failed read waits for the next tick.
  const flushLogged = () => flush().catch((error: unknown) => onError(error))
  const poll = setInterval(async () => {
    try {
      if (byStation.size > 0 && (await store.stationEvents.maxId()) > seenMaxId) await flush()
    } catch (error) {
      onError(error)
    }
  }, pollMs)
  poll.unref()

  return {
    changed() {
      if (scheduled) return
      scheduled = true
      setImmediate(flushLogged)
    },
    async subscribe(stationId, afterId, deliver) {
      const subscriber: Subscriber = { lastId: afterId, deliver }
      let set = byStation.get(stationId)
      if (!set) byStation.set(stationId, (set = new Set()))
      set.add(subscriber)
      await flushStation(stationId, new Set([subscriber]))
      return () => {
        set.delete(subscriber)
        if (set.size === 0) byStation.delete(stationId)
      }
    },
    subscribers: (stationId) => byStation.get(stationId)?.size ?? 0,
    close() {
      closed = true
      clearInterval(poll)
      byStation.clear()
    },
  }
}
