import { z } from 'zod'
import { IntId, Iso, Success } from './common.js'
import { decimalAtMost } from './decimalPattern.js'

// The guest list under an event, with the API key (issue 19): tapgate's extension, not the spec's.

export const EventIdParams = z.object({ eventId: IntId.meta({ description: 'Guestbook event id (GET /events)' }) })

/**
 * A whole number in a query string, min…max: digits only (no sign, spaces or leading zeros), the bounds
 * in the pattern itself, so the document states what the server takes.
 */
const queryInt = (min: 0 | 1, max: number) =>
  z
    .string()
    .regex(new RegExp(decimalAtMost(BigInt(max), { min })), `A whole number ${min}–${max}, digits only`)
    .transform(Number)

export const ListAttendeesQuery = z.object({
  q: z.string().max(200).optional().meta({ description: 'Name, email or ticket code contains this (case and accents ignored)' }),
  limit: queryInt(1, 500).optional().meta({ description: 'Page size, 1–500 (default 50)' }),
  offset: queryInt(0, 10_000_000).optional().meta({ description: 'Rows to skip (default 0)' }),
})

export const Attendee = z
  .object({
    id: z.number().int(),
    name: z.string(),
    email: z.string().nullable(),
    ticketType: z.string(),
    ticketCode: z.string(),
    wallet: z.string().nullable(),
    note: z.string().nullable(),
    needsAttention: z.boolean(),
    paid: z.boolean().meta({ description: "false: the guest's order is not paid (pretix pending, Hi.Events AWAITING_PAYMENT): the door refuses them not_paid unless the event admits unpaid guests" }),
    createdAt: Iso,
    updatedAt: Iso,
  })
  .meta({ id: 'Attendee' })

export const AttendeeList = z.object({
  success: z.literal(true),
  attendees: z.array(Attendee),
  total: z.number().int().meta({ description: 'How many match in all (the page is limit/offset of them)' }),
})

export const ImportAttendeesQuery = z.object({
  map: z
    .string()
    .max(2000)
    .optional()
    .meta({ description: 'name=COL,email=COL,ticket=COL,type=COL,chip=COL,wallet=COL,note=COL,paid=COL: the columns of a CSV no known tool wrote (name and ticket required; paid: yes/no, empty or absent: paid)' }),
})

const GuestListFormat = z.enum(['pretix-checkin', 'pretix-positions', 'eventbrite', 'luma', 'hievents', 'tito', 'map'])

export const ImportAttendeesReport = z
  .object({
    success: z.literal(true),
    eventId: z.number().int(),
    format: GuestListFormat,
    formatLabel: z.string(),
    imported: z.number().int().meta({ description: 'Guests in the file (rows not skipped), each now on the list' }),
    inserted: z.number().int(),
    updated: z.number().int(),
    skipped: z
      .array(z.object({ line: z.number().int(), ticketCode: z.string(), reason: z.string() }))
      .meta({ description: 'Rows the tool marks as admitting no one (cancelled, void, declined), and pretix positions of products that admit no one (no attendee: merch, add-ons): not imported, with the reason. The first 1,000' }),
    chipsBound: z.number().int(),
    warnings: z
      .array(z.object({ line: z.number().int(), column: z.string(), message: z.string() }))
      .meta({ description: 'Values left out instead of stopping the import (a wallet that is no address), or a chip a door bound meanwhile. The first 1,000' }),
    unpaid: z.number().int().meta({ description: 'Guests imported whose order is not paid (pretix pending, Hi.Events AWAITING_PAYMENT): the door refuses them not_paid unless the event admits unpaid guests' }),
    fileType: z.enum(['csv', 'xlsx']).meta({ description: 'The file read: a CSV, or an .xlsx workbook (told by its content)' }),
    sheet: z.string().nullable().meta({ description: "The workbook's sheet read: pretix's Order positions (any language) when there is one, else the first; null for a CSV" }),
    encoding: z.enum(['utf-8', 'windows-1252']).meta({ description: 'How the CSV was read: UTF-8, or Windows-1252 (what Excel on Windows saves as plain "CSV"), told by its bytes' }),
    nameless: z.number().int().meta({ description: 'Guests imported without a name (a pretix or Tito ticket nobody has named yet): flagged needsAttention, shown to staff by ticket type and code' }),
  })
  .meta({ id: 'AttendeeImportReport' })

/** An event's door settings (`tapgate event set`): each one absent stays as it is. */
export const EventDoorSettingsBody = z
  .object({
    reentry: z.boolean().optional().meta({ description: 'A guest who went out (an exit door) may come back in (default true)' }),
    publicNames: z.enum(['first', 'full']).optional().meta({ description: 'What the public door screen calls a guest (default first: the first name only)' }),
    admitUnpaid: z
      .boolean()
      .optional()
      .meta({ description: 'Let in guests whose order is not paid (pretix pending, Hi.Events AWAITING_PAYMENT); default false: refused not_paid' }),
  })
  .strict()

export const EventDoorSettingsResponse = Success.extend({
  eventId: z.number().int(),
  name: z.string(),
  reentry: z.boolean(),
  publicNames: z.enum(['first', 'full']),
  admitUnpaid: z.boolean(),
})

export const ExportAttendeesQuery = z.object({ format: z.enum(['csv', 'json']).optional().meta({ description: 'csv (default): for a spreadsheet, formula-looking cells escaped; json: the raw values' }) })

const MintState = z.enum(['none', 'waiting_wallet', 'queued', 'sent', 'replaced', 'confirmed', 'failed'])

export const AttendeeExport = z
  .object({
    eventId: z.number().int(),
    eventName: z.string(),
    exportedAt: Iso,
    attendees: z.array(
      z.object({
        ticketCode: z.string(),
        name: z.string(),
        email: z.string().nullable(),
        ticketType: z.string(),
        wallet: z.string().nullable(),
        note: z.string().nullable(),
        needsAttention: z.boolean(),
        paid: z.boolean(),
        chips: z.array(z.string()),
        checkIn: z.object({ at: Iso, station: z.string(), method: z.enum(['manual', 'tap']), leftAt: Iso.nullable() }).nullable(),
        passes: z.array(z.object({ direction: z.enum(['in', 'out']), at: Iso, station: z.string() })).meta({ description: 'Exits and re-entries after the check-in' }),
        mint: z.object({ state: MintState, txHash: z.string().nullable() }),
      }),
    ),
  })
  .meta({ id: 'AttendeeExport' })

/**
 * The import's body: the CSV file itself (content-type text/csv), handed to the route as the request's
 * stream, read as it arrives. Documented as a string (what a client sends); any value passes here, the
 * route refuses what is not a text/csv stream.
 */
export const CsvUpload = z.unknown().meta({ description: 'The CSV file', type: 'string' })
