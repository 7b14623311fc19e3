import type { Effect } from './effects.js'
import type { Repositories, StoreChannel, StoreLog } from './types.js'

/*
 * What a commit announces, told by the store rather than by each caller (issue 24): the repositories
 * know when a write is one a listener waits for (a station event appended: the kiosks' feed; a chain
 * transaction queued: the relayer), so the store registers the notification on the writing
 * transaction's own after-commit effects. A savepoint or group-commit job that rolls back drops its
 * own, as it drops every effect; a lone statement (autocommitted) announces once it has run.
 */

type Listener = (payload: string) => void

/** This process's listeners, per channel. */
export type Notifications = {
  emit(channel: StoreChannel, payload: string): void
  /** @returns stops listening */
  listen(channel: StoreChannel, onNotify: Listener): () => void
}

export function createNotifications(log: StoreLog): Notifications {
  const listeners = new Map<StoreChannel, Set<Listener>>()
  return {
    emit(channel, payload) {
      for (const listener of listeners.get(channel) ?? []) {
        // One listener that throws neither stops the others nor reaches the committed transaction.
        try {
          listener(payload)
        } catch (error) {
          log.error({ err: error, channel }, 'a store notification listener failed')
        }
      }
    },
    listen(channel, onNotify) {
      const set = listeners.get(channel) ?? new Set()
      listeners.set(channel, set)
      // Each subscription its own entry, so the same function listening twice stops once per stop.
      const entry: Listener = (payload) => onNotify(payload)
      set.add(entry)
      return () => void set.delete(entry)
    },
  }
}

/** Registers a notification (`key`: its channel and payload) once: what a commit says, not how many rows it wrote. */
export type Register = (key: string, effect: Effect) => void

const keys = new WeakMap<Effect, string>()

/** A transaction's (or savepoint's, or job's) list of effects: a notification already on it is not added again. */
export function registerOnce(effects: Effect[], key: string, effect: Effect): void {
  if (effects.some((e) => keys.get(e) === key)) return
  keys.set(effect, key)
  effects.push(effect)
}

/**
 * The same repositories, with the two announcing writes wrapped: once `stationEvents.append` or
 * `chainTxs.insert` has succeeded, `register` gets the notification to run after the commit (a
 * transaction handle: on its effects, once per channel and payload; the store's own autocommitting
 * methods: run it now).
 */
export function announcing<R extends Pick<Repositories, 'stationEvents' | 'chainTxs'>>(repositories: R, notifications: Notifications, register: Register): R {
  const { stationEvents, chainTxs } = repositories
  const append: typeof stationEvents.append = async (stationId, kind, data, now) => {
    const id = await stationEvents.append(stationId, kind, data, now)
    register(`tapgate_feed:${stationId}`, () => notifications.emit('tapgate_feed', String(stationId)))
    return id
  }
  const insert: typeof chainTxs.insert = async (row) => {
    const id = await chainTxs.insert(row)
    register(`tapgate_outbox:${row.chainId}`, () => notifications.emit('tapgate_outbox', String(row.chainId)))
    return id
  }
  return { ...repositories, stationEvents: { ...stationEvents, append }, chainTxs: { ...chainTxs, insert } }
}
