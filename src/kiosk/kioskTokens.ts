import crypto from 'node:crypto'
import type { KioskTokenRow } from '../db/kioskTokens.js'
import type { StationRow } from '../db/stations.js'
import type { Store, Repositories } from '../db/store.js'
import { BadRequestError, NotFoundError, UnauthorizedError } from '../errors.js'
import { hashStationToken } from '../auth/stationTokens.js'

/** Stored in the clear to tell a station's kiosk tokens apart (`tgk_` and 6 random characters). */
const PREFIX_LENGTH = 10
/**
 * "Last seen" is kept to the minute: an open kiosk checks its token every second, and writing
 * each check would put a kiosk's every second in the write queue for nothing anyone reads.
 */
export const KIOSK_SEEN_RESOLUTION_MS = 60_000

/**
 * Creates a kiosk page token for a station: `tgk_` + 32 characters, returned once, stored as its
 * SHA-256 (like station tokens). It only lets a page follow the station's feed and ask for a staff
 * session: the browser never holds an API key, a station token or a ref id.
 *
 * @throws NotFoundError station_not_found (unknown or revoked)
 */
export function createKioskToken(store: Store, p: { stationId: number; now: number }): Promise<{ token: string; station: StationRow }> {
  return store.tx(async (tx) => {
    const station = await tx.stations.get(p.stationId)
    if (!station || station.revokedAt !== null) throw new NotFoundError('station_not_found', `No active station with id ${p.stationId}`)
    const token = `tgk_${crypto.randomBytes(24).toString('base64url')}`
    await tx.kioskTokens.insert({ stationId: station.id, prefix: token.slice(0, PREFIX_LENGTH), hash: hashStationToken(token), now: p.now })
    return { token, station }
  })
}

/**
 * The station of a kiosk token (the `x-kiosk-token` header, or the socket's `hello`). With
 * `seenAt`, the token's "last seen" moves to it (at most once a minute: KIOSK_SEEN_RESOLUTION_MS).
 *
 * @throws UnauthorizedError kiosk_token_missing / invalid_kiosk_token
 * @example
 * const station = authenticateKiosk(store, hello.token, { seenAt: now() })
 */
export async function authenticateKiosk(store: Repositories, token: string | undefined, opts: { seenAt?: number } = {}): Promise<StationRow> {
  if (!token) throw new UnauthorizedError('kiosk_token_missing', 'This needs a kiosk token (the x-kiosk-token header; `tapgate station kiosk-url` makes one)')
  const row = await store.kioskTokens.findActiveByHash(hashStationToken(token))
  const station = row && await store.stations.get(row.stationId)
  // A revoked station's kiosks stop with it; a revoked token stops alone.
  if (!row || !station || station.revokedAt !== null) throw new UnauthorizedError('invalid_kiosk_token', 'The kiosk token is unknown or has been revoked')
  const { seenAt } = opts
  if (seenAt !== undefined && (row.lastSeenAt === null || seenAt - row.lastSeenAt >= KIOSK_SEEN_RESOLUTION_MS)) await store.kioskTokens.markSeen(row.id, seenAt)
  return station
}

/**
 * A station's kiosk tokens, revoked ones included: prefix and times, never a token.
 *
 * @throws NotFoundError station_not_found
 * @example
 * listKioskTokens(store, { stationId: 3 }) // [{ prefix: 'tgk_AbCdEf', createdAt, lastSeenAt, revokedAt: null }]
 */
export async function listKioskTokens(store: Repositories, p: { stationId: number }): Promise<KioskTokenRow[]> {
  if (!await store.stations.get(p.stationId)) throw new NotFoundError('station_not_found', `No station with id ${p.stationId}`)
  return store.kioskTokens.listByStation(p.stationId)
}

/**
 * Revokes one kiosk token of a station, by the start of its prefix (as listed) or the whole token
 * (which must be the token itself, as for station tokens). Its open pages close within a second:
 * every kiosk socket checks its token again each second (routes/kioskSocket.ts), as it does for a
 * revoked station. The station and its other kiosks go on.
 *
 * @throws NotFoundError station_not_found / kiosk_token_not_found (no active token of the station matches)
 * @throws BadRequestError kiosk_token_prefix_ambiguous (more than one active token starts with it)
 * @example
 * revokeKioskToken(store, { stationId: 3, tokenOrPrefix: 'tgk_AbCdEf', now: Date.now() })
 */
export function revokeKioskToken(store: Store, p: { stationId: number; tokenOrPrefix: string; now: number }): Promise<KioskTokenRow> {
  return store.tx(async (tx) => {
    const active = (await listKioskTokens(tx, p)).filter((k) => k.revokedAt === null)
    const given = p.tokenOrPrefix
    const whole = given.length > PREFIX_LENGTH
    // A whole token must match its own hash: a mistyped one sharing a real one's prefix revokes nothing.
    const wholeId = whole ? (await tx.kioskTokens.findByHash(hashStationToken(given)))?.id : undefined
    const matches = active.filter((k) => (whole ? k.id === wholeId : k.prefix.startsWith(given)))
    const shown = whole ? `that token (prefix ${given.slice(0, PREFIX_LENGTH)})` : `the prefix ${given}`
    if (matches.length === 0) throw new NotFoundError('kiosk_token_not_found', `No active kiosk token of station ${p.stationId} has ${shown} (\`station kiosk-tokens --station ${p.stationId}\` lists them)`)
    if (matches.length > 1)
      throw new BadRequestError('kiosk_token_prefix_ambiguous', `${matches.length} active kiosk tokens of station ${p.stationId} start with ${given} (${matches.map((k) => k.prefix).join(', ')}): give more of it`)
    const token = matches[0]!
    await tx.kioskTokens.revoke(token.id, p.now)
    return { ...token, revokedAt: p.now }
  })
}
