import type { AttendeeRow } from '../db/attendees.js'
import type { GuestbookEventRow } from '../db/guestbook.js'
import type { AttendeeView } from '../wire/feedProtocol.js'

/**
 * What the public door screen calls a guest: the first word of the name (a name on a screen in a
 * queue is enough, and a surname is not the queue's business), or the whole name when the event says so.
 *
 * @example
 * displayName('Ada Lovelace', 'first') // 'Ada'
 */
export function displayName(name: string, publicNames: GuestbookEventRow['publicNames']): string {
  const trimmed = name.trim()
  if (publicNames === 'full') return trimmed
  return trimmed.split(/\s+/u)[0] ?? trimmed
}

/**
 * What staff call a guest: the name, or for a ticket nobody has named yet (a pretix or Tito list, issue
 * 25) its ticket type and code, which is what the guest can show at the door.
 *
 * @example
 * staffName({ name: '', ticketType: 'Conference Ticket', ticketCode: 'Q7PFR-3' }) // 'Conference Ticket · Q7PFR-3'
 */
export function staffName(row: Pick<AttendeeRow, 'name' | 'ticketType' | 'ticketCode'>): string {
  return row.name.trim() !== '' ? row.name : `${row.ticketType} · ${row.ticketCode}`
}

/**
 * A guest as a feed row carries them: everything for staff; `publicAttendee` (src/wire/feedProtocol.ts)
 * keeps only the id, display name, ticket type and attention flag for the public screen.
 */
export function attendeeView(row: AttendeeRow, event: Pick<GuestbookEventRow, 'publicNames'>): AttendeeView {
  return {
    id: row.id,
    // The public screen never shows a ticket code (it is what gets someone in): a nameless guest is their ticket type there.
    displayName: row.name.trim() === '' ? row.ticketType : displayName(row.name, event.publicNames),
    ticketType: row.ticketType,
    needsAttention: row.needsAttention === 1,
    name: staffName(row),
    email: row.email,
    ticketCode: row.ticketCode,
    note: row.note,
  }
}
