import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { firstAcceptedCounters } from '../../station/fixtures/fixtureCounters.js'
import { readFixtureFile, type RecordedOutcome } from '../../station/fixtures/format.js'
import { ReplayCheck, summaryLines } from '../../station/fixtures/replayCheck.js'
import type { StationTap, TapVerdict } from '../../station/tap.js'
import { verdictLine } from '../../station/verdictLine.js'
import { repoRoot } from '../helpers/processes.js'

const fixture = (name: string) => readFixtureFile(path.join(repoRoot, 'fixtures/taps', name))
const READER = 'Virtual NTAG 424 reader'
const accepted = (uid: string, counter: number, mode: 'aes' | 'lrp' = 'aes'): RecordedOutcome => ({
  verdict: { accepted: true, refId: 'r3f1d0000000000000000', uid, counter, mode },
})
const refused = (reason: string, detail: string): RecordedOutcome => ({ verdict: { accepted: false, reason, message: 'Tap refused', detail } })
const event = (placed: number, outcome: RecordedOutcome) => ({ placed, readerName: READER, tap: null, outcome })

describe('ReplayCheck', () => {
  test('outcomes that finish out of order come out in fixture order, each with its file line', () => {
    const check = new ReplayCheck(fixture('replayed-tap.jsonl'))
    // The clone's refusal (tap 2) is known before tap 1's verdict.
    expect(check.add(event(2, refused('counter_replay', 'counter 1 is not above the last accepted counter 1')))).toEqual([])
    const ready = check.add(event(1, accepted('04A1B2C3D4E501', 1)))
    expect(ready.map((t) => [t.line, t.match])).toEqual([
      [2, true],
      [3, true],
    ])
    expect(check.add(event(3, accepted('04A1B2C3D4E501', 2))).map((t) => t.line)).toEqual([4])
    expect(check.finish()).toEqual({ rest: [], summary: { taps: 3, matched: 3, differed: 0, differences: [] } })
  })

  test('a different verdict, or a tap never answered, is a difference; a read failure is compared by its reason, not its wording', () => {
    const check = new ReplayCheck(fixture('valid-ntag424.jsonl'))
    check.add(event(1, accepted('04A1B2C3D4E501', 42)))
    check.add(event(2, refused('counter_replay', 'counter 43 is not above the last accepted counter 44')))
    check.add(event(3, { error: 'read_failed', message: 'the recording has command 00, the station sent 01' }))
    check.add(event(4, accepted('04A1B2C3D4E503', 7, 'aes')))
    const { rest, summary } = check.finish()
    expect(rest.map((t) => [t.line, t.got])).toEqual([[6, { verdict: null, error: 'not_played' }]])
    expect(summary).toMatchObject({ taps: 5, matched: 1, differed: 4 })
    expect(summaryLines('valid.jsonl', summary)).toEqual([
      'replay valid.jsonl: 5 taps, 1 matched, 4 differed',
      '  line 3: expected accepted 04A1B2C3D4E501 counter 43 (aes); got refused counter_replay: counter 43 is not above the last accepted counter 44',
      '  line 4: expected accepted 04A1B2C3D4E502 counter 1 (aes); got no verdict (read_failed: the recording has command 00, the station sent 01)',
      '  line 5: expected accepted 04A1B2C3D4E503 counter 7 (lrp); got accepted 04A1B2C3D4E503 counter 7 (aes)',
      '  line 6: expected accepted 04A1B2C3D4E501 counter 44 (aes); got no verdict (not_played)',
      `hint: this gateway has seen these counters already (the fixture was replayed here before): replay with --rewind-counters on the gateway's machine (README, "Replaying taps in your CI")`,
    ])

    const pulled = new ReplayCheck(fixture('card-pulled.jsonl'))
    pulled.add(event(1, { error: 'card_removed' }))
    pulled.add(event(2, refused('unknown_chip', "chip 04A1B2C3D4E501 is not registered to this station's team")))
    const lines = summaryLines('card-pulled.jsonl', pulled.finish().summary)
    expect(lines[0]).toBe('replay card-pulled.jsonl: 2 taps, 1 matched, 1 differed')
    expect(lines.at(-1)).toMatch(/^hint: the fixture's chips are not this station's team's: import the fixture's seed/)
  })

  test('a summary lists the first five differences and counts the rest', () => {
    const taps = fixture('valid-ntag424.jsonl').taps
    const long = { ...fixture('valid-ntag424.jsonl'), taps: [...taps, ...taps], lines: undefined }
    const { summary } = new ReplayCheck(long).finish()
    expect(summary).toMatchObject({ taps: 10, matched: 0, differed: 10 })
    expect(summary.differences.map((d) => d.line)).toEqual([2, 3, 4, 5, 6])
    expect(summaryLines('long', summary)).toContain('  … and 5 more')
  })
})

test("firstAcceptedCounters: each chip's lowest accepted counter in the fixture; refused and counterless taps add nothing", () => {
  expect(firstAcceptedCounters(fixture('valid-ntag424.jsonl'))).toEqual(
    new Map([
      ['04A1B2C3D4E501', 42],
      ['04A1B2C3D4E502', 1],
      ['04A1B2C3D4E503', 7],
    ]),
  )
  expect(firstAcceptedCounters(fixture('unknown-chip.jsonl'))).toEqual(new Map())
  expect(firstAcceptedCounters(fixture('replayed-tap.jsonl'))).toEqual(new Map([['04A1B2C3D4E501', 1]]))
})

test('verdictLine shortens the ref id unless asked for the whole one (the console of any station, the queued-earlier lines too)', () => {
  const tap: StationTap = { rfUid: '04A1B2C3D4E501', url: 'http://x/tap', chip: 'ntag424', readerName: READER, readAt: '2026-11-27T00:00:00.000Z' }
  const verdict: TapVerdict = { accepted: true, refId: 'AbCdEfGhIjKlMnOpQrStU', uid: '04A1B2C3D4E501', counter: 3, mode: 'aes' }
  expect(verdictLine(tap, verdict)).toBe('accepted 04A1B2C3D4E501 counter 3 ref AbCd…')
  expect(verdictLine(tap, verdict, { redactRef: false })).toBe('accepted 04A1B2C3D4E501 counter 3 ref AbCdEfGhIjKlMnOpQrStU')
})
