import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { firstAcceptedCounters } from '../../../station/fixtures/fixtureCounters.js'
import { FixtureReaderSource } from '../../../station/fixtures/fixtureReader.js'
import type { Fixture } from '../../../station/fixtures/format.js'
import { FixtureRecorder } from '../../../station/fixtures/recorder.js'
import { ReplayCheck, summaryLines, type ReplayedTap } from '../../../station/fixtures/replayCheck.js'
import { GatewayLink } from '../../../station/link/gatewayLink.js'
import type { ReaderSource } from '../../../station/reader.js'
import { Station, type StationLog } from '../../../station/station.js'
import type { Store, Repositories } from '../../db/store.js'
import { authenticateStation } from '../../stations/stations.js'
import { UsageError, type Flags } from '../usage.js'
import { configFrom, text, withStore } from './context.js'

/** An error the CLI prints as its message alone (no stack: nothing in it is a bug). */
function plainError(message: string): Error {
  const error = new Error(message)
  error.stack = message
  return error
}

/** The station's console: one line per event, with the time; to stderr when stdout carries the taps. */
function consoleLog(stream: NodeJS.WritableStream): StationLog {
  const line = (level: string) => (text: string) => {
    const time = new Date().toISOString().slice(11, 19)
    stream.write(`${time} ${level}${text}\n`)
  }
  return { info: line(''), warn: line('warning: '), error: line('error: ') }
}

/** Flags of the replay's check; each needs --replay and --gateway. */
const CHECK_FLAGS = ['no-check', 'json', 'rewind-counters']

/**
 * Moves each fixture chip's last accepted counter back to just below its first accepted counter in
 * the fixture, so the fixture's taps are accepted again. Only the station's team's chips, and only
 * backwards: a chip never tapped, or still below, is left alone.
 */
async function rewindCounters(store: Store, token: string, fixture: Fixture): Promise<{ uid: string; from: number; to: number }[]> {
  let teamId: number
  try {
    teamId = (await authenticateStation(store, token)).teamId
  } catch {
    throw plainError(
      "--rewind-counters: the station token is not an active station of this data dir; it runs on the gateway's machine, with the gateway's data dir (--data-dir or $TAPGATE_DATA_DIR)",
    )
  }
  return store.tx(async (tx) => {
    const rewound: { uid: string; from: number; to: number }[] = []
    for (const [uid, first] of firstAcceptedCounters(fixture)) {
      const chip = await tx.chips.get(uid)
      if (!chip || chip.teamId !== teamId || chip.lastCounter === null || chip.lastCounter < first || first < 1) continue
      await tx.chips.setLastCounter(uid, first - 1)
      rewound.push({ uid, from: chip.lastCounter, to: first - 1 })
    }
    return rewound
  })
}

/** One replayed tap as a JSON line: the whole verdict (ref id included, for scripts), and the check's result. */
function tapJson(t: ReplayedTap, checked: boolean) {
  return {
    type: 'tap',
    line: t.line,
    readerName: t.readerName,
    rfUid: t.tap?.rfUid ?? null,
    verdict: t.verdict,
    ...(t.got.error === undefined ? {} : { error: t.got.error }),
    ...(checked ? { expected: t.expected, match: t.match } : {}),
  }
}

/**
 * `tapgate station [--gateway URL --token T] [--reader S] [--record FILE] [--queue-dir D]`
 * or `tapgate station --replay FILE [--gateway URL --token T] [--no-check] [--json] [--rewind-counters]`.
 * Runs until SIGINT/SIGTERM (exit 0), or, for a replay, until every tap was answered. A replay to a
 * gateway compares each verdict with the fixture's and exits 1 when any differs (or was never
 * answered), unless --no-check. A refused token ends the run with exit code 1.
 */
export async function run(flags: Flags): Promise<void> {
  const replay = text(flags, 'replay')
  const gateway = text(flags, 'gateway')
  const token = text(flags, 'token') ?? (process.env.TAPGATE_STATION_TOKEN?.trim() || undefined)
  const readerFilter = text(flags, 'reader')
  const recordTo = text(flags, 'record')
  for (const flag of ['team', 'name', 'prefix', 'station', 'mode', 'event', 'base-url', 'revoke'])
    if (flags[flag] !== undefined) throw new UsageError(`--${flag} is for station create/list/revoke/set/kiosk-url/staff-pin/kiosk-tokens`)
  if (replay !== undefined && readerFilter !== undefined) throw new UsageError('--reader picks live readers; --replay plays a file instead')
  if (replay === undefined && gateway === undefined)
    throw new UsageError('a station on live readers needs --gateway URL and --token T (or $TAPGATE_STATION_TOKEN); or give --replay FILE')
  if (gateway !== undefined && !token) throw new UsageError('--gateway needs --token (or $TAPGATE_STATION_TOKEN): create one with `tapgate station create --team ID`')
  if (gateway === undefined && text(flags, 'token') !== undefined) throw new UsageError('--token needs --gateway URL')
  if (gateway !== undefined && !/^(https?|wss?):\/\//.test(gateway)) throw new UsageError(`--gateway takes the gateway's URL, e.g. http://127.0.0.1:8787 (got ${gateway})`)
  for (const flag of CHECK_FLAGS)
    if (flags[flag] !== undefined && (replay === undefined || gateway === undefined))
      throw new UsageError(`--${flag} is for a replay to a gateway (--replay FILE --gateway URL --token T)`)
  const json = flags.json === true
  const checked = replay !== undefined && gateway !== undefined && flags['no-check'] !== true

  // Without a gateway, the taps go to stdout as JSON lines and the log to stderr; so with --json.
  const log = consoleLog(gateway === undefined || json ? process.stderr : process.stdout)
  const out = (line: string) => process.stdout.write(`${line}\n`)
  let source: ReaderSource
  let replaySource: FixtureReaderSource | undefined
  if (replay !== undefined) {
    try {
      replaySource = FixtureReaderSource.fromFile(replay)
    } catch (error) {
      throw plainError(`cannot replay ${replay}: ${(error as Error).message}`)
    }
    source = replaySource
  } else {
    const { openPcscReaders } = await import('../../../station/pcsc/pcscReaders.js')
    source = await openPcscReaders({ readerFilter, log })
  }
  const fixture = replaySource?.reader.fixture
  if (fixture && token && flags['rewind-counters'] === true) {
    const rewound = await withStore(flags, (store) => rewindCounters(store, token, fixture))
    log.info(
      rewound.length === 0
        ? 'rewind: no chip of this fixture had tapped past its first recorded counter'
        : `rewind: ${rewound.map((r) => `${r.uid} ${r.from} → ${r.to}`).join(', ')}`,
    )
  }

  // A checked replay stands alone: its taps wait in a queue of its own, never sent by a later run
  // (they would spend counters the next replay expects), and never one left by an earlier run.
  const queueFlag = text(flags, 'queue-dir')
  const ownQueue = checked && queueFlag === undefined ? fs.mkdtempSync(path.join(os.tmpdir(), 'tapgate-replay-')) : undefined
  const link =
    gateway !== undefined && token
      ? new GatewayLink({ gateway, token, queueDir: path.resolve(ownQueue ?? queueFlag ?? path.join(configFrom(flags).dataDir, 'station-queue')), log })
      : null
  const recorder = recordTo === undefined ? undefined : FixtureRecorder.open(recordTo, { note: replay ? `tapgate station --replay ${replay}` : 'tapgate station' })
  const station = new Station({ source, sink: link, log, recorder })
  if (!link) station.on('read', (tap) => out(JSON.stringify(tap)))
  const check = fixture && link ? new ReplayCheck(fixture) : undefined
  const print = (taps: ReplayedTap[]) => {
    if (json) for (const t of taps) out(JSON.stringify(tapJson(t, checked)))
  }
  if (check) station.on('outcome', (event) => print(check.add(event)))

  let stop = () => {}
  const code = await new Promise<number>((resolve) => {
    stop = () => resolve(0)
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    link?.on('status', (status) => status === 'unauthorized' && resolve(1))
    // A replay ends once every tap was played and answered.
    void replaySource?.reader.done.then(() => station.idle()).then(() => resolve(0))
  })
  process.off('SIGINT', stop)
  process.off('SIGTERM', stop)
  await station.close()
  let differed = false
  if (check && replay !== undefined) {
    const { rest, summary } = check.finish()
    print(rest)
    differed = summary.differed > 0
    if (json) out(JSON.stringify({ type: 'summary', fixture: replay, checked, ...summary }))
    else if (checked) for (const line of summaryLines(replay, summary)) out(line)
    else out(`replay ${replay}: ${summary.taps} taps fed, not checked (--no-check)`)
  }
  if (ownQueue) {
    if (link && link.queued > 0) log.info(`${link.queued} taps were not answered; a checked replay does not keep them for a later run`)
    fs.rmSync(ownQueue, { recursive: true, force: true })
  } else if (link && link.queued > 0) log.info(`${link.queued} taps wait in the queue dir for the next run`)
  process.exitCode = code === 0 && checked && differed ? 1 : code
}
