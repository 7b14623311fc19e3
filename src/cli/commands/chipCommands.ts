import fs from 'node:fs'
import type { Repositories } from '../../db/store.js'
import type { CardSession } from '../../card/cardSession.js'
import type { ReaderSource } from '../../../station/reader.js'
import { FIXTURE_FORMAT } from '../../../station/fixtures/format.js'
import { CardLink } from '../../provisioning/run/cardLink.js'
import { classifyChip, readChip, type ChipReading, type Verdict } from '../../provisioning/run/inspectChip.js'
import type { CardRecorder } from '../../provisioning/run/provisioningBatch.js'

/*
 * The `tapgate chip inspect | provision | reset` commands above the reader:
 * waiting for cards, the --record transcript, inspect's report. chip.ts parses
 * flags and prints; nothing here prints a key (the run never returns one).
 * It lives in the CLI, not in provisioning/run, because it opens the station's
 * readers and writes the station's fixture format: the CLI is the layer that
 * may compose the gateway's library with the station app. What a batch shares
 * with the console's run (the plan check, one card, the line, the summary) is
 * src/provisioning/run/provisioningBatch.ts.
 */

/** Why `--record` writes a file only its owner can read. */
export const RECORD_WARNING =
  '--record writes every APDU unredacted: given the old keys (factory keys are public), the secure-messaging traffic reveals the new ones. The file is created with mode 0600; keep it with the keys, or record only with test keys.'

/**
 * A JSON Lines transcript in the tap-fixture form: one `tap` event per card. Mode 0600.
 * Always a new file (O_CREAT|O_EXCL): writing over one would lose an earlier transcript, and a
 * symlink planted at the path would have us overwrite (and chmod) its target. Throws EEXIST then.
 */
export class TranscriptRecorder implements CardRecorder {
  readonly #fd: number
  constructor(file: string, note: string) {
    this.#fd = fs.openSync(file, 'wx', 0o600)
    fs.fchmodSync(this.#fd, 0o600)
    fs.writeSync(this.#fd, `${JSON.stringify({ type: 'meta', format: FIXTURE_FORMAT, createdAt: new Date().toISOString(), note })}\n`)
  }
  card(card: CardSession, link: CardLink, error: string | null): void {
    const expect = error === null ? { verdict: null, error: 'not_sent' } : { verdict: null, error: 'read_failed', message: error }
    fs.writeSync(this.#fd, `${JSON.stringify({ type: 'tap', reader: card.readerName, atr: card.atr, at: new Date().toISOString(), exchanges: link.transcript, expect })}\n`)
  }
  close(): void {
    fs.closeSync(this.#fd)
  }
}

/**
 * Waits for cards on the source's readers; calls `onCard` one card at a time. What `onCard` throws
 * (a refusal is an outcome, so only the unexpected) goes to `onError`: swallowed, it left a
 * single-card command waiting for ever.
 */
export function onCards(source: ReaderSource, onCard: (card: CardSession) => Promise<void>, onError: (error: unknown) => void): void {
  let queue = Promise.resolve()
  source.on('reader', (reader) => {
    reader.on('card', (card) => {
      queue = queue.then(() => onCard(card)).catch(onError)
    })
  })
}

export type InspectReport = Omit<ChipReading, 'version'> & { version: ChipReading['version']; verdict: Verdict; mode: 'aes' | 'lrp' | 'unknown' }

/** `chip inspect`: read-only; the verdict against this gateway's journal. */
export async function inspectCard(store: Repositories, card: CardSession, originalityKey?: Uint8Array): Promise<InspectReport> {
  const reading = await readChip(new CardLink(card), originalityKey)
  const run = reading.uid === null ? undefined : await store.provisioning.latest(reading.uid)
  // The mode is known only for our own chips: probing it would spend an authentication.
  return { ...reading, verdict: classifyChip(reading, run), mode: run?.mode ?? 'unknown' }
}
