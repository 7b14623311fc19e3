import type { FastifyInstance } from 'fastify'
import type { Config } from '../src/config.js'
import type { Store } from '../src/db/store.js'
import type { LocalReaders } from '../src/card/localReaders.js'
import { ensureInProcessStation } from '../src/stations/stations.js'
import { createInProcessSink } from './link/inProcessSink.js'
import type { ReaderSource } from './reader.js'
import { Station, type StationLog } from './station.js'

/** The demo fixture's team (fixtures/demo.json): the in-process station's team when it exists. */
const DEMO_TEAM = 'Demo team'

export type InProcessStation = {
  station: Station
  teamId: number
  /** Its station row (in_process = 1): its mode, event and feed. */
  stationId: number
  /** Its readers, to list and to lend to a provisioning run from the console (src/card/localReaders.ts). */
  readers: LocalReaders
  close: () => Promise<void>
}

/**
 * The station `npm start` runs inside the gateway: every local PC/SC reader,
 * verified in process (no token) for the demo team, or else the first team.
 * Never fails the gateway's start: when the station cannot run (turned off,
 * no team, no nfc-pcsc, no pcscd) it logs one info line saying why and
 * returns null.
 *
 * `station.enabled` (TAPGATE_STATION): false turns it off; unset or true
 * starts it when PC/SC is available.
 *
 * @example
 * const station = await startInProcessStation({ app, store, config })
 * await station?.close()
 */
export async function startInProcessStation({
  app,
  store,
  config,
  openReaders,
  onOff,
}: {
  app: FastifyInstance
  store: Store
  config: Config
  /** Default: every PC/SC reader (openPcscReaders); tests pass virtual readers. */
  openReaders?: (log: StationLog) => Promise<ReaderSource>
  /** Told why, when the station does not run (the console says it where it lists the readers). */
  onOff?: (why: string) => void
}): Promise<InProcessStation | null> {
  const off = (why: string) => {
    app.log.info(`in-process station off: ${why}`)
    onOff?.(why)
    return null
  }
  if (config.station?.enabled === false) return off('station.enabled is false (TAPGATE_STATION)')
  const teams = await store.teams.list()
  const team = teams.find((t) => t.name === DEMO_TEAM) ?? teams[0]
  if (!team) return off('no team to serve yet (import one, or start with the demo)')
  const log: StationLog = {
    info: (line) => app.log.info({ station: 'in-process', teamId: team.id }, line),
    warn: (line) => app.log.warn({ station: 'in-process', teamId: team.id }, line),
    error: (line) => app.log.error({ station: 'in-process', teamId: team.id }, line),
  }
  let source: ReaderSource
  try {
    if (openReaders) source = await openReaders(log)
    else {
      // Loaded only now: the gateway starts without nfc-pcsc. It probes pcscd before using it
      // (PcscUnavailableError, with what to install or start, when it cannot).
      const { openPcscReaders } = await import('./pcsc/pcscReaders.js')
      source = await openPcscReaders({ log })
    }
  } catch (error) {
    return off((error as Error).message)
  }
  const { keyring, now, chains, config: appConfig, media } = app.services
  // Made on the first start, found on the next: a row gives the gateway's own readers a mode and a feed.
  const { id: stationId } = await ensureInProcessStation(store, { teamId: team.id, now: now() })
  const sink = createInProcessSink({ store, keyring, now, teamId: team.id, stationId, chains, config: appConfig, media, log: app.log })
  // Refs are bearer secrets: the gateway's log gets their first characters only.
  const station = new Station({ source, sink, log, redactRefs: true })
  app.log.info({ teamId: team.id, stationId }, `in-process station on: ${openReaders ? 'its readers' : 'every PC/SC reader'}, taps verified for team "${team.name}"`)
  const readers: LocalReaders = { teamId: team.id, readers: () => station.readerCards(), borrow: (onCard) => station.borrow(onCard) }
  return { station, teamId: team.id, stationId, readers, close: () => station.close() }
}
