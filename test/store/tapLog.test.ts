import { expect, it } from 'vitest'
import type { TapLogInsert } from '../../src/db/tapLog.js'
import { describeStores } from '../helpers/stores.js'

describeStores('tapLog', ({ store }) => {
  const tap = (over: Partial<TapLogInsert>): TapLogInsert => ({
    at: 1_700_000_000_000, source: 'station', chipUid: '04AA', teamId: 1, accepted: true, authenticated: true, reason: 'ok', counter: 7, refId: 'r1', detail: null, ...over,
  })
  const row = (id: number, t: TapLogInsert) => ({ id, ...t, accepted: t.accepted ? 1 : 0, authenticated: t.authenticated ? 1 : 0, stationId: t.stationId ?? null })

  it('inserts rows and lists them newest first, filtered by team, refusals, chip and limit', async () => {
    const t1 = tap({})
    const t2 = tap({ at: 2, chipUid: null, teamId: null, accepted: false, authenticated: false, reason: 'unknown_chip', counter: null, refId: null, detail: 'no such chip' })
    const t3 = tap({ at: 3, teamId: 2, accepted: false, reason: 'counter_replay', refId: null })
    const t4 = tap({ at: 4, chipUid: '04BB', refId: 'r4' })
    const ids = [await store().tapLog.insert(t1), await store().tapLog.insert(t2), await store().tapLog.insert(t3), await store().tapLog.insert(t4)]
    expect(ids).toEqual([ids[0], ids[0]! + 1, ids[0]! + 2, ids[0]! + 3])
    const [r1, r2, r3, r4] = [row(ids[0]!, t1), row(ids[1]!, t2), row(ids[2]!, t3), row(ids[3]!, t4)]
    expect(await store().tapLog.recent()).toEqual([r4, r3, r2, r1])
    expect(await store().tapLog.recent(2)).toEqual([r4, r3])
    expect(await store().tapLog.byChip('04AA')).toEqual([r3, r1])
    expect(await store().tapLog.byChip('04AA', 1)).toEqual([r3])
    expect(await store().tapLog.byChip('nope')).toEqual([])
    expect(await store().tapLog.list({ teamId: null, refusedOnly: false, limit: 10 })).toEqual([r4, r3, r2, r1])
    expect(await store().tapLog.list({ teamId: null, refusedOnly: true, limit: 10 })).toEqual([r3, r2])
    expect(await store().tapLog.list({ teamId: 1, refusedOnly: false, limit: 10 })).toEqual([r4, r1])
    expect(await store().tapLog.list({ teamId: 2, refusedOnly: true, limit: 10 })).toEqual([r3])
    expect(await store().tapLog.list({ teamId: 1, refusedOnly: true, limit: 10 })).toEqual([])
    expect(await store().tapLog.list({ teamId: null, refusedOnly: false, limit: 1 })).toEqual([r4])
  })
})
