import type { Repositories } from '../db/types.js'

export const ARRIVAL_BUCKET_MS = 5 * 60_000
/** A day of 5-minute buckets: a chart wider than that says nothing more at a door. */
const MAX_BUCKETS = 288

export type DoorStats = {
  eventId: number
  expected: number | null
  checkedIn: number
  percent: number | null
  inside: number
  refused: { notAllowed: number; noReentry: number; notOnList: number; notPaid: number }
  perType: Array<{ ticketType: string; expected: number; checkedIn: number }>
  arrivals: Array<{ at: string; count: number }>
  since: string | null
}

/**
 * The event's numbers for its doors, from the database (every station, every gateway): guests
 * expected (null: no guest list) and checked in (guests with a check-in; chips at an event without a
 * list), the percentage, inside now (checked in and not gone out), refusals per reason, per ticket
 * type, and arrivals (new check-ins, not re-entries) per 5 minutes from the first check-in's bucket to
 * now's, empty buckets included so a chart shows the quiet minutes too.
 */
export async function doorStats(store: Repositories, eventId: number, now: number): Promise<DoorStats> {
  const [counts, expected, refusals, typesExpected, typesIn] = await Promise.all([
    store.checkIns.doorCounts(eventId),
    store.attendees.countEvent(eventId),
    store.doorLog.refusals(eventId),
    store.attendees.perType(eventId),
    store.checkIns.perTicketType(eventId),
  ])
  const hasList = expected > 0
  const checkedIn = checkedInOf(counts, expected)
  const inType = new Map(typesIn.map((t) => [t.ticketType, t.checkedIn]))
  return {
    eventId,
    expected: hasList ? expected : null,
    checkedIn,
    percent: hasList ? Math.round((checkedIn / expected) * 1000) / 10 : null,
    inside: counts.inside,
    refused: { notAllowed: refusals.not_allowed, noReentry: refusals.no_reentry, notOnList: refusals.not_on_list, notPaid: refusals.not_paid },
    perType: typesExpected.map((t) => ({ ticketType: t.ticketType, expected: t.expected, checkedIn: inType.get(t.ticketType) ?? 0 })),
    arrivals: counts.first === null ? [] : await arrivals(store, eventId, counts.first, now),
    since: counts.first === null ? null : new Date(counts.first).toISOString(),
  }
}

/**
 * Who counts as checked in: the guests with a check-in when the event has a guest list (`expected`
 * guests), else every check-in (chips at an event without a list). The door's numbers and the
 * console's list of events count the same way.
 */
export const checkedInOf = (counts: { checkedIn: number; withAttendee: number }, expected: number): number =>
  expected > 0 ? counts.withAttendee : counts.checkedIn

async function arrivals(store: Repositories, eventId: number, first: number, now: number): Promise<DoorStats['arrivals']> {
  const last = Math.max(now, first) - (Math.max(now, first) % ARRIVAL_BUCKET_MS)
  const start = Math.max(first - (first % ARRIVAL_BUCKET_MS), last - (MAX_BUCKETS - 1) * ARRIVAL_BUCKET_MS)
  const counted = new Map((await store.checkIns.arrivals(eventId, ARRIVAL_BUCKET_MS, start)).map((b) => [b.at, b.count]))
  const buckets: DoorStats['arrivals'] = []
  for (let at = start; at <= last; at += ARRIVAL_BUCKET_MS) buckets.push({ at: new Date(at).toISOString(), count: counted.get(at) ?? 0 })
  return buckets
}
