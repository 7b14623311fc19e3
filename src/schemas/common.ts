// viem/utils, not viem: the root entry costs ~700 ms of start-up, this function ~190.
import { getAddress } from 'viem/utils'
import { z } from 'zod'
import { decimalAtMost } from './decimalPattern.js'

// The spec's own error example says "Required" for a missing field; zod's
// default wording ("expected string, received undefined") is noisier. This is
// zod's documented global error hook, set once where every schema is defined.
z.config({
  customError: (issue) => (issue.code === 'invalid_type' && issue.input === undefined ? 'Required' : undefined),
})

/**
 * The patterns the OpenAPI document gives, which the checks below use as they are: the server takes
 * exactly what the document allows, so a value the document forbids (`02`, `" 2"`, `"2\n"`) is 400
 * validation_failed, never quietly read as something else (docs/decisions.md, "Inputs exactly as
 * the document says"). JS `$` without the m flag does not match before a trailing newline.
 */
const MAX_UID = 2n ** 56n - 1n
// Hex (14 digits, ":" allowed), or the hosted API's decimal form: the 7 bytes as one big-endian number,
// 15 to 17 digits with no leading zero, at most 2^56 - 1. Fourteen digits are always hex (issue 26).
const UID_PATTERN = new RegExp(
  `^(?:[0-9A-Fa-f]{2}(?::?[0-9A-Fa-f]{2}){6}|(?=[1-9]\\d{14,16}$)${decimalAtMost(MAX_UID, { min: 1 }).slice(1, -1)})$`,
)
const UINT256_PATTERN = new RegExp(decimalAtMost(2n ** 256n - 1n))
const POSITIVE_SAFE_INT_PATTERN = new RegExp(decimalAtMost(BigInt(Number.MAX_SAFE_INTEGER), { min: 1 }))
// As resolveRecipient reads a recipient: a 20-byte address other than zero, or a dotted ENS name.
const RECIPIENT_PATTERN = '^(?:(?!0x0{40}$)0x[0-9a-fA-F]{40}|(?!0x)(?:[A-Za-z0-9-]+\\.)+[A-Za-z0-9-]+)$'

/**
 * The canonical form of a UID in either form: 14 uppercase hex digits.
 * BigInt, not Number: a 7-byte UID can exceed 2^53.
 *
 * @example
 * canonicalUid('1311252620644752') // '04A893CAAA1190'
 */
export function canonicalUid(raw: string): string {
  return /^\d{15,17}$/.test(raw) ? BigInt(raw).toString(16).toUpperCase().padStart(14, '0') : raw.replaceAll(':', '').toUpperCase()
}

/** A canonical (hex) UID in the hosted API's decimal form. */
export const decimalUid = (hex: string): string => BigInt(`0x${hex}`).toString()

/** Accepts any case, with or without `:` separators, or the decimal form; yields 14 uppercase hex digits. */
export const ChipUid = z
  .string()
  .regex(UID_PATTERN, 'A chip UID is 7 bytes: 14 hex digits (optionally separated by ":") or its decimal form (15-17 digits, at most 2^56-1)')
  .transform(canonicalUid)
  .meta({
    description: 'Chip UID: 14 hex digits (7 bytes), any case, ":" separators allowed; or the hosted API\'s decimal form (the 7 bytes as one big-endian number, 15-17 digits)',
    example: '04DE5F1EACC040',
  })

export const UidOut = z.string().meta({ description: 'Chip UID, 14 uppercase hex digits; with compat=iyk its decimal form (a string)', example: '04DE5F1EACC040' })

/** An EVM address in any case; answered EIP-55 checksummed. */
export const Address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'Must be a 0x-prefixed 20-byte hex address')
  .transform((raw) => getAddress(raw.toLowerCase()))
  .meta({ description: 'EVM address (any case)', example: '0x5FbDB2315678afecb367f032d93F642f64180aa3' })

const MAX_UINT256 = 2n ** 256n - 1n

/** A uint256 token id as a canonical decimal string (a JSON number is accepted too). */
export const TokenId = z
  .union([z.string().regex(UINT256_PATTERN, 'Must be a decimal uint256: digits only, no leading zeros or spaces'), z.number().int().nonnegative()])
  .transform((raw) => String(raw))
  .meta({ description: 'Token id (uint256) as a decimal string', example: '1' })

/**
 * A token id in a hand-written import file: as TokenId, and also with leading zeros or spaces
 * (`"003"`), stored in the canonical form. The file is the team's own, not the API.
 */
export const TokenIdInFile = z
  .union([z.string(), z.number().int().nonnegative()])
  .transform((raw) => String(raw).trim())
  .refine((s) => /^\d{1,78}$/.test(s) && BigInt(s) <= MAX_UINT256, 'Must be a decimal uint256')
  .transform((s) => BigInt(s).toString())
  .meta({ description: 'Token id (uint256) as a decimal string', example: '1' })

/** Positive integer id; JSON numbers and digit strings both accepted (the spec shows both). */
export const IntId = z
  .union([
    // The pipe enforces these bounds; zod documents only the union's input, so the document is told here.
    z.number().meta({ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
    z.string().regex(POSITIVE_SAFE_INT_PATTERN, 'Must be a positive integer: digits only, no leading zeros or spaces').transform(Number),
  ])
  .pipe(z.number().int().positive('Must be a positive integer').max(Number.MAX_SAFE_INTEGER))

export const ChainId = IntId.meta({ description: 'EVM chain id', example: 31337 })

/** Booleans in a query string: `true`/`false`/`1`/`0`. */
export const QueryBool = z
  .enum(['true', 'false', '1', '0'])
  .transform((v) => v === 'true' || v === '1')
  .optional()

/**
 * A recipient as given: a 0x address or an ENS name. `resolveRecipient` checks
 * which (400 invalid_recipient otherwise); the pattern tells clients the same.
 * Spaces or a line break around it are refused here (400 validation_failed), not trimmed.
 */
export const Recipient = z
  .string()
  .min(1)
  .max(255)
  .refine((raw) => raw === raw.trim(), 'No spaces or line breaks before or after the recipient')
  .meta({ description: 'ETH address or ENS name', example: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', pattern: RECIPIENT_PATTERN })

export const Iso = z.string().meta({ description: 'ISO 8601 timestamp', example: '2026-11-21T10:00:00.000Z' })

export const TokenKeyBody = z.object({
  contractAddress: Address,
  chainId: ChainId,
  tokenId: TokenId,
})

export const Success = z.object({ success: z.literal(true) })

export const ErrorBody = z
  .object({
    success: z.literal(false),
    error: z.string().meta({ description: 'Stable error code, see README; with compat=iyk the HTTP reason phrase (e.g. "Bad Request"), the code then in `code`' }),
    message: z.string(),
    errors: z.record(z.string(), z.string()).optional().meta({ description: 'Field path → message (validation only)' }),
    statusCode: z.number().int().optional().meta({ description: 'compat=iyk only: the HTTP status, as the hosted API sends it' }),
    code: z.string().optional().meta({ description: 'compat=iyk only: the stable error code (otherwise in `error`)' }),
  })
  .meta({ id: 'Error' })

/** The error statuses an operation can name for itself (errorResponses adds 408, 500 and 503). */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 410 | 413 | 414 | 415 | 423 | 429

/**
 * What a POST, PATCH or DELETE can be refused for before its route runs, whether or not the route
 * reads a body (Fastify parses one if sent): not valid JSON (400), over 1 MiB (413), not JSON (415).
 */
export const BODY_ERRORS = [400, 413, 415] as const

/** What a path parameter can be refused for: malformed (400), over the router's 100 characters (414). */
export const PATH_ERRORS = [400, 414] as const

/**
 * An operation's error responses, for its `response` schema: the statuses it names, declared next to
 * the route from what it is (401: a credential; 400: input; 403/404/409/410: what its domain throws;
 * 429: a rate limit), plus the three any request can meet: not received in time (408,
 * plugins/transportErrors.ts), a bug (500), and 503 (the gateway shutting down, or a chain, ENS or
 * sealed keys out of reach). test/routes/errorStatuses.test.ts holds the lists to what the routes do.
 *
 * @example
 * response: { 200: ChipResponse, ...errorResponses(400, 401, 404) }
 */
export function errorResponses<const S extends ErrorStatus>(...statuses: readonly S[]): Record<S | 408 | 500 | 503, typeof ErrorBody> {
  return Object.fromEntries([...statuses, 408, 500, 503].map((status) => [status, ErrorBody])) as Record<S | 408 | 500 | 503, typeof ErrorBody>
}

/**
 * 503 of an operation that moves a token (issue 24 §1): besides the chain, ENS or sealed keys out of
 * reach, `chain_state_unknown` when the token's nonce cannot be read in time, with Retry-After.
 */
export const TokenMoveUnavailable = ErrorBody.meta({
  id: 'TokenMoveUnavailable',
  description:
    '503. `chain_state_unknown` (with a Retry-After header): the token\'s moves on chain cannot be read right now (the nonce read timed out, or the RPC is unreachable or failing), so it is not moved; nothing was used up (OTP, claim, claim link, registration) and the same request may be sent again. Otherwise as any 503.',
})

/**
 * errorResponses of an operation that moves a token: its 503 says chain_state_unknown.
 *
 * @example
 * response: { 200: TransferResponse, ...tokenMoveErrorResponses(400, 401, 409) }
 */
export function tokenMoveErrorResponses<const S extends ErrorStatus>(...statuses: readonly S[]): Record<S | 408 | 500, typeof ErrorBody> & Record<503, typeof TokenMoveUnavailable> {
  return { ...errorResponses(...statuses), 503: TokenMoveUnavailable }
}

/**
 * A route's credential, as an OpenAPI security requirement (the schemes are
 * declared in plugins/openapi.ts). The hook or domain function that checks it
 * stays next to the route; the contract test holds the two together.
 */
type SecurityRequirements = ReadonlyArray<Readonly<Record<string, readonly string[]>>>

export const security: Record<'none' | 'apiKey' | 'optionalApiKey' | 'otp' | 'station' | 'kiosk' | 'staff', SecurityRequirements> = {
  /** No credential. */
  none: [],
  /** `x-service-api-key` (requireApiKey). */
  apiKey: [{ apiKey: [] }],
  /** `x-service-api-key` if sent (optionalApiKey): `{}` is "no credential". */
  optionalApiKey: [{}, { apiKey: [] }],
  /** `x-service-code`, the OTP of a tap. */
  otp: [{ otp: [] }],
  /** `x-station-token`. */
  station: [{ station: [] }],
  /** `x-kiosk-token` (a kiosk page's token, `tapgate station kiosk-url`). */
  kiosk: [{ kiosk: [] }],
  /** `x-kiosk-token` and `x-staff-session` (POST /kiosk/staff/session). */
  staff: [{ kiosk: [], staffSession: [] }],
}
