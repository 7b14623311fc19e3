import type { z } from 'zod'
import type { Operations } from './operations.js'

export type { Operations }

/** An operation of the API, e.g. `'GET /refs/{id}'`: a string-literal union, so a typo does not compile. */
export type OperationKey = keyof Operations

/** The parts of a request a route's schemas check. */
type RequestPart = 'params' | 'query' | 'body'

/** The schema an operation has for a part of the request, or never when its route takes none. */
type SchemaOf<K extends OperationKey, Part extends RequestPart> = Operations[K] extends { readonly [P in Part]: infer S extends z.ZodType } ? S : never

/**
 * One part of a request's options, typed as the route's schema takes it (`z.input`: what may be
 * sent, before the server's transforms). Required when the schema needs something (a path
 * parameter, a required field), optional when it takes `{}`, and absent when the route reads no such
 * part, so that sending one is a type error rather than a value the server ignores.
 */
type OptionsPart<Name extends RequestPart, S> = [S] extends [never]
  ? { readonly [P in Name]?: never }
  : S extends z.ZodType
    ? {} extends z.input<S>
      ? { readonly [P in Name]?: z.input<S> }
      : { readonly [P in Name]: z.input<S> }
    : never

/** Flattens an intersection into one object type, for readable hovers and excess-property checks. */
type Flatten<T> = { [P in keyof T]: T[P] } & {}

/** What every request may carry besides its operation's parts. */
export type CommonRequestOptions = {
  /**
   * Sent as they are, over the client's own: the other credentials (`x-service-code`, an OTP;
   * `x-station-token`; `x-kiosk-token` and `x-staff-session`) are per request, not per client.
   */
  readonly headers?: Readonly<Record<string, string>>
  readonly signal?: AbortSignal
}

/**
 * The options of one operation's request: its path parameters, query and JSON body as its route's
 * schemas take them, and headers.
 *
 * @example
 * const options: RequestOptions<'GET /refs/{id}'> = { params: { id: refId }, query: { includeMetadata: 'true' } }
 */
export type RequestOptions<K extends OperationKey> = Flatten<
  OptionsPart<'params', SchemaOf<K, 'params'>> &
    OptionsPart<'query', SchemaOf<K, 'query'>> &
    OptionsPart<'body', SchemaOf<K, 'body'>> &
    CommonRequestOptions
>

/** The options argument: optional when the operation needs nothing (`api.request('GET /health')`). */
export type RequestArgs<K extends OperationKey> = {} extends RequestOptions<K> ? [options?: RequestOptions<K>] : [options: RequestOptions<K>]

/**
 * What a 2xx answer of the operation holds: the output type of its route's 200 schema, which the
 * server serialized the answer through. Not checked again on arrival (the server already did).
 */
export type ResponseOf<K extends OperationKey> = z.output<Operations[K]['response']>

/** How to reach a gateway. */
export type ClientOptions = {
  /** The gateway's origin, with a path prefix if a proxy adds one (`https://host/tapgate`). */
  readonly baseUrl: string
  /** A team's API key, sent as `x-service-api-key` on every request (the routes that need none ignore it). */
  readonly apiKey?: string
  /** Headers for every request (a request's own headers win). */
  readonly headers?: Readonly<Record<string, string>>
  /** The fetch to send with (default globalThis.fetch): a test's, a proxy agent's, another runtime's. */
  readonly fetch?: typeof globalThis.fetch
}

/** A typed client of the gateway's HTTP API (createClient). */
export type Client = {
  /**
   * Sends one operation and resolves with its parsed JSON answer; a non-2xx answer rejects with a
   * TapgateApiError, a network failure with fetch's own error.
   *
   * @example
   * const ref = await api.request('GET /refs/{id}', { params: { id: refId } })
   */
  request<K extends OperationKey>(operation: K, ...options: RequestArgs<K>): Promise<ResponseOf<K>>
}
