/*
 * How the console words what the API answers in codes: a station's mode, its reader's state, a
 * guest list's problems, a product's owner and a provisioned chip's outcome.
 * One place, so the overview and the stations tab say the same thing.
 */
import type { StationMode } from '../../../wire/feedProtocol.js'
import type { Product, ProvisioningCard, ReaderState } from './consoleApi.js'

const MODES: Record<StationMode, string> = {
  checkin: 'Check-in',
  bind: 'Bind wristbands',
  exit: 'Exit',
  claim: 'Claim',
  closed: 'Closed',
}

export const modeLabel = (mode: StationMode | null) => (mode === null ? 'No mode' : MODES[mode])

/**
 * The reader as the station last reported it, and a state for the stylesheet: `ready` (a reader
 * is there), `problem` (none, or PC/SC lost) or `unknown` (the station has not reported yet).
 */
export function readerWords(reader: ReaderState | null): { text: string; state: 'ready' | 'problem' | 'unknown' } {
  if (reader === null) return { text: 'No report yet', state: 'unknown' }
  if (reader.pcsc === 'down') return { text: 'PC/SC service lost', state: 'problem' }
  if (reader.readers.length === 0) return { text: 'No reader connected', state: 'problem' }
  return { text: `${reader.readers.join(', ')}${reader.cardPresent ? ' (card on it)' : ''}`, state: 'ready' }
}

/** One problem of a refused guest list: its line in the file and column when the gateway names them. */
export type ImportProblem = { line: number | null; column: string | null; message: string }

/**
 * A refused guest list's `errors` (`"line 3, Email": "…"`, `"line 3": "…"` for a whole row,
 * `header` for the header row, `more` for problems past the listed ones) as rows for a table, in
 * the file's order.
 *
 * @example importProblems({ 'line 3, Email': '"x" is not an email address' }) // [{ line: 3, column: 'Email', message: '"x" is not an email address' }]
 */
export function importProblems(errors: Record<string, string>): ImportProblem[] {
  const problems = Object.entries(errors).map(([key, message]): ImportProblem => {
    const at = /^line (\d+)(?:, (.+))?$/.exec(key)
    if (at) return { line: Number(at[1]), column: at[2] ?? null, message }
    if (key === 'header') return { line: 1, column: null, message: `The header row: ${message}` }
    return { line: null, column: null, message: key === 'more' ? message : `${key}: ${message}` }
  })
  // Lines in order; what has none (the "more" line) last.
  const order = (p: ImportProblem) => p.line ?? Number.MAX_SAFE_INTEGER
  return problems.sort((a, b) => order(a) - order(b))
}

/**
 * An address or hash cut to its ends, as wallets show them: enough to recognise, short enough for a phone.
 *
 * @example shortHex('0x5FbDB2315678afecb367f032d93F642f64180aa3') // '0x5FbD…0aa3'
 */
export const shortHex = (hex: string) => (hex.length > 13 ? `${hex.slice(0, 6)}…${hex.slice(-4)}` : hex)

/** A product's owner on chain: its address shortened, not minted yet, or not known because the chain did not answer. */
export function ownerWords(owner: Product['owner']): string {
  if (owner.state === 'owned' && owner.address) return shortHex(owner.address)
  if (owner.state === 'not_minted') return 'Not minted yet'
  return 'Owner unknown (chain unreachable)'
}

const OUTCOMES: Record<ProvisioningCard['outcome'], string> = { provisioned: 'Provisioned', resumed: 'Resumed', refused: 'Refused' }

/** A provisioned chip's outcome as a word. */
export const outcomeLabel = (outcome: ProvisioningCard['outcome']) => OUTCOMES[outcome]
