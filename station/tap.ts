/** What a station read from a chip: sent to the gateway (POST /station/taps or its WebSocket). */
export type StationTap = {
  /** The UID the reader saw over RF (FF CA 00 00 00), 14 uppercase hex digits. */
  rfUid: string
  /** The NDEF URI record's URL, exactly as read. */
  url: string
  /** ntag424: ISO-DEP, read through the NDEF application; ntag21x: pages read with FF B0. */
  chip: 'ntag424' | 'ntag21x'
  readerName: string
  /** ISO 8601, when the card was read. */
  readAt: string
}

/**
 * What a station's readers are doing, as it reports it to the gateway's feed (the kiosk's reader
 * state); the gateway's `reader` event data (src/wire/feedProtocol.ts ReaderEventData).
 */
export type ReaderStatus = {
  /** The attached readers' names; empty: no reader. */
  readers: string[]
  /** A card rests on a reader now. */
  cardPresent: boolean
  /** pcscd answers (always true for sources without pcscd: virtual readers, fixtures). */
  pcscd: boolean
}

/** The gateway's answer to a tap. */
export type TapVerdict =
  | { accepted: true; refId: string; uid: string; counter: number | null; mode: 'aes' | 'lrp' | 'ntag21x' }
  | { accepted: false; reason: string; message: string; detail?: string }

/** Where a station sends its taps: the gateway in this process, or one over WebSocket. */
export interface TapSink {
  submit(tap: StationTap): Promise<TapVerdict>
  /** The readers' status changed (and once at start): the latest replaces any earlier one. */
  reportStatus?(status: ReaderStatus): void
  /** A card left mid-read (nothing was submitted). Lost when the gateway cannot be told now. */
  reportPulled?(event: { readerName: string; at: string }): void
  close(): Promise<void>
}
