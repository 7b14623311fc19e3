/** What a TapgateApiError is made from. */
export type ApiErrorFields = {
  /** The operation that was answered, e.g. `'GET /refs/{id}'`. */
  operation: string
  status: number
  code: string
  message: string
  body: unknown
}

/**
 * A gateway's refusal (any non-2xx answer), as one error class callers can catch: `code` is the
 * API's stable error code (`api_key_missing`, `validation_failed`, …), which is what a program
 * should switch on; `message` is for people. Network failures stay fetch's own errors: there was no
 * answer to describe.
 *
 * @example
 * try { await api.request('GET /chip-groups') }
 * catch (error) { if (error instanceof TapgateApiError && error.status === 401) askForKey() }
 */
export class TapgateApiError extends Error {
  override name = 'TapgateApiError'
  /** The operation that was answered, e.g. `'GET /refs/{id}'`. */
  readonly operation: string
  /** The HTTP status. */
  readonly status: number
  /**
   * The stable error code: the body's `error` (or, with compat=iyk, its `code`, as `error` is then the
   * reason phrase). `http_<status>` when the answer had none (e.g. an HTML page from a proxy), and
   * `not_json` for a 2xx answer that is not JSON.
   */
  readonly code: string
  /** The answer as parsed: the JSON error body (with `errors` per field on a validation failure), or the text. */
  readonly body: unknown

  constructor(fields: ApiErrorFields) {
    super(fields.message)
    this.operation = fields.operation
    this.status = fields.status
    this.code = fields.code
    this.body = fields.body
  }
}
