import { EventEmitter } from 'node:events'
import fs from 'node:fs'
import path from 'node:path'
import { Writable } from 'node:stream'
import { afterEach, describe, expect, test } from 'vitest'
import { FixtureReaderSource } from '../../station/fixtures/fixtureReader.js'
import { startInProcessStation } from '../../station/inProcessStation.js'
import type { StationEvents } from '../../station/station.js'
import type { ReaderSource } from '../../station/reader.js'
import { VirtualNtag424 } from '../../station/virtual-card/ntag424.js'
import { createVirtualReader, type VirtualReader } from '../../station/virtual-card/virtualReader.js'
import { ReadersBusyError } from '../../src/card/localReaders.js'
import { until } from '../helpers/until.js'
import { spawn } from 'node:child_process'
import { createTestGateway, seedTeam, type TeamSeed, type TestGateway } from '../helpers/gateway.js'
import { CI, nfcPcscProblem } from '../helpers/pcscStack.js'
import { cliPath, collectOutput, repoRoot, stopChild } from '../helpers/processes.js'

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

/** `npm start`'s station without pcscd: no station, and exactly one info line saying why (matching `why`). */
async function expectOffWithOneLine(why: RegExp) {
  const { gw, lines } = await gateway()
  await seedTeam(gw, seed.teams[0])
  expect(await startWithoutPcscd(gw)).toBeNull()
  expect(stationLines(lines())).toEqual([expect.objectContaining({ level: 30, msg: expect.stringMatching(why) })])
}

// A newcomer's machine may have no PC/SC stack (nfc-pcsc is optional and needs libpcsclite-dev to
// build): each state has its own case. Under CI the stack is required, so the pcscd case always runs.
const nfcPcsc = await nfcPcscProblem()

describe('the in-process station (npm start)', () => {
  test.skipIf(nfcPcsc !== null && !CI)('without pcscd: one info line naming what to install, and no station', async () => {
    await expectOffWithOneLine(/^in-process station off: pcscd is not running \(nothing answers at \/nonexistent\/pcscd\.comm\): start it with .*apt-get install pcscd/)
  })

  test.skipIf(nfcPcsc === null)('without nfc-pcsc (no libpcsclite-dev when it was installed): one info line naming what to install, and no station', async () => {
    await expectOffWithOneLine(/^in-process station off: nfc-pcsc is not installed or did not build \(.*\): install the PC\/SC stack: `apt-get install pcscd libpcsclite-dev`, then `npm install`/)
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
    await seedTeam(gw, { name: 'Another team' })
    const { teamId } = await seedTeam(gw, { ...seed.teams[0], name: 'Demo team' })
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
    expect((await gw.store.tapLog.recent(10)).every((r) => r.source === 'station' && r.teamId === teamId)).toBe(true)
  })
})

describe('the in-process station as a station row (issue 10)', () => {
  const started: { close: () => Promise<void> }[] = []
  /** Before the gateway closes: a station closing reports its readers gone, into the gateway's store. */
  async function closeStations() {
    for (const s of started.splice(0)) await s.close()
    await new Promise((resolve) => setImmediate(resolve))
  }

  async function startOn(gw: TestGateway, fixture: string) {
    const source = FixtureReaderSource.fromFile(path.join(tapsDir, fixture))
    const station = await startInProcessStation({ app: gw.app, store: gw.store, config: gw.config, openReaders: async () => source })
    expect(station).not.toBeNull()
    started.push(station!)
    await source.reader.done
    await station!.station.idle()
    return station!
  }

  const feed = (gw: TestGateway, stationId: number) => gw.store.stationEvents.after(stationId, 0)

  test("has its own station row (in_process = 1, \"this gateway's readers\"), made once per team; its taps carry that station id; station list shows it", async () => {
    const { gw, lines } = await gateway()
    const { teamId } = await seedTeam(gw, { ...seed.teams[0], name: 'Demo team' })
    const first = await startOn(gw, 'valid-ntag424.jsonl')
    const rows = (await gw.store.stations.listByTeam(teamId)).filter((s) => s.inProcess === 1)
    expect(rows).toEqual([expect.objectContaining({ teamId, name: "this gateway's readers", revokedAt: null })])
    expect(first.stationId).toBe(rows[0]!.id)
    const accepted = lines().filter((l) => l.msg === 'station tap accepted') as unknown as { stationId: unknown }[]
    expect(accepted).toHaveLength(5)
    for (const line of accepted) expect(line.stationId).toBe(rows[0]!.id)

    // A second start (the next `tapgate serve`) finds the same row.
    await closeStations()
    const second = await startOn(gw, 'unknown-chip.jsonl')
    expect(second.stationId).toBe(rows[0]!.id)
    await closeStations()
    expect((await gw.store.stations.listByTeam(teamId)).filter((s) => s.inProcess === 1)).toHaveLength(1)

    const child = spawn(process.execPath, [cliPath, 'station', 'list', '--team', String(teamId), '--data-dir', gw.dataDir], { stdio: ['ignore', 'pipe', 'pipe'] })
    const out = collectOutput(child)
    try {
      expect(await out.exited).toEqual({ code: 0, signal: null })
    } finally {
      await stopChild(child)
    }
    expect(JSON.parse(out.stdout())).toEqual(expect.arrayContaining([expect.objectContaining({ stationId: rows[0]!.id, name: "this gateway's readers" })]))
  })

  test('reports its readers to its feed like a networked station: reader present, card present and gone, a card pulled mid-read, the reader gone', async () => {
    const { gw } = await gateway()
    await seedTeam(gw, { ...seed.teams[0], name: 'Demo team' })
    const { stationId } = await startOn(gw, 'card-pulled.jsonl')
    await closeStations()
    const events = await feed(gw, stationId)
    const reader = 'Virtual NTAG 424 reader'
    expect(events.filter((e) => e.kind === 'reader').map((e) => e.data)).toEqual([
      { readers: [reader], cardPresent: false, pcscd: true },
      { readers: [reader], cardPresent: true, pcscd: true },
      { readers: [reader], cardPresent: false, pcscd: true },
      { readers: [reader], cardPresent: true, pcscd: true },
      { readers: [reader], cardPresent: false, pcscd: true },
      // The replay ended: its reader left.
      { readers: [], cardPresent: false, pcscd: true },
    ])
    const pulled = events.filter((e) => e.kind === 'tap' && e.data.state === 'retry')
    expect(pulled.map((e) => e.data)).toEqual([{ state: 'retry', uid: null, readerName: reader }])
  })
})

describe("the in-process station lends its readers (the console's provisioning run, issue 28 part 3)", () => {
  /** The virtual reader as a reader source: the in-process station's own PC/SC path, without pcscd. */
  class OneReader extends EventEmitter implements ReaderSource {
    constructor(private readonly reader: VirtualReader) {
      super()
      // After the station subscribed, as a PC/SC source finds its readers a moment after it opens.
      setImmediate(() => this.emit('reader', reader))
    }
    async close() {
      this.reader.remove()
    }
  }

  test('a card placed while lent goes to the borrower, not the tap path; the give-back waits for it; then cards are taps again', async () => {
    const { gw } = await gateway()
    const { teamId } = await seedTeam(gw, { ...seed.teams[0], name: 'Demo team' })
    const reader = createVirtualReader('Virtual NTAG 424 reader')
    const started = (await startInProcessStation({ app: gw.app, store: gw.store, config: gw.config, openReaders: async () => new OneReader(reader) }))!
    try {
      const { station, readers } = started
      await until('the reader', () => (readers.readers().length > 0 ? true : undefined))
      expect(readers.teamId).toBe(teamId)
      expect(readers.readers()).toEqual([{ name: reader.name, cardPresent: false }])
      const verdicts: string[] = []
      station.on('verdict', ({ tap }) => verdicts.push(tap.rfUid))
      // A chip the gateway does not know: any verdict shows the card took the tap path.
      const card = (uid: string) => new VirtualNtag424({ uid, metaKey: '00'.repeat(16), fileKey: '00'.repeat(16), url: 'https://t.example/t?e={picc}&c={mac}' })
      const tap = async (uid: string) => {
        reader.place(card(uid))
        await station.idle()
        reader.remove()
      }

      await tap('04000000000001')
      expect(verdicts).toEqual(['04000000000001'])

      const borrowed: string[] = []
      let finish!: () => void
      const writing = new Promise<void>((resolve) => (finish = resolve))
      const giveBack = readers.borrow(async (session) => {
        borrowed.push(session.readerName)
        expect(readers.readers()).toEqual([{ name: reader.name, cardPresent: true }])
        await writing
      })
      expect(() => readers.borrow(async () => {})).toThrow(ReadersBusyError)
      reader.place(card('04000000000002'))
      await until('the borrower', () => (borrowed.length > 0 ? true : undefined))
      // Given back mid-card: it resolves only once that card is done.
      let givenBack = false
      const back = giveBack().then(() => (givenBack = true))
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(givenBack).toBe(false)
      finish()
      await back
      reader.remove()
      expect(borrowed).toEqual([reader.name])

      await tap('04000000000003')
      expect(verdicts).toEqual(['04000000000001', '04000000000003'])
      // Two taps logged: the lent card never reached the tap path.
      expect((await gw.store.tapLog.recent(10)).filter((r) => r.source === 'station')).toHaveLength(2)
    } finally {
      await started.close()
    }
  })
})
