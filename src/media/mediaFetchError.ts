export type MediaFetchErrorCode =
  | 'http_status'
  | 'timeout'
  | 'too_large'
  | 'wrong_type'
  | 'redirects'
  | 'bad_url'
  | 'network'
  | 'aborted'
  /** The URL (or a redirect) leads to an address that is not public and not in media.allowHosts. */
  | 'refused'

/** Why an image could not be fetched: `message` is the sentence staff see on the media row. */
export class MediaFetchError extends Error {
  override name = 'MediaFetchError'
  constructor(
    readonly code: MediaFetchErrorCode,
    message: string,
  ) {
    super(message)
  }
}
