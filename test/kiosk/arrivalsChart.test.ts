import { describe, expect, test } from 'vitest'
import { arrivalBars, BUCKET_MS, niceMax } from '../../src/kiosk/web/client/chart.js'

describe('the arrivals chart (staff view)', () => {
  test('a 5-minute bucket the gateway leaves out is drawn as 0, so the time axis stays even', () => {
    const t0 = Date.parse('2026-11-27T10:00:00Z')
    const bars = arrivalBars([
      { at: new Date(t0 + 3 * BUCKET_MS).toISOString(), count: 2 },
      { at: new Date(t0).toISOString(), count: 3 },
    ])
    expect(bars.map((b) => b.count)).toEqual([3, 0, 0, 2])
    expect(bars.map((b) => b.at - t0)).toEqual([0, 1, 2, 3].map((i) => i * BUCKET_MS))
    expect(arrivalBars([])).toEqual([])
  })

  test('the y axis ends on a round number at or above the highest bar', () => {
    expect([0, 1, 2, 3, 7, 11, 21, 26, 99, 140].map(niceMax)).toEqual([1, 1, 2, 5, 10, 20, 25, 50, 100, 200])
  })
})
