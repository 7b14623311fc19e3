import { z } from 'zod'
import { searchText } from '../db/attendees.js'
import { Attendee } from './attendees.js'
import { ChipUid, IntId, Iso, Success } from './common.js'

// The kiosk's HTTP shapes (POST /station/taps' `checkIn`, /kiosk/staff/*). The WebSocket's
// messages are typed in src/wire/feedProtocol.ts; the feed events here mirror its StationEvent.

const TxStatus = z.enum(['queued', 'sent', 'replaced', 'confirmed', 'failed'])
const Mode = z.enum(['checkin', 'bind', 'exit', 'claim', 'closed'])

/** The states a door answers with (src/door): see src/wire/feedProtocol.ts KioskState. */
export const DoorState = z.enum(['accepted', 'already', 'reentry', 'no_reentry', 'not_allowed', 'not_on_list', 'not_paid', 'exit', 'not_inside', 'bound', 'bind_taken', 'bind_waiting'])

export const AttendeeView = z
  .object({
    id: z.number().int(),
    displayName: z.string().meta({ description: "The first name, or the whole name when the event's publicNames is 'full'" }),
    ticketType: z.string(),
    needsAttention: z.boolean(),
    name: z.string().optional().meta({ description: 'Staff only, as the rest below' }),
    email: z.string().nullable().optional(),
    ticketCode: z.string().optional(),
    note: z.string().nullable().optional(),
  })
  .meta({ id: 'AttendeeView' })

export const CheckInSummary = z
  .object({
    id: z.number().int(),
    eventId: z.number().int(),
    eventName: z.string(),
    at: Iso,
    stationId: z.number().int(),
    stationName: z.string(),
    manual: z.boolean(),
    attendee: AttendeeView.nullable().optional().meta({ description: 'The guest (events with a guest list)' }),
    leftAt: Iso.nullable().optional().meta({ description: 'The guest went out then (an exit door); null while inside' }),
    tx: z.object({ id: z.number().int(), status: TxStatus, hash: z.string().nullable() }).nullable().meta({ description: 'The guestbook mint; null while the token waits for a wallet' }),
  })
  .meta({ id: 'CheckIn' })

export const TapCheckIn = z
  .object({
    state: DoorState.meta({
      description:
        'accepted: a new check-in (or a test tap); already: the chip (or guest) was checked in to this event before; the door states of an event with a guest list, a bind or an exit door: see the README',
    }),
    test: z.boolean().meta({ description: 'A test-chip tap: shown, never counted' }),
    checkIn: CheckInSummary.nullable(),
    attendee: AttendeeView.optional().meta({ description: "The guest of the tap, as the public screen shows them" }),
  })
  .meta({ description: "At a station in check-in mode (or in a test-chip window): what the tap did. Absent at a station without a mode." })

const KioskCounts = z.object({
  event: z.number().int().meta({ description: "Chips checked in to the station's event (every station)" }),
  station: z.number().int().meta({ description: 'Check-ins made at this station for its event' }),
  last5Minutes: z.number().int(),
  claimed: z.number().int().meta({ description: 'Claims accepted at this station' }),
  expected: z.number().int().nullable().optional().meta({ description: "Guests on the event's list (present when it has one)" }),
  inside: z.number().int().optional().meta({ description: 'Checked in and not gone out, every door of the event' }),
  refused: z.number().int().optional().meta({ description: "Taps the event's doors turned away" }),
})

const KioskStation = z.object({
  id: z.number().int(),
  name: z.string(),
  mode: Mode.nullable(),
  event: z.object({ id: z.number().int(), name: z.string() }).nullable(),
})

const StationEvent = z.object({
  id: z.number().int(),
  stationId: z.number().int(),
  kind: z.enum(['tap', 'reader', 'tx', 'mode', 'staff', 'undo', 'claim']),
  at: Iso,
  data: z.record(z.string(), z.unknown()).meta({ description: 'As src/wire/feedProtocol.ts StationEventData[kind]' }),
})

export const StaffSessionBody = z.object({ pin: z.string().regex(/^\d{4,12}$/, 'A staff PIN is 4 to 12 digits') }).strict()
export const StaffSessionResponse = Success.extend({ session: z.string().meta({ description: 'Send as x-staff-session' }), expiresAt: Iso })

/** The staff PIN's refusals carry what the page shows: tries left, or until when it is locked. */
export const PinErrorBody = z.object({
  success: z.literal(false),
  error: z.string(),
  message: z.string(),
  triesLeft: z.number().int().optional(),
  lockedUntil: Iso.optional(),
})

export const StaffModeBody = z
  .object({
    mode: Mode,
    eventId: IntId.optional().meta({ description: "The station's own event, if given: a staff PIN never changes the event (403 staff_event_locked; the operator's `tapgate station set --event`)" }),
  })
  .strict()
export const StaffModeResponse = Success.extend({ station: KioskStation })

export const ManualCheckInBody = z.object({ uid: ChipUid }).strict()
export const ManualCheckInResponse = Success.extend({ state: DoorState, checkIn: CheckInSummary.nullable() })

// ---- the door (issue 19) ----

export const StaffAttendee = Attendee.omit({ wallet: true, createdAt: true, updatedAt: true })
  .extend({
    chips: z.array(z.string()).meta({ description: 'UIDs of the chips bound to the guest now' }),
    checkIn: CheckInSummary.nullable(),
    inside: z.boolean().meta({ description: 'Checked in and not gone out' }),
  })
  .meta({ id: 'StaffAttendee' })

/** Staff search: at least this many characters (a tablet left on a desk must not list the guests). */
export const SEARCH_MIN_CHARS = 2

/**
 * Whether a staff search term is long enough, counted as the search reads it: accents folded off
 * and blanks trimmed. Counted as typed, two combining accents (or `a` and one) passed, and folded to
 * nothing they matched every guest.
 */
export const searchTermLongEnough = (q: string): boolean => [...searchText(q).trim()].length >= SEARCH_MIN_CHARS

const SEARCH_TOO_SHORT = `Type ${SEARCH_MIN_CHARS} characters at least of a name, an email or a ticket code (accents and blanks do not count)`

/**
 * `min` puts minLength in the document (a term shorter as typed is shorter folded too, except a
 * ligature, which the document may refuse); the refine is the rule, and names the stable code
 * `query_too_short` the error handler answers with.
 */
export const AttendeeSearchQuery = z.object({
  q: z
    .string()
    .max(200)
    .min(SEARCH_MIN_CHARS, { error: SEARCH_TOO_SHORT })
    .refine(searchTermLongEnough, { error: SEARCH_TOO_SHORT, params: { code: 'query_too_short' } })
    .meta({ description: `Name, email or ticket code: ${SEARCH_MIN_CHARS} characters at least once accents and blanks are left out` }),
})
export const AttendeeSearchResponse = Success.extend({ attendees: z.array(StaffAttendee).meta({ description: 'By name, 20 at most' }) })

export const AttendeeCheckInBody = z.object({ attendeeId: IntId }).strict()
export const AttendeeCheckInResponse = Success.extend({ state: DoorState, checkIn: CheckInSummary.nullable() })

export const BindBody = z.union([
  z.object({ ticketCode: z.string().trim().min(1).max(200), rebind: z.boolean().optional() }).strict(),
  z.object({ attendeeId: IntId, rebind: z.boolean().optional() }).strict(),
])
export const BindResponse = Success.extend({
  armed: z.object({ attendee: StaffAttendee, rebind: z.boolean(), expiresAt: Iso.meta({ description: "The door's next tap binds until then (2 minutes)" }) }),
})

export const DoorStatsResponse = Success.extend({
  stats: z.object({
    eventId: z.number().int(),
    expected: z.number().int().nullable().meta({ description: 'Guests on the list; null: the event has no guest list' }),
    checkedIn: z.number().int(),
    percent: z.number().nullable(),
    inside: z.number().int(),
    refused: z.object({ notAllowed: z.number().int(), noReentry: z.number().int(), notOnList: z.number().int(), notPaid: z.number().int() }),
    perType: z.array(z.object({ ticketType: z.string(), expected: z.number().int(), checkedIn: z.number().int() })),
    arrivals: z.array(z.object({ at: Iso.meta({ description: 'Start of a 5-minute bucket' }), count: z.number().int() })),
    since: Iso.nullable().meta({ description: 'The first check-in' }),
  }),
})

export const UndoResponse = Success.extend({
  checkInId: z.number().int(),
  tokenStays: z.boolean().meta({ description: 'The check-in had a mint queued or mined: that token stays with the attendee' }),
})

export const RetryBody = z.object({ txId: IntId }).strict()
export const RetryResponse = Success.extend({ txId: z.number().int(), txnHash: z.string() })

export const TestChipBody = z.object({ seconds: z.number().int().min(1).max(600) }).strict()
export const TestChipResponse = Success.extend({ testUntil: Iso })

export const StaffStateResponse = Success.extend({
  station: KioskStation,
  counts: KioskCounts,
  testUntil: Iso.nullable(),
  team: z.object({
    events: z.array(z.object({ eventId: z.number().int(), name: z.string(), checkedIn: z.number().int() })),
    stations: z.array(
      z.object({
        stationId: z.number().int(),
        name: z.string(),
        mode: Mode.nullable(),
        eventId: z.number().int().nullable(),
        checkedIn: z.number().int(),
        last5Minutes: z.number().int(),
      }),
    ),
  }),
  health: z.object({
    reader: z.object({ readers: z.array(z.string()), cardPresent: z.boolean(), pcscd: z.boolean() }).nullable(),
    chains: z.array(z.object({ chainId: z.number().int(), reachable: z.boolean().nullable() })),
    outboxPending: z.number().int(),
    kiosksConnected: z.number().int(),
  }),
  claims: z
    .array(
      z.object({
        product: z.string().meta({ description: "The token's (or the event's) name" }),
        kind: z.enum(['token', 'guestbook']),
        tokenId: z.string().nullable(),
        eventId: z.number().int().nullable(),
        taps: z.number().int().meta({ description: 'Claims opened by taps' }),
        claimed: z.number().int(),
        registered: z.number().int().meta({ description: '2-tap first taps that registered an address' }),
        linksShown: z.number().int(),
        linksOpened: z.number().int(),
        linksUsed: z.number().int(),
        linksExpired: z.number().int(),
        expired: z.number().int(),
      }),
    )
    .meta({ description: 'Claims at this station per product (claim mode) or event (collect later)' }),
  recent: z.array(StationEvent),
})

