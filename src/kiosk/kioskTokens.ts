import crypto from 'node:crypto'
import type { StationRow } from '../db/stations.js'
import type { Store } from '../db/store.js'
import { NotFoundError, UnauthorizedError } from '../errors.js'
import { hashStationToken } from '../stations/stations.js'

/**
 * Creates a kiosk page token for a station: `tgk_` + 32 characters, returned once, stored as its
 * SHA-256 (like station tokens). It only lets a page follow the station's feed and ask for a staff
 * session: the browser never holds an API key, a station token or a ref id.
 *
 * @throws NotFoundError station_not_found (unknown or revoked)
 */
export function createKioskToken(store: Store, p: { stationId: number; now: number }): { token: string; station: StationRow } {
  return store.tx(() => {
    const station = store.stations.get(p.stationId)
    if (!station || station.revokedAt !== null) throw new NotFoundError('station_not_found', `No active station with id ${p.stationId}`)
    const token = `tgk_${crypto.randomBytes(24).toString('base64url')}`
    store.kioskTokens.insert({ stationId: station.id, prefix: token.slice(0, 10), hash: hashStationToken(token), now: p.now })
    return { token, station }
  })
}

/**
 * The station of a kiosk token (the `x-kiosk-token` header, or the socket's `hello`).
 *
 * @throws UnauthorizedError kiosk_token_missing / invalid_kiosk_token
 */
export function authenticateKiosk(store: Store, token: string | undefined): StationRow {
  if (!token) throw new UnauthorizedError('kiosk_token_missing', 'This needs a kiosk token (the x-kiosk-token header; `tapgate station kiosk-url` makes one)')
  const row = store.kioskTokens.findActiveByHash(hashStationToken(token))
  const station = row && store.stations.get(row.stationId)
  // A revoked station's kiosks stop with it.
  if (!station || station.revokedAt !== null) throw new UnauthorizedError('invalid_kiosk_token', 'The kiosk token is unknown or has been revoked')
  return station
}
