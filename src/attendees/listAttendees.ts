import type { Repositories } from '../db/types.js'
import { iso } from '../ids.js'
import { attendeeEvent } from './importAttendees.js'

/** A guest as the guest list's page shows them (GET /events/:eventId/attendees, the console's guest list). */
export type ListedAttendee = {
  id: number
  name: string
  email: string | null
  ticketType: string
  ticketCode: string
  wallet: string | null
  note: string | null
  needsAttention: boolean
  paid: boolean
  createdAt: string
  updatedAt: string
}

/** Page size when none is asked for. */
export const ATTENDEE_PAGE_DEFAULT = 50

/**
 * A page of an event's guest list, by name: all of it, or the guests whose name, email or ticket code
 * contains `q` (folded: case and accents), and how many match in all. The API's list and the console's
 * are this one function.
 *
 * @throws NotFoundError event_not_found (no such event, or another team's)
 */
export async function attendeePage(
  store: Repositories,
  p: { eventId: number; teamId: number | undefined; q?: string; limit?: number; offset?: number },
): Promise<{ total: number; attendees: ListedAttendee[] }> {
  const event = await attendeeEvent(store, p.eventId, p.teamId)
  const page = await store.attendees.list(event.id, { query: p.q, limit: p.limit ?? ATTENDEE_PAGE_DEFAULT, offset: p.offset ?? 0 })
  return {
    total: page.total,
    attendees: page.attendees.map((a) => ({
      id: a.id,
      name: a.name,
      email: a.email,
      ticketType: a.ticketType,
      ticketCode: a.ticketCode,
      wallet: a.wallet,
      note: a.note,
      needsAttention: a.needsAttention === 1,
      paid: a.paid === 1,
      createdAt: iso(a.createdAt),
      updatedAt: iso(a.updatedAt),
    })),
  }
}
