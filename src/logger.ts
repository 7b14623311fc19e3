import type { FastifyServerOptions } from 'fastify'

// Ref ids, OTP codes and claim link tokens (/c/<token>) travel in the segment after these, and
// each is a credential on its own: a log line must not carry them.
const secretSegments = new Set(['refs', 'otps', 'c'])

const decoded = (url: string): string => {
  try {
    return decodeURI(url)
  } catch {
    return url
  }
}

/** Percent-decoding that never throws: runs of %XX as UTF-8 (bad bytes become U+FFFD), %2F included. */
const decodeOnce = (text: string): string =>
  text.replace(/(?:%[0-9a-f]{2})+/gi, (run) => Buffer.from(run.replace(/%/g, ''), 'hex').toString('utf8'))

/** Rounds of decoding before a path counts as hostile (`%252F` is two; real clients need one). */
const MAX_DECODE_ROUNDS = 8

/**
 * The path's segments as any server on the way might read them: decoded until nothing is left to
 * decode, split on `/`, `\` and a decoded `?` or `#`, empty and `.` segments dropped.
 * @returns null when the path is still encoded after MAX_DECODE_ROUNDS
 */
function pathSegments(path: string): string[] | null {
  let plain = path
  for (let round = 0; plain.includes('%'); round++) {
    const next = decodeOnce(plain)
    if (next === plain) break
    if (round === MAX_DECODE_ROUNDS) return null
    plain = next
  }
  return plain.split(/[/\\?#]/).filter((segment) => segment !== '' && segment !== '.')
}

/** A segment as a lenient router compares it: no `;params`, no trailing dots or blanks, any case. */
const nameOf = (segment: string): string =>
  segment
    .split(';')[0]!
    .replace(/[.\s]+$/, '')
    .trim()
    .toLowerCase()

/** `..` resolved; each kept segment's index in `segments`. */
function resolvedIndexes(segments: string[]): number[] {
  const kept: number[] = []
  segments.forEach((segment, i) => (segment === '..' ? kept.pop() : kept.push(i)))
  return kept
}

/** Indexes (into `segments`) of the segments that follow a refs/otps segment, read as given or with `..` resolved. */
function secretIndexes(segments: string[]): Set<number> {
  const secret = new Set<number>()
  const mark = (order: number[]) =>
    order.forEach((index, k) => {
      if (secretSegments.has(nameOf(segments[index]!)) && k + 1 < order.length) secret.add(order[k + 1]!)
    })
  mark(segments.map((_, i) => i))
  mark(resolvedIndexes(segments))
  return secret
}

// Query parameters whose value is a guest's name, email or ticket code as staff typed it (the
// attendee searches: GET /events/:id/attendees?q=, GET /kiosk/staff/attendees?q=). Redacted on
// every path: no other route takes them, and a path match would have to follow the router's
// leniency as the refs/otps one does.
const personalParams = new Set(['q'])

/**
 * The query (and fragment) with each personal parameter's value replaced. A name is compared as
 * the query parser reads it (percent-decoded, `+` a space) and in any case, so `%71=` or `Q=` keeps
 * nothing either; the other pairs are left as they came.
 */
function redactQuery(rest: string): string {
  if (!rest.startsWith('?')) return rest
  const hash = rest.indexOf('#')
  const query = hash === -1 ? rest.slice(1) : rest.slice(1, hash)
  const fragment = hash === -1 ? '' : rest.slice(hash)
  const pairs = query.split('&').map((pair) => {
    const eq = pair.indexOf('=')
    const name = eq === -1 ? pair : pair.slice(0, eq)
    return personalParams.has(decodeOnce(name.replace(/\+/g, ' ')).trim().toLowerCase()) ? `${name}=[redacted]` : pair
  })
  return `?${pairs.join('&')}${fragment}`
}

let tapNamesCache: { tapPath: string; names: string[] } | undefined
/** The configured tap path's segment names (one tap path per process: computed once). */
function tapNamesOf(tapPath: string): string[] {
  if (tapNamesCache?.tapPath !== tapPath) tapNamesCache = { tapPath, names: (pathSegments(tapPath) ?? []).map(nameOf) }
  return tapNamesCache.names
}

const startsWithPath = (names: string[], prefix: string[]) => prefix.length <= names.length && prefix.every((name, i) => names[i] === name)

// GET /chips/find takes a tap URL's e and c in its query: unspent until the find runs, like a tap URL.
const CHIP_FIND = ['chips', 'find']

/**
 * The URL as it may appear in a log line. Below the tap path everything is
 * redacted: a tap URL refused for load (429) or a missing key (503) is still
 * unspent, so a log reader could replay it. Matching is on the path as any
 * router or proxy might normalise it (`/otps//…`, `/otps%2F…`, `/ref%73/…`,
 * `/otps./…`, `/x/../otps/…`, `/OTPS/…`): a lenient one upstream could serve
 * a code that a literal match here would leave in clear. A path that names a
 * secret is logged normalised, each secret segment replaced. /chips/find's query
 * (a tap URL's e and c) is redacted as a tap URL is. A guest search's
 * term (`q`) is replaced in the query of any path.
 */
export const redactUrl = (url: string, tapPath = '/tap'): string => {
  const cut = url.search(/[?#]/)
  const path = cut === -1 ? url : url.slice(0, cut)
  const rest = redactQuery(cut === -1 ? '' : url.slice(cut))
  const segments = pathSegments(path)
  if (segments === null) return '/[redacted]'
  const names = segments.map(nameOf)
  const tapNames = tapNamesOf(tapPath)
  const resolvedNames = resolvedIndexes(segments).map((i) => names[i]!)
  if (startsWithPath(names, tapNames) || startsWithPath(resolvedNames, tapNames)) return `${tapPath}[redacted]`
  if (startsWithPath(names, CHIP_FIND) || startsWithPath(resolvedNames, CHIP_FIND)) return '/chips/find[redacted]'
  if (!names.some((name) => secretSegments.has(name))) return decoded(path + rest)
  const secret = secretIndexes(segments)
  return `/${segments.map((segment, i) => (secret.has(i) ? '[redacted]' : segment)).join('/')}${decoded(rest)}`
}

/**
 * pino options for the gateway. API keys, OTPs and station tokens arrive in headers that the
 * default serializer does not print; redact lists them anyway so a future
 * `headers` field cannot leak them.
 */
export function loggerOptions(level: string, tapPath: string, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  return {
    level,
    ...(stream ? { stream } : {}),
    redact: {
      paths: ['x-service-api-key', 'x-service-code', 'x-iyk-api-key', 'x-iyk-code', 'x-station-token'].flatMap((h) => [`req.headers["${h}"]`, `headers["${h}"]`]),
      censor: '[redacted]',
    },
    serializers: {
      req: (req: { method: string; url: string; ip?: string }) => ({ method: req.method, url: redactUrl(req.url, tapPath), remoteAddress: req.ip }),
    },
  }
}
