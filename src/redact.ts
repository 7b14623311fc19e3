/*
 * What a secret may look like when it reaches an error, a log line or a status report. A leaf
 * (it imports nothing) beside paths.ts, so the config (root) and src/db/ both use the same one.
 */

const MASK = '****'

/**
 * A database URL (or any text that holds one) with its password masked: `user:****@host`, and every
 * `password=` parameter (`?password=…`, libpq's `password=… host=…`). Works on text that is not a
 * valid URL too, because a URL that fails validation is exactly the one an error message shows.
 *
 * @example
 * redactDatabaseUrl('postgres://tapgate:s3cret@db.lan/tapgate?password=s3cret') // 'postgres://tapgate:****@db.lan/tapgate?password=****'
 */
export function redactDatabaseUrl(text: string): string {
  return (
    text
      // user:password@ after a scheme's //, or at the start of text without one, up to the last @ before
      // the path: a password may hold an unencoded @, # or ? (masking a little too much is the safe side).
      .replace(/((?:^|[a-z][a-z0-9+.-]*:\/\/)[^\s/?#:@]*:)[^\s/]*@/gi, `$1${MASK}@`)
      .replace(/(\bpassword=)[^\s&#]*/gi, `$1${MASK}`)
  )
}

/**
 * What is wrong with a secret that should be `length` hex characters, without any of its characters:
 * its length and how many characters are not hex digits.
 *
 * @example
 * describeHexSecret('zz' + 'a'.repeat(61), 64) // '63 characters (64 wanted), 2 of them not hex digits'
 */
export function describeHexSecret(value: string, length: number): string {
  const notHex = [...value].filter((c) => !/[0-9a-fA-F]/.test(c)).length
  const size = value.length === length ? `${value.length} characters` : `${value.length} characters (${length} wanted)`
  return notHex === 0 ? size : `${size}, ${notHex} of them not hex digits`
}
