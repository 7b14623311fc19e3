import { z } from 'zod'
import { ChipUid, IntId, Iso, Success } from './common.js'

// The kiosk's HTTP shapes (POST /station/taps' `checkIn`, /kiosk/staff/*). The WebSocket's
// messages are typed in src/feed/protocol.ts; the feed events here mirror its StationEvent.

const TxStatus = z.enum(['queued', 'sent', 'replaced', 'confirmed', 'failed'])
const Mode = z.enum(['checkin', 'claim', 'closed'])

export const CheckInSummary = z
  .object({
    id: z.number().int(),
    eventId: z.number().int(),
    eventName: z.string(),
    at: Iso,
    stationId: z.number().int(),
    stationName: z.string(),
    manual: z.boolean(),
    tx: z.object({ id: z.number().int(), status: TxStatus, hash: z.string().nullable() }).nullable().meta({ description: 'The guestbook mint; null while the token waits for a wallet' }),
  })
  .meta({ id: 'CheckIn' })

export const TapCheckIn = z
  .object({
    state: z.enum(['accepted', 'already']).meta({ description: 'accepted: a new check-in (or a test tap); already: the chip was checked in to this event before' }),
    test: z.boolean().meta({ description: 'A test-chip tap: shown, never counted' }),
    checkIn: CheckInSummary.nullable(),
  })
  .meta({ description: "At a station in check-in mode (or in a test-chip window): what the tap did. Absent at a station without a mode." })

const KioskCounts = z.object({
  event: z.number().int().meta({ description: "Chips checked in to the station's event (every station)" }),
  station: z.number().int().meta({ description: 'Check-ins made at this station for its event' }),
  last5Minutes: z.number().int(),
  claimed: z.number().int().meta({ description: 'Claims accepted at this station' }),
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
  data: z.record(z.string(), z.unknown()).meta({ description: 'As src/feed/protocol.ts StationEventData[kind]' }),
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
    eventId: IntId.optional().meta({ description: "A guestbook event of the station's team (required for checkin unless the station has one)" }),
  })
  .strict()
export const StaffModeResponse = Success.extend({ station: KioskStation })

export const ManualCheckInBody = z.object({ uid: ChipUid }).strict()
export const ManualCheckInResponse = Success.extend({ state: z.enum(['accepted', 'already']), checkIn: CheckInSummary })

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

