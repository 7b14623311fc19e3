import fs from 'node:fs'
import path from 'node:path'
import { Writable } from 'node:stream'
import { afterEach, describe, expect, test } from 'vitest'
import { FixtureReaderSource } from '../../station/fixtures/fixtureReader.js'
import { startInProcessStation } from '../../station/inProcessStation.js'
import type { StationEvents } from '../../station/station.js'
import { createTestGateway, seedTeam, type TeamSeed, type TestGateway } from '../helpers/gateway.js'
import { CI, nfcPcscProblem } from '../helpers/pcscStack.js'
import { repoRoot } from '../helpers/processes.js'

const tapsDir = path.join(repoRoot, 'fixtures/taps')
const seed = JSON.parse(fs.readFileSync(path.join(tapsDir, 'seed.json'), 'utf8')) as { teams: [TeamSeed] }

let gw: TestGateway | undefined
afterEach(async () => {
  await gw?.close()
  gw = undefined
})

async function gateway(config: Record<string, unknown> = {}) {
  const chunks: string[] = []
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      chunks.push(chunk.toString())
      callback()
    },
  })
  gw = await createTestGateway({ config: { logLevel: 'info', ...config }, logStream: stream })
  const lines = () =>
    chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { msg: string; station?: string; teamId?: number })
  return { gw, lines }
}

const stationLines = (lines: { msg: string }[]) => lines.filter((l) => l.msg.includes('station'))

/** The gateway's own PC/SC path, with no reader source passed in: what `npm start` does. */
async function startWithoutPcscd(gw: TestGateway) {
  const saved = process.env.PCSCLITE_CSOCK_NAME
  process.env.PCSCLITE_CSOCK_NAME = '/nonexistent/pcscd.comm'
  try {
    return await startInProcessStation({ app: gw.app, store: gw.store, config: gw.config })
  } finally {
    if (saved === undefined) delete process.env.PCSCLITE_CSOCK_NAME
    else process.env.PCSCLITE_CSOCK_NAME = saved
  }
}

// A newcomer's machine may have no PC/SC stack (nfc-pcsc is optional and needs libpcsclite-dev to
// build): each state has its own case. Under CI the stack is required, so the pcscd case always runs.
const nfcPcsc = await nfcPcscProblem()

describe('the in-process station (npm start)', () => {
  test.skipIf(nfcPcsc !== null && !CI)('without pcscd: one info line naming what to install, and no station', async () => {
    const { gw, lines } = await gateway()
    seedTeam(gw, seed.teams[0])
    expect(await startWithoutPcscd(gw)).toBeNull()
    expect(stationLines(lines())).toEqual([
      expect.objectContaining({
        level: 30,
        msg: expect.stringMatching(/^in-process station off: pcscd is not running \(nothing answers at \/nonexistent\/pcscd\.comm\): start it with .*apt-get install pcscd/),
      }),
    ])
  })

  test.skipIf(nfcPcsc === null)('without nfc-pcsc (no libpcsclite-dev when it was installed): one info line naming what to install, and no station', async () => {
    const { gw, lines } = await gateway()
    seedTeam(gw, seed.teams[0])
    expect(await startWithoutPcscd(gw)).toBeNull()
    expect(stationLines(lines())).toEqual([
      expect.objectContaining({
        level: 30,
        msg: expect.stringMatching(/^in-process station off: nfc-pcsc is not installed or did not build \(.*\): install the PC\/SC stack: `apt-get install pcscd libpcsclite-dev`, then `npm install`/),
      }),
    ])
  })

  test('off by config, and with no team: one line each', async () => {
    const { gw, lines } = await gateway({ station: { enabled: false } })
    expect(await startInProcessStation({ app: gw.app, store: gw.store, config: gw.config })).toBeNull()
    expect(await startInProcessStation({ app: gw.app, store: gw.store, config: { ...gw.config, station: undefined } })).toBeNull()
    expect(stationLines(lines()).map((l) => l.msg)).toEqual([
      'in-process station off: station.enabled is false (TAPGATE_STATION)',
      'in-process station off: no team to serve yet (import one, or start with the demo)',
    ])
  })

  test('serves the demo team (before any other team), verifies in process, and logs refs shortened', async () => {
    const { gw, lines } = await gateway()
    seedTeam(gw, { name: 'Another team' })
    const { teamId } = seedTeam(gw, { ...seed.teams[0], name: 'Demo team' })
    const source = FixtureReaderSource.fromFile(path.join(tapsDir, 'valid-ntag424.jsonl'))
    const started = await startInProcessStation({ app: gw.app, store: gw.store, config: gw.config, openReaders: async () => source })
    expect(started).not.toBeNull()
    expect(started!.teamId).toBe(teamId)
    const verdicts: StationEvents['verdict'][0][] = []
    started!.station.on('verdict', (v) => verdicts.push(v))
    await source.reader.done
    await started!.station.idle()
    await started!.close()
    expect(verdicts.map((v) => v.verdict.accepted && v.verdict.counter)).toEqual([42, 43, 1, 7, 44])
    const own = lines().filter((l) => l.station === 'in-process')
    const accepted = own.filter((l) => l.msg.includes(' accepted '))
    expect(accepted).toHaveLength(5)
    for (const [i, line] of accepted.entries()) {
      const refId = (verdicts[i]!.verdict as { refId: string }).refId
      expect(line.msg).toContain(`ref ${refId.slice(0, 4)}…`)
    }
    // No full ref id anywhere in the gateway's log.
    const all = JSON.stringify(lines())
    for (const v of verdicts) expect(all).not.toContain((v.verdict as { refId: string }).refId)
    expect(gw.store.tapLog.recent(10).every((r) => r.source === 'station' && r.teamId === teamId)).toBe(true)
  })
})
