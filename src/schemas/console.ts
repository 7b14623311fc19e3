import { z } from 'zod'
import { AttendeeList, CsvUpload, EventDoorSettingsBody, ExportAttendeesQuery, ImportAttendeesQuery, ImportAttendeesReport, ListAttendeesQuery } from './attendees.js'
import { ChipUid, IntId, Iso, Success } from './common.js'
import { decimalAtMost } from './decimalPattern.js'
import { DoorStatsResponse } from './kiosk.js'

/*
 * The console's JSON API (/console/api/*, issue 28): hidden from the OpenAPI document (console-only,
 * docs/decisions.md), but validated and serialized through these like every route. A 400 names the
 * body's field in `errors` (`name`, `pin`, `mode`…), which the console shows next to it.
 */

export const ConsoleTeam = z.object({ id: z.number().int(), name: z.string() })

export const ConsoleSignInBody = z.object({ link: z.string().min(1, 'Required').max(200) }).strict()
export const ConsoleSessionResponse = Success.extend({ team: ConsoleTeam, expiresAt: Iso })

const StationModeIn = z.enum(['checkin', 'bind', 'exit', 'claim', 'closed'])

export const ConsoleStation = z.object({
  id: z.number().int(),
  name: z.string(),
  prefix: z.string(),
  mode: StationModeIn.nullable(),
  eventId: z.number().int().nullable(),
  eventName: z.string().nullable(),
  ticketTypes: z.array(z.string()).nullable(),
  revokedAt: Iso.nullable(),
  createdAt: Iso,
  reader: z.object({ readers: z.array(z.string()), cardPresent: z.boolean(), pcsc: z.enum(['up', 'down']).nullable(), at: Iso }).nullable(),
  kiosksConnected: z.number().int(),
  lastTapAt: Iso.nullable(),
  tapsToday: z.number().int(),
})

export const ConsoleOverviewResponse = Success.extend({
  team: ConsoleTeam,
  stations: z.array(ConsoleStation),
  taps: z.object({ today: z.number().int(), accepted: z.number().int(), refused: z.number().int() }),
})
export const ConsoleStationsResponse = Success.extend({ stations: z.array(ConsoleStation) })

const StationName = z.string().trim().min(1, 'A station needs a name').max(100, 'At most 100 characters')

export const ConsoleCreateStationBody = z.object({ name: StationName }).strict()
export const ConsoleCreateStationResponse = Success.extend({ station: ConsoleStation, token: z.string() })

export const ConsoleStationParams = z.object({ id: IntId }).strict()

/** A door's ticket types: names as the guest list has them, each once; null: every type. */
const TicketTypes = z
  .array(z.string().trim().min(1, 'A ticket type cannot be empty').max(100))
  .min(1, 'Give at least one ticket type, or null for every type')
  .max(50)
  .transform((types) => [...new Set(types)])
  .nullable()

export const ConsoleUpdateStationBody = z
  .object({
    name: StationName.optional(),
    mode: StationModeIn.nullable().optional(),
    eventId: IntId.nullable().optional(),
    ticketTypes: TicketTypes.optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, 'Give at least one of name, mode, eventId, ticketTypes')
export const ConsoleStationResponse = Success.extend({ station: ConsoleStation })

export const ConsoleStaffPinBody = z.object({ pin: z.string().regex(/^\d{4,12}$/, 'A staff PIN is 4 to 12 digits') }).strict()

export const ConsoleKioskUrlResponse = Success.extend({ url: z.string(), staffUrl: z.string(), qrSvg: z.string() })

export const ConsoleKioskTokensResponse = Success.extend({
  tokens: z.array(z.object({ prefix: z.string(), createdAt: Iso, lastSeenAt: Iso.nullable(), revokedAt: Iso.nullable() })),
})
export const ConsoleKioskTokenParams = z.object({ id: IntId, prefix: z.string().regex(/^tgk_[A-Za-z0-9_-]{6}$/, 'A kiosk token prefix as listed: tgk_ and 6 characters') }).strict()

/** An event of the team: its guest list's counts and its door settings (the stations tab's event select reads id and name). */
export const ConsoleEvent = z.object({
  id: z.number().int(),
  name: z.string(),
  guests: z.number().int(),
  checkedIn: z.number().int(),
  reentry: z.boolean(),
  publicNames: z.enum(['first', 'full']),
  admitUnpaid: z.boolean(),
})
export const ConsoleEventsResponse = Success.extend({ events: z.array(ConsoleEvent) })
export const ConsoleEventResponse = Success.extend({ event: ConsoleEvent })

export const ConsoleCreateEventBody = z.object({ name: z.string().trim().min(1, 'An event needs a name').max(200, 'At most 200 characters') }).strict()
export const ConsoleEventParams = z.object({ id: IntId }).strict()

/*
 * An event's door settings and guest list: the API's own schemas (PATCH /events/:eventId/door, the
 * attendees routes), so the console and the API take and answer the same. An empty door body passes
 * here and is setEventDoorSettings's 400 nothing_to_set, as on the API.
 */
export const ConsoleEventDoorBody = EventDoorSettingsBody
export const ConsoleGuestsQuery = ListAttendeesQuery
export const ConsoleGuestsResponse = AttendeeList
export const ConsoleImportGuestsQuery = ImportAttendeesQuery
export const ConsoleGuestFile = CsvUpload
/** `report` is POST /events/:eventId/attendees/import's answer as it is (its `success` included). */
export const ConsoleImportGuestsResponse = Success.extend({ report: ImportAttendeesReport })
export const ConsoleExportGuestsQuery = ExportAttendeesQuery
/** The staff view's numbers (GET /kiosk/staff/stats), for the event itself. */
export const ConsoleEventNumbersResponse = DoorStatsResponse

export const ConsoleApiKeysResponse = Success.extend({
  keys: z.array(z.object({ prefix: z.string(), label: z.string().nullable(), createdAt: Iso, revokedAt: Iso.nullable() })),
})
export const ConsoleCreateApiKeyBody = z.object({ label: z.string().trim().min(1, 'A label cannot be empty (leave it out instead)').max(100).optional() }).strict()
export const ConsoleCreateApiKeyResponse = Success.extend({ apiKey: z.string(), prefix: z.string() })
export const ConsoleApiKeyParams = z.object({ prefix: z.string().regex(/^tg_[A-Za-z0-9_-]{7}$/, 'An API key prefix as listed: tg_ and 7 characters') }).strict()

/** A filter left blank in the console's form (`?uid=&stationId=`) is no filter. */
const blankIsAbsent = <T extends z.ZodType>(schema: T) => z.preprocess((value) => (value === '' ? undefined : value), schema.optional())

export const ConsoleTapsQuery = z.object({
  uid: blankIsAbsent(ChipUid),
  stationId: blankIsAbsent(IntId),
  verdict: blankIsAbsent(z.enum(['accepted', 'refused'])),
  limit: blankIsAbsent(z.string().regex(new RegExp(decimalAtMost(1000n, { min: 1 })), 'A whole number 1–1000, digits only').transform(Number)),
})
export const ConsoleTapsResponse = Success.extend({
  taps: z.array(
    z.object({
      id: z.number().int(),
      at: Iso,
      source: z.string(),
      uid: z.string().nullable(),
      stationId: z.number().int().nullable(),
      accepted: z.boolean(),
      reason: z.string(),
      words: z.string().nullable(),
      counter: z.number().int().nullable(),
      detail: z.string().nullable(),
    }),
  ),
})
