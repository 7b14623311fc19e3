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

/** The gateway's answer to a tap. */
export type TapVerdict =
  | { accepted: true; refId: string; uid: string; counter: number | null; mode: 'aes' | 'lrp' | 'ntag21x' }
  | { accepted: false; reason: string; message: string; detail?: string }

/** Where a station sends its taps: the gateway in this process, or one over WebSocket. */
export interface TapSink {
  submit(tap: StationTap): Promise<TapVerdict>
  close(): Promise<void>
}
