import type { z } from 'zod'

/** The methods the API uses; a key's method is one of these, so `'GETT /refs/{id}'` is refused by the table. */
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE'

/**
 * An operation's key: its method and path as the OpenAPI document writes them (`{name}` for a path
 * parameter), so the table and the document compare without translation and the key alone tells
 * the client where to send a request.
 */
export type OperationKeyFormat = `${HttpMethod} /${string}`

/** What the table holds of one route: the zod schemas of its route, by the part of the request they check. */
export type OperationSchemas = {
  readonly params?: z.ZodType
  readonly query?: z.ZodType
  readonly body?: z.ZodType
  /** The 200 answer's schema, as the route serializes it. */
  readonly response: z.ZodType
}

/** The shape src/client/operations.ts satisfies. */
export type OperationTable = { readonly [key: OperationKeyFormat]: OperationSchemas }
