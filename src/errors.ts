/**
 * Every failure the API reports on purpose is a BaseError: it carries the HTTP
 * status and a stable machine-readable `code` that clients can switch on
 * (the codes are listed in README.md). Anything else is a bug and becomes a 500.
 */
export class BaseError extends Error {
  override name = 'BaseError'
  readonly statusCode: number
  readonly code: string
  /** Field path → message, for validation failures. */
  readonly errors?: Record<string, string>
  /** Sent as Retry-After (seconds): the same request may work once this has passed. */
  readonly retryAfterSeconds?: number

  constructor(statusCode: number, code: string, message: string, options: { errors?: Record<string, string>; cause?: unknown; retryAfterSeconds?: number } = {}) {
    super(message, { cause: options.cause })
    this.statusCode = statusCode
    this.code = code
    this.errors = options.errors
    this.retryAfterSeconds = options.retryAfterSeconds
  }
}

/** 400: the request is well-formed HTTP but its content is wrong. */
export class ValidationError extends BaseError {
  override name = 'ValidationError'
  constructor(message: string, errors: Record<string, string>, code = 'validation_failed') {
    super(400, code, message, { errors })
  }
}

/** 400: a well-typed value the gateway cannot act on (e.g. an ENS name while offline). */
export class BadRequestError extends BaseError {
  override name = 'BadRequestError'
  constructor(code: string, message: string) {
    super(400, code, message)
  }
}

/** 401: no credential, or one we do not know. */
export class UnauthorizedError extends BaseError {
  override name = 'UnauthorizedError'
  constructor(code: string, message: string) {
    super(401, code, message)
  }
}

/** 403: a valid credential used for something it does not authorize. */
export class ForbiddenError extends BaseError {
  override name = 'ForbiddenError'
  constructor(code: string, message: string) {
    super(403, code, message)
  }
}

/**
 * 404: unknown, or owned by another team. The two are deliberately
 * indistinguishable so a key never learns what other teams have.
 */
export class NotFoundError extends BaseError {
  override name = 'NotFoundError'
  constructor(code: string, message: string) {
    super(404, code, message)
  }
}

/** 409: the request conflicts with current state (a used OTP, an open registration…). */
export class ConflictError extends BaseError {
  override name = 'ConflictError'
  constructor(code: string, message: string) {
    super(409, code, message)
  }
}

/** 410: it existed, and its time is over (an expired claim link: tap again). */
export class GoneError extends BaseError {
  override name = 'GoneError'
  constructor(code: string, message: string) {
    super(410, code, message)
  }
}

/** 503: a dependency this request needs (the chain) is not available. */
export class UnavailableError extends BaseError {
  override name = 'UnavailableError'
  constructor(code: string, message: string, options: { retryAfterSeconds?: number; cause?: unknown } = {}) {
    super(503, code, message, options)
  }
}
