import { z } from 'zod'
import { ErrorBody, UidOut } from './common.js'
import { TapCheckIn } from './kiosk.js'

/** The HTML a person's phone shows after a tap (the tap page, or why the tap was refused). */
export const TapHtml = (description: string) => ({ description, content: { 'text/html': { schema: z.string() } } })

export const TapRedirect = {
  description: "Accepted: to the chip's (or its team's) redirect URL with serviceRef=<ref id> appended to its query",
  content: { 'text/plain': { schema: z.string().max(0) } },
}

/**
 * What a reader saw over RF: a 7-byte UID, or the 4-byte random ID (08…) of a
 * chip with random UIDs on, which then never matches and is only accepted for
 * chips registered with randomUid.
 */
const RfUid = z
  .string()
  // The rule and the document's pattern (common.ts: inputs exactly as the document says).
  .regex(/^(?:[0-9A-Fa-f]{2}(?::?[0-9A-Fa-f]{2}){6}|08(?::?[0-9A-Fa-f]{2}){3})$/, 'An RF UID is 7 bytes (14 hex digits) or a 4-byte random ID (08 + 6 hex digits)')
  .transform((raw) => raw.replaceAll(':', '').toUpperCase())
  .meta({ description: 'The UID the reader saw over RF: 14 hex digits (or a random ID, 08 + 6), any case, ":" allowed', example: '04DE5F1EACC040' })

export const StationTapBody = z
  .object({
    rfUid: RfUid,
    url: z.string().min(1).max(4096).meta({ description: 'The NDEF URL read from the chip, exactly as read' }),
    readerName: z.string().max(200).optional().meta({ description: 'The PC/SC reader, for the log' }),
    readAt: z.iso.datetime({ offset: true }).optional().meta({ description: 'When the reader read the chip (ISO 8601), for the log' }),
  })

export const StationTapResponse = z
  .object({
    success: z.literal(true),
    refId: z.string().meta({ description: 'The new ref: query it once with GET /refs/:id' }),
    uid: UidOut,
    counter: z.number().int().nullable().meta({ description: 'SDMReadCtr (or the NTAG 21x NFC counter); null when not mirrored' }),
    mode: z.enum(['aes', 'lrp', 'ntag21x']),
    authenticated: z.boolean().meta({ description: 'false for NTAG 21x mirrors, which carry no MAC' }),
    fileData: z.string().nullable().meta({ description: 'Decrypted SDMENCFileData as uppercase hex, or null' }),
    checkIn: TapCheckIn.optional(),
  })
  .meta({ id: 'StationTap' })

/** A refused station tap: the standard error body plus the operator's diagnosis. */
export const TapErrorBody = ErrorBody.extend({
  error: z.string().meta({
    description:
      'The rejection reason (malformed, not_sun_message, mac_mismatch, mode_mismatch, no_mac, no_counter, unknown_chip, counter_replay, counter_limit, uid_mismatch), station_closed, or another error code (validation_failed…)',
  }),
  detail: z.string().optional().meta({ description: 'For operators: what exactly failed (never key material)' }),
}).meta({ id: 'TapError' })

/** A station tap's refusals, with their diagnosis (the route adds its other statuses). */
export const tapRefusals = { 400: TapErrorBody, 403: TapErrorBody, 404: TapErrorBody, 409: TapErrorBody } as const

/** 503: the tap page for sealed keys that do not open, or JSON (shutting_down) from a gateway that stops. */
export const TapUnavailable = {
  description: 'The gateway cannot check taps: the keys of a chip profile do not open (docs/keys.md); or, as JSON, it is shutting down',
  content: { 'text/html': { schema: z.string() }, 'application/json': { schema: ErrorBody } },
}
