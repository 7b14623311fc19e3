import { NotFoundError } from '../../errors.js'
import { createStation, listStations, revokeStation } from '../../stations/stations.js'
import { UsageError, type Flags } from '../usage.js'
import { onePositional, printJson, required, teamIdOf, text, withStore } from './context.js'

export async function run(positionals: string[], flags: Flags) {
  const action = onePositional(positionals, 'action (create, list, revoke)')
  if (action === 'create') {
    const teamId = teamIdOf(flags)
    await withStore(flags, (store) => {
      // The token is shown this once; only its hash is stored.
      const { stationId, token } = createStation(store, { teamId, name: text(flags, 'name') ?? null, now: Date.now() })
      printJson({ stationId, teamId, token })
    })
  } else if (action === 'list') {
    const teamId = teamIdOf(flags)
    await withStore(flags, (store) =>
      printJson(
        listStations(store, { teamId }).map((s) => ({
          stationId: s.id,
          name: s.name,
          prefix: s.prefix,
          createdAt: new Date(s.createdAt).toISOString(),
          revokedAt: s.revokedAt === null ? null : new Date(s.revokedAt).toISOString(),
        })),
      ),
    )
  } else if (action === 'revoke') {
    const prefix = required(flags, 'prefix')
    await withStore(flags, (store) => {
      const revoked = revokeStation(store, { tokenOrPrefix: prefix, now: Date.now() })
      if (revoked === 0) throw new NotFoundError('station_not_found', `No active station token has the prefix ${prefix.slice(0, 10)}`)
      printJson({ revoked })
    })
  } else throw new UsageError(`unknown action "station ${action}" (create, list, revoke)`)
}
