import type { FastifyInstance } from 'fastify'
import type { Store } from '../db/store.js'
import { FixtureReaderSource } from '../../station/fixtures/fixtureReader.js'
import { ReplayCheck, type ReplayedTap } from '../../station/fixtures/replayCheck.js'
import { createInProcessSink } from '../../station/link/inProcessSink.js'
import { Station } from '../../station/station.js'

export type { ReplayedTap }

const quiet = { info() {}, warn() {}, error() {} }

/**
 * Plays a recorded fixture through a station whose taps go to the team in this process (the path of
 * `tapgate serve`'s own station), as fast as the station reads. Each tap comes back with its fixture
 * line, the gateway's verdict (the ref id whole), what the fixture expected and whether it matched.
 */
export async function replayFixture(p: { app: FastifyInstance; store: Store; teamId: number; now: () => number }, file: string): Promise<ReplayedTap[]> {
  const source = FixtureReaderSource.fromFile(file)
  const { keyring, config, chains, media } = p.app.services
  const sink = createInProcessSink({ store: p.store, keyring, now: p.now, teamId: p.teamId, chains, config, media, log: p.app.log })
  const station = new Station({ source, sink, log: quiet, now: () => new Date(p.now()) })
  const check = new ReplayCheck(source.reader.fixture)
  const played: ReplayedTap[] = []
  station.on('outcome', (event) => played.push(...check.add(event)))
  try {
    await source.reader.done
    await station.idle()
  } finally {
    await station.close()
    await sink.close()
  }
  played.push(...check.finish().rest)
  return played
}
