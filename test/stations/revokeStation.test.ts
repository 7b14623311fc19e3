import { expect, test } from 'vitest'
import { authenticateStation, createStation, revokeStation } from '../../src/stations/stations.js'
import { createBackendGateway, seedTeam } from '../helpers/gateway.js'

test('a whole token must match its hash: a wrong token sharing the prefix revokes nothing; the prefix or the real token does', async () => {
  const gw = await createBackendGateway()
  try {
    const { teamId } = await seedTeam(gw, { name: 'Revokers' })
    const station = await createStation(gw.store, { teamId, now: 1 })
    const other = await createStation(gw.store, { teamId, now: 1 })
    const last = station.token.at(-1) === 'A' ? 'B' : 'A'
    const wrong = station.token.slice(0, -1) + last

    expect(await revokeStation(gw.store, { tokenOrPrefix: wrong, now: 2 })).toBe(0)
    expect((await authenticateStation(gw.store, station.token)).id).toBe(station.stationId)

    expect(await revokeStation(gw.store, { tokenOrPrefix: station.token, now: 3 })).toBe(1)
    await expect(authenticateStation(gw.store, station.token)).rejects.toThrow(/revoked/)

    expect(await revokeStation(gw.store, { tokenOrPrefix: other.prefix, now: 4 })).toBe(1)
    await expect(authenticateStation(gw.store, other.token)).rejects.toThrow(/revoked/)
  } finally {
    await gw.close()
  }
})
