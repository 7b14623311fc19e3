/*
 * The gateway's own readers, as the gateway's library sees them: the in-process station
 * (station/inProcessStation.ts) owns them and reads taps from them; a provisioning run from the
 * console (src/console/consoleProvisioning.ts) borrows them for a while, so a card placed there
 * is provisioned instead of read as a tap. This module imports nothing: the station implements
 * it, the console uses it, and neither imports the other.
 */
import type { CardSession } from './cardSession.js'

/** One reader of the gateway, as the console lists it. */
export type LocalReader = { name: string; cardPresent: boolean }

/**
 * Gives the readers back: cards placed from now on are taps again. Resolves once every card
 * already handed to the borrower is done with, so a card is never cut off mid-write.
 */
export type GiveBack = () => Promise<void>

/** What the gateway knows of its readers, and how to borrow them. */
export interface LocalReaders {
  /** The team whose station the readers are (its taps are verified for that team). */
  readonly teamId: number
  /** The readers attached now, sorted by name. */
  readers(): LocalReader[]
  /**
   * Until given back, every card placed on any of the readers goes to `onCard` instead of the tap
   * path, one card at a time in the order they were placed. One borrower at a time.
   *
   * @throws ReadersBusyError when they are borrowed already
   */
  borrow(onCard: (card: CardSession) => Promise<void>): GiveBack
}

/** The readers are lent to someone else already (one borrower at a time). */
export class ReadersBusyError extends Error {
  override name = 'ReadersBusyError'
  constructor(message = 'the readers are borrowed already') {
    super(message)
  }
}

/** The gateway's readers now: the station's, or why there are none (turned off, no pcscd, not started yet…). */
export type LocalReadersState = { readers: LocalReaders; unavailable: null } | { readers: null; unavailable: string }

/**
 * Where the gateway keeps its readers once its station has started (server.ts starts it in the
 * background, after the app is built): the app reads it at each request.
 */
export type LocalReadersSlot = {
  get(): LocalReadersState
  set(readers: LocalReaders): void
  /** No readers, and why (one sentence a console can show). */
  off(why: string): void
}

/**
 * A slot with no readers yet.
 *
 * @example
 * const slot = localReadersSlot('the in-process station is starting')
 * slot.set(station) // once it runs; slot.off('pcscd is not running') when it cannot
 */
export function localReadersSlot(why: string): LocalReadersSlot {
  let state: LocalReadersState = { readers: null, unavailable: why }
  return {
    get: () => state,
    set: (readers) => void (state = { readers, unavailable: null }),
    off: (reason) => void (state = { readers: null, unavailable: reason }),
  }
}
