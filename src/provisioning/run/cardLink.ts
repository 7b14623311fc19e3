import { performance } from 'node:perf_hooks'
import { type ApduExchange, CardRemovedError, type CardSession } from '../../card/cardSession.js'
import type { Exchange } from '../secureMessaging.js'

/** One step as the journal keeps it: name, status word, time; never a byte of data. */
export type LinkStep = { step: string; sw: string | null; ms: number; ok: boolean; detail: string | null }

/**
 * The card as the provisioning run sees it: `CardSession.transmit` plus the
 * complete transcript (for `--record` only: given the old keys, it reveals the
 * new ones) and one step per exchange (status word and milliseconds, which is
 * all that reaches the journal).
 */
export class CardLink {
  readonly transcript: ApduExchange[] = []
  readonly steps: LinkStep[] = []

  /** Called after each exchange: the run points it at its journal once the run has an id. */
  onStep: (step: LinkStep) => void = () => {}

  constructor(readonly card: CardSession) {}

  /** Sends one APDU; the answer's status word is journaled, never its data. */
  async transmit(step: string, apdu: Buffer): Promise<Buffer> {
    const started = performance.now()
    let response: Buffer
    try {
      response = await this.card.transmit(apdu)
    } catch (error) {
      this.#step({ step, sw: null, ms: performance.now() - started, ok: false, detail: (error as Error).name })
      throw error
    }
    const ms = performance.now() - started
    if (response.length < 2) {
      // Over pcscd a card pulled mid-command answers with 0 bytes (the in-process reader throws
      // CardRemovedError): the same event, so the run stops as pulled and resumes on the next tap.
      this.#step({ step, sw: null, ms, ok: false, detail: 'CardRemovedError' })
      throw new CardRemovedError()
    }
    this.transcript.push({ command: apdu.toString('hex').toUpperCase(), response: response.toString('hex').toUpperCase(), ms: Math.round(ms * 1000) / 1000 })
    const sw = response.length >= 2 ? response.subarray(response.length - 2).toString('hex').toUpperCase() : null
    this.#step({ step, sw, ms, ok: sw === '9100' || sw === '9000' || sw === '91AF' || sw === '9190', detail: null })
    return response
  }

  /** Sends an exchange of the command layer and parses the answer. */
  async run<T>(step: string, exchange: Exchange<T>): Promise<T> {
    return exchange.parse(await this.transmit(step, exchange.apdu))
  }

  #step(s: LinkStep): void {
    const step = { ...s, ms: Math.round(s.ms) }
    this.steps.push(step)
    this.onStep(step)
  }
}
