/*
 * How the console words what the API answers in codes: a station's mode and its reader's state.
 * One place, so the overview and the stations tab say the same thing.
 */
import type { StationMode } from '../../../wire/feedProtocol.js'
import type { ReaderState } from './consoleApi.js'

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
