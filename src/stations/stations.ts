import crypto from 'node:crypto'
import { hashStationToken } from '../auth/stationTokens.js'
import type { StationRow } from '../db/stations.js'
import type { Store, Repositories, Transactional } from '../db/store.js'
import { NotFoundError, UnauthorizedError } from '../errors.js'

/** Enough of the token to tell stations apart in `station list` and to revoke one. */
const PREFIX_LENGTH = 10

export type CreateStationParameters = { teamId: number; name?: string | null; now: number }
export type CreateStationReturnType = { stationId: number; teamId: number; name: string; token: string; prefix: string }

/**
 * Creates a station (a reader kiosk) for a team. Its token is returned once and
 * never stored: only its SHA-256 and a short prefix are kept, like API keys.
 * A station token can submit taps of its team's chips and nothing else.
 *
 * @throws NotFoundError when the team does not exist
 * @example
 * const { token } = createStation(store, { teamId: 1, name: 'front desk', now: Date.now() })
 */
export function createStation(store: Transactional, p: CreateStationParameters): Promise<CreateStationReturnType> {
  return store.tx(async (tx) => {
    if (!await tx.teams.get(p.teamId)) throw new NotFoundError('team_not_found', `No team with id ${p.teamId}`)
    const token = `tgs_${crypto.randomBytes(24).toString('base64url')}`
    const prefix = token.slice(0, PREFIX_LENGTH)
    const name = p.name?.trim() || `station ${(await tx.stations.listByTeam(p.teamId)).length + 1}`
    const stationId = await tx.stations.insert({ teamId: p.teamId, name, prefix, hash: hashStationToken(token), now: p.now })
    return { stationId, teamId: p.teamId, name, token, prefix }
  })
}

/**
 * Resolves an `x-station-token` header to its station.
 *
 * @throws UnauthorizedError when the token is missing, unknown or revoked
 * @example
 * const station = authenticateStation(store, request.headers['x-station-token'])
 */
export async function authenticateStation(store: Repositories, token: string | undefined): Promise<StationRow> {
  if (!token) throw new UnauthorizedError('station_token_missing', 'This endpoint needs a station token in the x-station-token header')
  const station = await store.stations.findActiveByHash(hashStationToken(token))
  if (!station) throw new UnauthorizedError('invalid_station_token', 'The station token is unknown or has been revoked')
  return station
}

/**
 * Revokes the station whose token starts with the prefix, or the station of a
 * whole token. A whole token must match its stored hash: a mistyped token that
 * shares a real one's prefix must not revoke the real one.
 *
 * @returns the number of stations revoked (0 when none active matched)
 * @example
 * revokeStation(store, { tokenOrPrefix: 'tgs_AbCdEf', now: Date.now() })
 */
export function revokeStation(store: Store, p: { tokenOrPrefix: string; now: number }): Promise<number> {
  return store.tx(async (tx) =>
    p.tokenOrPrefix.length > PREFIX_LENGTH
      ? await tx.stations.revokeByHash(hashStationToken(p.tokenOrPrefix), p.now)
      : await tx.stations.revokeByPrefix(p.tokenOrPrefix, p.now),
  )
}

/**
 * Gives an active station a new name (the console). The kiosks show it from their next connect.
 *
 * @throws NotFoundError station_not_found (unknown or revoked)
 * @example
 * renameStation(store, { stationId: 3, name: 'Door B' })
 */
export function renameStation(store: Transactional, p: { stationId: number; name: string }): Promise<StationRow> {
  return store.tx(async (tx) => {
    const station = await tx.stations.get(p.stationId)
    if (!station || station.revokedAt !== null) throw new NotFoundError('station_not_found', `No active station with id ${p.stationId}`)
    await tx.stations.rename(station.id, p.name.trim())
    return (await tx.stations.get(station.id))!
  })
}

/** A team's stations, revoked ones included, without anything secret. */
export function listStations(store: Repositories, p: { teamId: number }): Promise<StationRow[]> {
  return store.stations.listByTeam(p.teamId)
}

/** The in-process station's name in `station list` and the staff view. */
export const IN_PROCESS_STATION_NAME = "this gateway's readers"
/** Shown where a networked station shows its token prefix: this row has no token anyone holds. */
const IN_PROCESS_PREFIX = 'in-process'

/**
 * The station row of the gateway's own readers (`tapgate serve`'s in-process station) for a
 * team, created on its first start: with a row it has a mode, an event and a feed like any
 * station. Its token hash is the hash of random bytes that are thrown away, so no token ever
 * authenticates as it; the in-process station submits its taps in process, with this id.
 *
 * @throws NotFoundError when the team does not exist
 * @example
 * const station = ensureInProcessStation(store, { teamId: 1, now: Date.now() })
 */
export function ensureInProcessStation(store: Store, p: { teamId: number; now: number }): Promise<StationRow> {
  return store.tx(async (tx) => {
    const existing = await tx.stations.findInProcess(p.teamId)
    if (existing) return existing
    if (!await tx.teams.get(p.teamId)) throw new NotFoundError('team_not_found', `No team with id ${p.teamId}`)
    const unheld = crypto.randomBytes(32).toString('base64url')
    const id = await tx.stations.insertInProcess({ teamId: p.teamId, name: IN_PROCESS_STATION_NAME, prefix: IN_PROCESS_PREFIX, hash: hashStationToken(unheld), now: p.now })
    return (await tx.stations.get(id))!
  })
}
