import type { GuestbookEventRow } from '../db/guestbook.js'
import type { Repositories, Store } from '../db/types.js'
import { ConflictError, NotFoundError, ValidationError } from '../errors.js'
import type { FormatId } from './guestListFormats.js'
import { parseGuestList, type GuestListEntry, type RowWarning, type SkippedRow } from './parseGuestList.js'
import { MAX_LISTED_ERRORS } from './readCsv.js'

export type ImportAttendeesParameters = {
  eventId: number
  /** The API key's team: another team's event is not found. Undefined: the CLI, on the gateway's own machine. */
  teamId?: number
  /** The file as read (bytes or text). */
  input: Uint8Array | string
  /** `--map name=COL,ticket=COL,…`: read these columns instead of detecting the tool. */
  map?: string
  now: number
}

export type ImportAttendeesReport = {
  eventId: number
  format: FormatId
  formatLabel: string
  /** Guests in the file (rows not skipped): each is now on the list. */
  imported: number
  inserted: number
  updated: number
  /** Rows the tool marks as admitting no one (cancelled, void, declined): not imported, nothing on the list changed for them. */
  skipped: SkippedRow[]
  chipsBound: number
  warnings: RowWarning[]
  /** Guests imported whose order is not paid (the door refuses them not_paid unless the event admits them). */
  unpaid: number
}

const eventNotFound = () => new NotFoundError('event_not_found', 'No guestbook event matches')

/** The event a guest list belongs to: the team's own when a team asks. */
export async function attendeeEvent(store: Repositories, eventId: number, teamId: number | undefined): Promise<GuestbookEventRow> {
  const event = await store.guestbook.getEvent(eventId)
  if (!event || (teamId !== undefined && event.teamId !== teamId)) throw eventNotFound()
  return event
}

/**
 * Imports a guest list file into an event: every row checked first (parseGuestList), then one
 * transaction that inserts new ticket codes, updates known ones in place and binds the file's chips.
 * A re-import never removes a guest the file leaves out, nor a check-in, nor a chip; an error in any
 * row imports nothing.
 *
 * @throws ValidationError as parseGuestList; `csv_rows_invalid` also for a chip that is not the event team's, or is bound to another guest
 * @throws NotFoundError `event_not_found`
 * @example
 * const report = await importAttendees(store, { eventId: 3, input: fs.readFileSync('pretix.csv'), now: Date.now() })
 */
export async function importAttendees(store: Store, p: ImportAttendeesParameters): Promise<ImportAttendeesReport> {
  // The event first: a file for an event that is not there is a 404 whatever it holds.
  await attendeeEvent(store, p.eventId, p.teamId)
  const list = parseGuestList(p.input, { map: p.map })
  return store.tx(async (tx) => {
    const event = await attendeeEvent(tx, p.eventId, p.teamId)
    await checkChips(tx, event, list.entries)
    const { inserted, updated } = await tx.attendees.upsertMany(
      event.id,
      list.entries.map(({ name, email, ticketType, ticketCode, wallet, note, needsAttention, paid }) => ({ name, email, ticketType, ticketCode, wallet, note, needsAttention, paid })),
      p.now,
    )
    let chipsBound = 0
    for (const entry of list.entries) {
      if (entry.chipUid === null) continue
      const attendee = (await tx.attendees.findByCode(event.id, entry.ticketCode))!
      const bound = await tx.attendeeChips.findByChip(event.id, entry.chipUid)
      if (bound?.attendeeId === attendee.id) continue
      // checkChips saw it free in this transaction; only a concurrent bind door can have taken it since.
      if ((await tx.attendeeChips.bind({ eventId: event.id, attendeeId: attendee.id, chipUid: entry.chipUid, stationId: null, now: p.now })) === null)
        throw new ConflictError('chip_bound', `Chip ${entry.chipUid} (line ${entry.line}) was bound at a door during the import; nothing was imported: import again`)
      chipsBound++
    }
    return {
      eventId: event.id,
      format: list.format,
      formatLabel: list.formatLabel,
      imported: list.entries.length,
      inserted,
      updated,
      skipped: list.skipped,
      chipsBound,
      warnings: list.warnings,
      unpaid: list.entries.filter((entry) => entry.paid === false).length,
    }
  })
}

/** A file's chip must be one of the event team's chips, and bound to no other guest of the event. */
async function checkChips(tx: Repositories, event: GuestbookEventRow, entries: GuestListEntry[]): Promise<void> {
  const errors: Record<string, string> = {}
  let count = 0
  for (const entry of entries) {
    if (entry.chipUid === null) continue
    const fail = (message: string) => {
      count++
      if (Object.keys(errors).length < MAX_LISTED_ERRORS) errors[`line ${entry.line}, ${entry.chipColumn}`] = message
    }
    const chip = await tx.chips.get(entry.chipUid)
    if (!chip || chip.teamId !== event.teamId) {
      fail(`Chip ${entry.chipUid} is not one of this event's team's chips (register it first: tapgate import)`)
      continue
    }
    const bound = await tx.attendeeChips.findByChip(event.id, entry.chipUid)
    if (!bound) continue
    const holder = await tx.attendees.get(bound.attendeeId)
    if (holder && holder.ticketCode !== entry.ticketCode)
      fail(`Chip ${entry.chipUid} is bound to ${holder.name} (ticket ${holder.ticketCode}); rebind it at the door, or leave it out`)
  }
  if (count > 0) throw new ValidationError(`${count} problem${count === 1 ? '' : 's'} with the file's chips; nothing was imported`, errors, 'csv_rows_invalid')
}
