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
 * A guest as a feed row carries them: everything for staff; `publicAttendee` (src/wire/feedProtocol.ts)
 * keeps only the id, display name, ticket type and attention flag for the public screen.
 */
export function attendeeView(row: AttendeeRow, event: Pick<GuestbookEventRow, 'publicNames'>): AttendeeView {
  return {
    id: row.id,
    displayName: displayName(row.name, event.publicNames),
    ticketType: row.ticketType,
    needsAttention: row.needsAttention === 1,
    name: row.name,
    email: row.email,
    ticketCode: row.ticketCode,
    note: row.note,
  }
}
