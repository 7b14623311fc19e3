import type { AttendeeRow } from '../db/attendees.js'
import type { Repositories } from '../db/types.js'
import { ticketCodeCandidates } from './scannedCode.js'

/**
 * Who a chip is at an event: the guest it is bound to now (imported with the list or bound at a bind
 * door; a rebind ends the old binding, so a lost badge finds nobody), or undefined.
 */
export async function chipGuest(store: Repositories, eventId: number, uid: string): Promise<AttendeeRow | undefined> {
  const binding = await store.attendeeChips.findByChip(eventId, uid)
  return binding && (await store.attendees.get(binding.attendeeId))
}

/**
 * The guest a scanned or typed ticket code names at an event: the text as it came, else the code its
 * tool's QR payload carries (a Luma check-in URL's `pk`: scannedCode.ts), or undefined.
 */
export async function scannedGuest(store: Repositories, eventId: number, scanned: string): Promise<AttendeeRow | undefined> {
  for (const code of ticketCodeCandidates(scanned)) {
    const found = await store.attendees.findByCode(eventId, code)
    if (found) return found
  }
  return undefined
}

/** An event has a guest list once it has one attendee; before that its doors check chips in as they always did. */
export async function hasGuestList(store: Repositories, eventId: number): Promise<boolean> {
  return (await store.attendees.countEvent(eventId)) > 0
}

/** The ticket types a door admits (stations.ticket_types, a JSON array), or null: every type. */
export function doorTicketTypes(station: { ticketTypes: string | null }): string[] | null {
  if (station.ticketTypes === null) return null
  const parsed: unknown = JSON.parse(station.ticketTypes)
  return Array.isArray(parsed) ? parsed.filter((t): t is string => typeof t === 'string') : null
}

/** Whether the door lets this ticket type in (case-insensitive: "vip" on the door admits a "VIP" ticket). */
export function admitsTicketType(station: { ticketTypes: string | null }, ticketType: string): boolean {
  const types = doorTicketTypes(station)
  return types === null || types.some((t) => t.toLowerCase() === ticketType.toLowerCase())
}
