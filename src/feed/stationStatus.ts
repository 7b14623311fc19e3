import type { Store } from '../db/store.js'
import type { ReaderEventData } from '../wire/feedProtocol.js'

const sameStatus = (a: ReaderEventData, b: ReaderEventData): boolean =>
  a.cardPresent === b.cardPresent && a.pcscd === b.pcscd && a.readers.length === b.readers.length && a.readers.every((name, i) => name === b.readers[i])

/**
 * Records a station's reader status in its feed: a `reader` event, only when it differs from the
 * station's last one. A station sends its status on every (re)connect, so the same status arriving
 * again (a gateway restart, a flapping link) adds nothing a kiosk would show.
 *
 * @returns the new event's id, or null when nothing changed
 * @example
 * recordReaderStatus(store, { stationId, status: { readers: ['ACR122U'], cardPresent: false, pcscd: true }, now: Date.now() })
 */
export function recordReaderStatus(store: Store, p: { stationId: number; status: ReaderEventData; now: number }): Promise<number | null> {
  // Reader names sorted: two stations listing the same readers in another order have the same status.
  const status: ReaderEventData = { readers: [...p.status.readers].sort(), cardPresent: p.status.cardPresent, pcscd: p.status.pcscd }
  return store.tx(async (tx) => {
    const last = await tx.stationEvents.lastOfKind(p.stationId, 'reader')
    if (last && sameStatus(last.data, status)) return null
    return tx.stationEvents.append(p.stationId, 'reader', status, p.now)
  })
}

/**
 * Records a card pulled mid-read: a `tap` event with state `retry` ("hold it on the reader a
 * little longer"). Nothing was submitted, so there is no UID, no ref and no count.
 *
 * @example
 * recordPulledCard(store, { stationId, readerName: 'ACR122U', now: Date.now() })
 */
export function recordPulledCard(store: Store, p: { stationId: number; readerName: string; now: number }): Promise<number> {
  return store.tx((tx) => {
    return tx.stationEvents.append(p.stationId, 'tap', { state: 'retry', uid: null, readerName: p.readerName }, p.now)
  })
}
