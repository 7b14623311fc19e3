import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { FixtureReader, FixtureReaderSource } from '../../station/fixtures/fixtureReader.js'
import { readFixtureFile, type Fixture, type FixtureExpect } from '../../station/fixtures/format.js'
import { FixtureRecorder } from '../../station/fixtures/recorder.js'
import { createInProcessSink } from '../../station/link/inProcessSink.js'
import { CardRemovedError } from '../../src/card/cardSession.js'
import { Station, type StationEvents } from '../../station/station.js'
import type { TapVerdict } from '../../station/tap.js'
import { createTestGateway, seedTeam, testDir, type TeamSeed, type TestGateway } from '../helpers/gateway.js'
import { repoRoot } from '../helpers/processes.js'
import { recordFixtures } from '../../fixtures/taps/record.js'

const tapsDir = path.join(repoRoot, 'fixtures/taps')
const seed = JSON.parse(fs.readFileSync(path.join(tapsDir, 'seed.json'), 'utf8')) as { teams: [TeamSeed] }
const fixtureFiles = fs.readdirSync(tapsDir).filter((name) => name.endsWith('.jsonl')).sort()

const quiet = { info: () => {}, warn: () => {}, error: () => {} }

let gw: TestGateway | undefined
afterEach(async () => {
  await gw?.close()
  gw = undefined
})

/** A fresh gateway seeded from fixtures/taps/seed.json, and the in-process sink for its team. */
async function freshGateway() {
  gw = await createTestGateway()
  const { teamId } = await seedTeam(gw, seed.teams[0])
  const { keyring, now } = gw.app.services
  return { gw, sink: createInProcessSink({ store: gw.store, keyring, now, teamId, log: quiet }) }
}

/**
 * Replays a fixture through the station (FixtureReaderSource → Station → sink), re-recording it as it goes.
 * The re-recording holds the outcomes in the order the cards were placed, like the original.
 */
async function replay(fixture: Fixture, name: string) {
  const { sink } = await freshGateway()
  const source = new FixtureReaderSource(new FixtureReader(fixture, { source: name }))
  const rerecorded = path.join(testDir(), 'replay.jsonl')
  const recorder = FixtureRecorder.open(rerecorded)
  const station = new Station({ source, sink, log: quiet, recorder })
  const verdicts: TapVerdict[] = []
  const failures: StationEvents['failed'][0][] = []
  station.on('verdict', ({ verdict }) => verdicts.push(verdict))
  station.on('failed', (failure) => failures.push(failure))
  await source.reader.done
  await station.idle()
  await station.close()
  return { again: readFixtureFile(rerecorded), verdicts, failures }
}

const withoutTiming = (fixture: Fixture) => fixture.taps.map((t) => ({ reader: t.reader, atr: t.atr, exchanges: t.exchanges.map(({ command, response }) => ({ command, response })) }))

describe('committed tap fixtures replay to their recorded verdicts on a fresh gateway', () => {
  test('the fixture set is complete', () => {
    expect(fixtureFiles).toEqual(['card-pulled.jsonl', 'copied-url.jsonl', 'ntag21x.jsonl', 'replayed-tap.jsonl', 'unknown-chip.jsonl', 'valid-ntag424.jsonl'])
  })

  test.each(fixtureFiles)('%s', async (name) => {
    const fixture = readFixtureFile(path.join(tapsDir, name))
    expect(fixture.taps.length).toBeGreaterThan(0)
    const { again, verdicts, failures } = await replay(fixture, name)
    expect(failures).toEqual([])
    // The same outcomes, tap by tap: accepted (uid, counter, mode) or refused with the recorded reason and detail, or no submit.
    expect(again.taps.map((t) => t.expect)).toEqual(fixture.taps.map((t) => t.expect))
    // The station sent exactly the recorded commands and got the recorded answers.
    expect(withoutTiming(again)).toEqual(withoutTiming(fixture))
    // Every accepted tap made a real ref on the gateway.
    const accepted = verdicts.filter((v): v is Extract<TapVerdict, { accepted: true }> => v.accepted)
    expect(accepted).toHaveLength(fixture.taps.filter((t) => t.expect.verdict?.accepted).length)
    for (const verdict of accepted) {
      expect(verdict.refId).toMatch(/^[\w-]{21}$/)
      expect(await gw!.store.refs.get(verdict.refId)).toMatchObject({ chipUid: verdict.uid, source: 'station' })
    }
  })

  test('fixtures/taps/record.ts records the same taps and verdicts today', async () => {
    const outDir = testDir()
    await recordFixtures([], { outDir, say: () => {} })
    expect(fs.readdirSync(outDir).sort()).toEqual(fixtureFiles)
    for (const name of fixtureFiles) {
      const committed = readFixtureFile(path.join(tapsDir, name))
      const fresh = readFixtureFile(path.join(outDir, name))
      expect(fresh.taps.map((t) => t.expect), name).toEqual(committed.taps.map((t) => t.expect))
      expect(fresh.taps.map((t) => t.exchanges.map((e) => e.command)), name).toEqual(committed.taps.map((t) => t.exchanges.map((e) => e.command)))
    }
  })

  test('what the fixtures cover', () => {
    const outcomes = (name: string) => readFixtureFile(path.join(tapsDir, name)).taps.map((t) => outcomeOf(t.expect))
    expect(outcomes('valid-ntag424.jsonl')).toEqual(['accepted aes 42', 'accepted aes 43', 'accepted aes 1', 'accepted lrp 7', 'accepted aes 44'])
    expect(outcomes('replayed-tap.jsonl')).toEqual(['accepted aes 1', 'counter_replay', 'accepted aes 2'])
    expect(outcomes('unknown-chip.jsonl')).toEqual(['unknown_chip'])
    expect(outcomes('copied-url.jsonl')).toEqual(['accepted aes 11', 'uid_mismatch', 'accepted aes 13'])
    expect(outcomes('card-pulled.jsonl')).toEqual(['card_removed', 'accepted aes 2'])
    expect(outcomes('ntag21x.jsonl')).toEqual(['accepted ntag21x 48', 'accepted ntag21x 49', 'accepted ntag21x 50'])
    // The copied URL: the reader saw another chip's UID than the one inside the URL.
    const copied = readFixtureFile(path.join(tapsDir, 'copied-url.jsonl')).taps[1]!
    expect(copied.exchanges[0]!.response).toBe('04C10E0000000A9000')
    expect(copied.expect.verdict).toMatchObject({ reason: 'uid_mismatch', detail: expect.stringContaining('04A1B2C3D4E501') })
  })
})

function outcomeOf(expectation: FixtureExpect): string {
  const v = expectation.verdict
  if (!v) return expectation.error ?? 'none'
  return v.accepted ? `accepted ${v.mode} ${v.counter}` : v.reason
}

describe('FixtureReader', () => {
  const valid = () => readFixtureFile(path.join(tapsDir, 'valid-ntag424.jsonl'))

  test('a command that differs from the recording is a clear error naming the tap and the step', async () => {
    const fixture = valid()
    const errors: Error[] = []
    const reader = new FixtureReader({ ...fixture, taps: fixture.taps.slice(0, 1) }, { source: 'valid-ntag424.jsonl' })
    reader.on('error', (error) => errors.push(error))
    const results: Promise<unknown>[] = []
    reader.on('card', (card) => {
      results.push(
        (async () => {
          await card.transmit(Buffer.from('FFCA000000', 'hex'))
          return card.transmit(Buffer.from('00A4040007D276000085010101', 'hex'))
        })().catch((error: unknown) => error),
      )
    })
    await reader.done
    expect(await results[0]).toMatchObject({
      name: 'FixtureMismatchError',
      message: 'valid-ntag424.jsonl tap 1, step 2: the recording has command 00A4040007D276000085010100, the station sent 00A4040007D276000085010101',
    })
    expect(errors.map((e) => e.message)).toEqual([expect.stringContaining('tap 1, step 2')])
  })

  test('a recording that ends early (card pulled) answers the next command with CardRemovedError', async () => {
    const pulled = readFixtureFile(path.join(tapsDir, 'card-pulled.jsonl'))
    const tap = pulled.taps[0]!
    expect(tap.expect.error).toBe('card_removed')
    const reader = new FixtureReader({ ...pulled, taps: [tap] })
    let outcome: unknown
    reader.on('card', (card) => {
      void (async () => {
        for (const exchange of tap.exchanges) expect((await card.transmit(Buffer.from(exchange.command, 'hex'))).toString('hex').toUpperCase()).toBe(exchange.response)
        outcome = await card.transmit(Buffer.from('00B0000230', 'hex')).catch((error: unknown) => error)
      })()
    })
    await reader.done
    expect(outcome).toBeInstanceOf(CardRemovedError)
  })

  test('the station reports a mismatch as a failed read and carries on with the next tap', async () => {
    const fixture = valid()
    // Tap 1's recording answers a different command than the station sends at step 3.
    const broken = structuredClone(fixture)
    broken.taps[0]!.exchanges[2]!.command = '00A4000C02E105'
    const { sink } = await freshGateway()
    const source = new FixtureReaderSource(new FixtureReader(broken, { source: 'broken.jsonl' }))
    const lines: string[] = []
    const log = { info: (l: string) => lines.push(l), warn: (l: string) => lines.push(l), error: (l: string) => lines.push(l) }
    const station = new Station({ source, sink, log })
    const failed: string[] = []
    station.on('failed', ({ error }) => failed.push(error.message))
    await source.reader.done
    await station.idle()
    await station.close()
    expect(failed).toEqual([expect.stringContaining('broken.jsonl tap 1, step 3: the recording has command 00A4000C02E105, the station sent 00A4000C02E104')])
    // Taps 2–5 still went through; tap 1's counter (42) was never spent, so the others are accepted as recorded.
    expect(lines.filter((l) => l.includes('accepted'))).toHaveLength(4)
  })
})

describe('the station with a card pulled mid-read', () => {
  test('logs "card removed during read, tap again" and submits nothing', async () => {
    const pulled = readFixtureFile(path.join(tapsDir, 'card-pulled.jsonl'))
    const { sink } = await freshGateway()
    const submitted: unknown[] = []
    const spy = { submit: (tap: Parameters<typeof sink.submit>[0]) => (submitted.push(tap), sink.submit(tap)), close: () => sink.close() }
    const source = new FixtureReaderSource(new FixtureReader({ ...pulled, taps: pulled.taps.slice(0, 1) }))
    const lines: string[] = []
    const station = new Station({ source, sink: spy, log: { info: (l) => lines.push(l), warn: (l) => lines.push(l), error: (l) => lines.push(l) } })
    await source.reader.done
    await station.idle()
    await station.close()
    expect(lines).toContain('Virtual NTAG 424 reader: card removed during read, tap again')
    expect(submitted).toEqual([])
    expect(await gw!.store.tapLog.recent()).toEqual([])
  })
})
