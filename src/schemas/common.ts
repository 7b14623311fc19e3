// viem/utils, not viem: the root entry costs ~700 ms of start-up, these two functions ~190.
import { getAddress, isAddress } from 'viem/utils'
import { z } from 'zod'

// The spec's own error example says "Required" for a missing field; zod's
// default wording ("expected string, received undefined") is noisier. This is
// zod's documented global error hook, set once where every schema is defined.
z.config({
  customError: (issue) => (issue.code === 'invalid_type' && issue.input === undefined ? 'Required' : undefined),
})

/** Accepts any case, with or without `:` separators; yields 14 uppercase hex digits. */
export const ChipUid = z
  .string()
  .transform((raw) => raw.replaceAll(':', '').toUpperCase())
  .pipe(z.string().regex(/^[0-9A-F]{14}$/, 'A chip UID is 7 bytes: 14 hex digits, optionally separated by ":"'))
  .meta({ description: 'Chip UID: 14 hex digits (7 bytes), any case, ":" separators allowed', example: '04DE5F1EACC040' })

export const UidOut = z.string().meta({ description: 'Chip UID, 14 uppercase hex digits', example: '04DE5F1EACC040' })

/** An EVM address in any case; answered EIP-55 checksummed. */
export const Address = z
  .string()
  .refine((raw) => isAddress(raw, { strict: false }), 'Must be a 0x-prefixed 20-byte hex address')
  .transform((raw) => getAddress(raw.toLowerCase()))
  .meta({ description: 'EVM address (any case)', example: '0x5FbDB2315678afecb367f032d93F642f64180aa3' })

const MAX_UINT256 = 2n ** 256n - 1n

/** A uint256 token id as a decimal string (a JSON number is accepted too). */
export const TokenId = z
  .union([z.string(), z.number().int().nonnegative()])
  .transform((raw) => String(raw).trim())
  .refine((s) => /^\d{1,78}$/.test(s) && BigInt(s) <= MAX_UINT256, 'Must be a decimal uint256')
  .transform((s) => BigInt(s).toString())
  .meta({ description: 'Token id (uint256) as a decimal string', example: '1' })

/** Positive integer id; JSON numbers and digit strings both accepted (the spec shows both). */
export const IntId = z
  .union([z.number(), z.string().regex(/^\d+$/, 'Must be a positive integer').transform(Number)])
  .pipe(z.number().int().positive('Must be a positive integer').max(Number.MAX_SAFE_INTEGER))

export const ChainId = IntId.meta({ description: 'EVM chain id', example: 31337 })

/** Booleans in a query string: `true`/`false`/`1`/`0`. */
export const QueryBool = z
  .enum(['true', 'false', '1', '0'])
  .transform((v) => v === 'true' || v === '1')
  .optional()

/** A recipient as given: a 0x address or an ENS name (resolved by `resolveRecipient`). */
export const Recipient = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .meta({ description: 'ETH address or ENS name', example: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' })

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
    error: z.string().meta({ description: 'Stable error code, see README' }),
    message: z.string(),
    errors: z.record(z.string(), z.string()).optional().meta({ description: 'Field path → message (validation only)' }),
  })
  .meta({ id: 'Error' })

/** Every error status a route can send, for its `response` schema. */
export const errorResponses = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  429: ErrorBody,
  503: ErrorBody,
} as const

export const ApiKeyHeader = z.object({
  'x-service-api-key': z.string().optional().meta({ description: 'Team API key' }),
})
export const OtpHeader = z.object({
  'x-service-code': z.string().optional().meta({ description: 'One-time code from GET /refs/:id' }),
})
